"""Temporal tagging: absolute windows for the time expressions in a turn, against the turn's own time.

``resolve(text, anchor)`` finds expressions such as "yesterday", "two weeks ago", "last May", "8 May 2023",
"since 2019" or "last summer" and turns each into a half-open window ``[valid_from, valid_to)`` in the
anchor's time zone. The anchor is the turn's ``occurred_at``, never the wall clock: a conversation
replayed a year later must tag "yesterday" exactly as it did live.

Conventions (chosen so that the same words always give the same window):

- weeks start on Monday; "last week" is the calendar week before the anchor's week, "the past week" is
  the rolling seven days up to and including the anchor's day;
- "N units ago" is the calendar unit that contains ``anchor - N units`` ("two weeks ago" is a whole week);
  vague counts ("a few", "a couple of", "several") widen the window and have granularity "approx";
- "last Friday" is the most recent Friday strictly before the anchor's day, "next Monday" the first one
  strictly after it; a bare weekday or month ("on Tuesday", "in April") is the most recent one on or
  before the anchor unless its sentence is future tense ("will", "going to", "next" ...), then the first
  one on or after it;
- "last May" is the most recent May strictly before the anchor's month, "this June" the anchor year's;
- an explicit day without a year ("May 8th") follows the sentence's tense, and with no tense marker takes
  the occurrence closest to the anchor;
- seasons are northern-hemisphere meteorological: spring Mar-May, summer Jun-Aug, autumn Sep-Nov, winter
  Dec-Feb; "winter 2022" is the winter whose January is in 2022 (Dec 2021 - Feb 2022);
- numeric dates with slashes are US order (05/08/2023 is 8 May) unless the first number cannot be a month;
  dotted ones (08.05.2023) are day-first;
- "recently" / "lately" are the 30 days up to the anchor with low confidence, granularity "approx".

Pure and deterministic: stdlib only, no IO, no wall clock (except ``query_window`` when no ``now`` is
given, which is the retrieval side asking "as of now").
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

__all__ = ["TimeMention", "query_window", "resolve"]


@dataclass(frozen=True, slots=True)
class TimeMention:
    text: str
    start: int
    end: int
    valid_from: datetime
    valid_to: datetime  # exclusive
    granularity: str  # "day", "week", "weekend", "month", "quarter", "season", "year", "decade", "range", ...
    confidence: float = 1.0


# --- vocabulary -------------------------------------------------------------------------------------------

_MONTHS: dict[str, int] = {}
for _i, _name in enumerate(calendar.month_name[1:], start=1):
    _MONTHS[_name.lower()] = _i
    _MONTHS[_name[:3].lower()] = _i
_MONTHS["sept"] = 9
# Longest first so that "june" is not read as "jun" + "e".
_MON_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))

_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_WD_ALT = "|".join(_WEEKDAYS)

_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
}
# Vague counts: (fewest, most) units meant.
_VAGUE = {"couple": (1, 3), "few": (2, 5), "several": (3, 7), "some": (3, 7), "number": (3, 7)}
_NUM_BODY = r"\d{1,3}|a\s+couple(?:\s+of)?|couple\s+of|a\s+few|few|several|some|a\s+number\s+of|" + "|".join(
    sorted(_NUMBER_WORDS, key=len, reverse=True)
)
_NUM = rf"(?P<n>{_NUM_BODY})"
_UNIT = r"(?P<unit>hour|day|week|fortnight|month|year|decade)s?"

_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first month of each

# "Will" capitalised is usually a name, unless it opens a question ("Will I ...?").
_FUTURE = re.compile(
    r"\b(?:(?-i:will|Will(?=\s+(?:I|you|we|they|he|she|it|there)\b))|shall|won't|gonna|(?<!was )(?<!were )going\s+to|"
    r"plan(?:s|ning)?\s+to|intend(?:s|ing)?\s+to|about\s+to|upcoming|next|tomorrow|hope\s+to|looking\s+forward|"
    r"due|scheduled|planned\s+for|booked\s+for)\b|['’]ll\b",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:was|were|did|didn't|had|went|ago|yesterday|last|been|got|came|saw|met|made|took|told|said|"
    r"bought|spent|left|began|ran|ate|wrote|felt|[a-z]{2,}[^e\W]ed)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?\n]")
_WORD = re.compile(r"[a-z]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


# --- date arithmetic (on dates; turned into datetimes in the anchor's zone at the end) ---------------------


def _shift_months(d: date, k: int) -> date:
    y, m = divmod(d.month - 1 + k, 12)
    year, month = d.year + y, m + 1
    return date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


def _month(y: int, m: int) -> tuple[date, date]:
    start = date(y, m, 1)
    return start, _shift_months(start, 1)


def _week(d: date) -> tuple[date, date]:
    start = d - timedelta(days=d.weekday())
    return start, start + timedelta(days=7)


def _year(y: int) -> tuple[date, date]:
    return date(y, 1, 1), date(y + 1, 1, 1)


def _season(name: str, year: int) -> tuple[date, date]:
    """The season named, labelled by the year of its first month (winter: by its January, see module doc)."""
    first = _SEASONS[name]
    start = date(year - 1, 12, 1) if first == 12 else date(year, first, 1)
    return start, _shift_months(start, 3)


def _unit_period(unit: str, d: date) -> tuple[date, date]:
    if unit == "day":
        return d, d + timedelta(days=1)
    if unit == "week":
        return _week(d)
    if unit == "month":
        return _month(d.year, d.month)
    return _year(d.year)


def _shift(unit: str, d: date, n: int) -> date:
    if unit == "day":
        return d + timedelta(days=n)
    if unit == "week":
        return d + timedelta(weeks=n)
    if unit == "month":
        return _shift_months(d, n)
    return _shift_months(d, 12 * n)


def _safe_date(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


# --- matching ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Span:
    start: date
    end: date
    granularity: str
    confidence: float = 1.0


@dataclass(slots=True)
class _Hit:
    start: int
    end: int
    span: _Span


@dataclass(frozen=True, slots=True)
class _Ctx:
    text: str
    anchor: datetime
    today: date

    def raw(self, m: re.Match[str], group: str) -> str:
        """A group as written (rules match a lower-cased copy; case still matters for "May" and "March")."""
        return self.text[m.start(group) : m.end(group)]

    def tense(self, start: int, end: int) -> str:
        """'future', 'past' or 'neutral' for the sentence around text[start:end]."""
        left = max((m.end() for m in _SENTENCE_END.finditer(self.text, 0, start)), default=0)
        right_m = _SENTENCE_END.search(self.text, end)
        sentence = self.text[left : right_m.start() if right_m else len(self.text)]
        if _FUTURE.search(sentence):
            return "future"
        if _PAST.search(sentence):
            return "past"
        return "neutral"


_Handler = Callable[[re.Match[str], _Ctx], _Span | None]


def _count(raw: str) -> tuple[int, int] | None:
    """(fewest, most) for a count; equal for an exact one."""
    raw = " ".join(raw.lower().split())
    if raw.isdigit():
        return int(raw), int(raw)
    if raw in _NUMBER_WORDS:
        return _NUMBER_WORDS[raw], _NUMBER_WORDS[raw]
    for word, bounds in _VAGUE.items():
        if word in raw.split():
            return bounds
    return None


def _unit_and_factor(raw: str) -> tuple[str, int]:
    unit = raw.lower()
    if unit == "fortnight":
        return "week", 2
    if unit == "decade":
        return "year", 10
    return unit, 1


def _month_ok(token: str) -> bool:
    """'may' and 'march' are also a verb: only the capitalised spelling names the month."""
    return token[:1].isupper() or token.lower() not in ("may", "march", "mar")


def _h_ago(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    bounds = _count(m["n"])
    if bounds is None:
        return None
    unit, factor = _unit_and_factor(m["unit"])
    lo, hi = bounds[0] * factor, bounds[1] * factor
    sign = -1 if m["dir"] in ("ago", "back") else 1
    if unit == "hour":
        first = (ctx.anchor + timedelta(hours=sign * hi)).date()
        last = (ctx.anchor + timedelta(hours=sign * lo)).date()
        a, b = min(first, last), max(first, last)
        return _Span(a, b + timedelta(days=1), "day" if lo == hi else "approx", 1.0 if lo == hi else 0.6)
    near, far = _shift(unit, ctx.today, sign * lo), _shift(unit, ctx.today, sign * hi)
    a, b = (far, near) if sign < 0 else (near, far)
    start, end = _unit_period(unit, a)[0], _unit_period(unit, b)[1]
    if lo == hi and factor == 1:
        return _Span(start, end, unit)
    return _Span(start, end, "approx", 0.6)


def _h_in_future(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    # "in three years" in a past sentence is a duration ("grew a lot in three years"), not a date.
    if ctx.tense(m.start(), m.end()) == "past":
        return None
    return _h_ago(m, ctx)


def _h_rolling(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    """'the past 3 weeks' / 'over the next few days': from the anchor back (or forward) N units."""
    bounds = _count(m["n"]) if m["n"] else (1, 1)
    if bounds is None:
        return None
    unit, factor = _unit_and_factor(m["unit"])
    n = bounds[1] * factor
    vague = bounds[0] != bounds[1]
    forward = m["dir"] in ("next", "coming")
    if not m["n"] and forward and unit == "day":
        return None  # "the next day" is the day after some event of the story, not after the anchor
    if unit == "hour":
        first = (ctx.anchor + timedelta(hours=n if forward else -n)).date()
        return _Span(min(first, ctx.today), max(first, ctx.today) + timedelta(days=1), "range")
    granularity, confidence = ("approx", 0.6) if vague else ("range", 1.0)
    if forward:
        return _Span(ctx.today, _shift(unit, ctx.today, n) + timedelta(days=1), granularity, confidence)
    return _Span(_shift(unit, ctx.today, -n), ctx.today + timedelta(days=1), granularity, confidence)


def _h_rel_day(m: re.Match[str], ctx: _Ctx) -> _Span:
    word = " ".join(m[0].split())
    if "before yesterday" in word:
        offset = -2
    elif "after tomorrow" in word:
        offset = 2
    elif "yesterday" in word or word == "last night":
        offset = -1
    elif "tomorrow" in word:
        offset = 1
    else:  # today, tonight, this morning, earlier today ...
        offset = 0
    d = ctx.today + timedelta(days=offset)
    return _Span(d, d + timedelta(days=1), "day")


def _h_rel_period(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    mod, per = m["mod"], m["per"]
    offset = {"last": -1, "previous": -1, "this": 0, "current": 0, "next": 1, "coming": 1}[mod]
    if m["before_last"]:
        offset = -2
    today = ctx.today
    if per == "week":
        start = _week(today)[0] + timedelta(weeks=offset)
        return _Span(start, start + timedelta(days=7), "week")
    if per == "weekend":
        # The weekend of the Monday-based week: from Sunday "last weekend" is the one before this one.
        sat = _week(today)[0] + timedelta(days=5, weeks=offset)
        return _Span(sat, sat + timedelta(days=2), "weekend")
    if per == "month":
        start = _shift_months(date(today.year, today.month, 1), offset)
        return _Span(*_month(start.year, start.month), "month")
    if per == "quarter":
        q0 = date(today.year, 3 * ((today.month - 1) // 3) + 1, 1)
        start = _shift_months(q0, 3 * offset)
        return _Span(start, _shift_months(start, 3), "quarter")
    return _Span(*_year(today.year + offset), "year")


def _h_early_late_this(m: re.Match[str], ctx: _Ctx) -> _Span:
    """'earlier this week' = from the period's start to the anchor; 'later this month' = the rest of it."""
    start, end = _current_period(m["per"], ctx.today)
    if m["el"] == "earlier":
        return _Span(start, ctx.today + timedelta(days=1), "range")
    return _Span(ctx.today, end, "range")


def _h_part_of_current(m: re.Match[str], ctx: _Ctx) -> _Span:
    """'by the end of the month': a third of the anchor's own week, month or year."""
    start, end = _current_period(m["per"], ctx.today)
    return _third(_Span(start, end, m["per"]), {"start": 0, "beginning": 0, "middle": 1, "end": 2}[m["part"]])


def _current_period(per: str, today: date) -> tuple[date, date]:
    if per == "week":
        return _week(today)
    if per == "month":
        return _month(today.year, today.month)
    return _year(today.year)


def _third(span: _Span, third: int) -> _Span:
    """Thirds of a period: "early May" = 1-10, "mid May" = 11-20, "late May" = 21-31."""
    length = (span.end - span.start).days
    a = span.start + timedelta(days=third * length // 3)
    b = span.start + timedelta(days=(third + 1) * length // 3)
    return _Span(a, b, f"{span.granularity}_part", 0.8)


def _h_weekend_bare(m: re.Match[str], ctx: _Ctx) -> _Span:
    """'over the weekend': the one under way or just gone; forward in a future sentence."""
    sat = _week(ctx.today)[0] + timedelta(days=5)
    if ctx.tense(m.start(), m.end()) != "future" and ctx.today < sat:
        sat -= timedelta(days=7)
    return _Span(sat, sat + timedelta(days=2), "weekend")


def _h_weekday(m: re.Match[str], ctx: _Ctx) -> _Span:
    wd = _WEEKDAYS[m["wd"]]
    mod = " ".join((m["mod"] or "").split())
    today = ctx.today
    back = (today.weekday() - wd) % 7  # days back to the most recent one on or before today
    fwd = (wd - today.weekday()) % 7  # days forward to the first one on or after today
    if mod in ("last", "past", "previous", "this past"):
        d = today - timedelta(days=back or 7)
    elif mod in ("next", "coming", "this coming"):
        d = today + timedelta(days=fwd or 7)
    else:
        tense = ctx.tense(m.start(), m.end())
        if tense == "future":
            d = today + timedelta(days=fwd)
        elif mod == "this" and tense == "neutral":
            d = _week(today)[0] + timedelta(days=wd)
        else:
            d = today - timedelta(days=back)
    return _Span(d, d + timedelta(days=1), "day")


def _h_month_rel(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    if not _month_ok(ctx.raw(m, "mon")):
        return None
    month = _MONTHS[m["mon"]]
    mod = m["mod"]
    y, cur = ctx.today.year, ctx.today.month
    if mod in ("last", "past", "previous"):
        year = y if month < cur else y - 1
    elif mod in ("next", "coming"):
        year = y if month > cur else y + 1
    else:  # "this June": the anchor year's
        year = y
    return _Span(*_month(year, month), "month")


def _h_month_bare(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    if not _month_ok(ctx.raw(m, "mon")):
        return None
    month = _MONTHS[m["mon"]]
    y, cur = ctx.today.year, ctx.today.month
    if ctx.tense(m.start(), m.end()) == "future":
        year = y if month >= cur else y + 1
    else:
        year = y if month <= cur else y - 1
    return _Span(*_month(year, month), "month")


def _h_month_year(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    if not _month_ok(ctx.raw(m, "mon")):
        return None
    return _Span(*_month(int(m["y"]), _MONTHS[m["mon"]]), "month")


def _pick_year(ctx: _Ctx, start: int, end: int, make: Callable[[int], date | None]) -> date | None:
    """A day given without its year: follow the tense, else the occurrence closest to the anchor."""
    today = ctx.today
    options = [d for d in (make(today.year - 1), make(today.year), make(today.year + 1)) if d is not None]
    if not options:
        return None
    tense = ctx.tense(start, end)
    if tense == "past":
        past = [d for d in options if d <= today]
        return past[-1] if past else None
    if tense == "future":
        future = [d for d in options if d >= today]
        return future[0] if future else None
    return min(options, key=lambda d: (abs((d - today).days), d > today))


def _day_span(ctx: _Ctx, m: re.Match[str], day: int, month: int, year_raw: str | None) -> _Span | None:
    if year_raw:
        d = _safe_date(int(year_raw), month, day)
    else:
        d = _pick_year(ctx, m.start(), m.end(), lambda y: _safe_date(y, month, day))
    return None if d is None else _Span(d, d + timedelta(days=1), "day")


def _h_dmy(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    if not _month_ok(ctx.raw(m, "mon")):
        return None
    return _day_span(ctx, m, int(m["d"]), _MONTHS[m["mon"]], m["y"])


_h_mdy = _h_dmy  # same groups, other order


def _h_iso(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    d = _safe_date(int(m["y"]), int(m["m"]), int(m["d"]))
    return None if d is None else _Span(d, d + timedelta(days=1), "day")


def _h_slash(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    dotted = m["sep2"] is not None
    first, second, y = int(m["a"]), int(m["b2"] if dotted else m["b"]), int(m["y2"] if dotted else m["y"])
    year = y + 2000 if y < 100 else y
    month, day = (second, first) if dotted or first > 12 else (first, second)
    d = _safe_date(year, month, day)
    return None if d is None else _Span(d, d + timedelta(days=1), "day")


def _h_ordinal_day(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    """'on the 5th': that day of the current, previous or next month, by tense."""
    day = int(m["d"])

    def make(k: int) -> date | None:
        first = _shift_months(date(ctx.today.year, ctx.today.month, 1), k)
        return _safe_date(first.year, first.month, day)

    options = [d for d in (make(-1), make(0), make(1)) if d is not None]
    tense = ctx.tense(m.start(), m.end())
    if tense == "future":
        chosen = next((d for d in options if d >= ctx.today), None)
    elif tense == "past":
        chosen = next((d for d in reversed(options) if d <= ctx.today), None)
    else:
        chosen = min(options, key=lambda d: (abs((d - ctx.today).days), d > ctx.today)) if options else None
    return None if chosen is None else _Span(chosen, chosen + timedelta(days=1), "day")


def _h_year(m: re.Match[str], ctx: _Ctx) -> _Span:
    return _Span(*_year(int(m["y"])), "year")


def _h_decade(m: re.Match[str], ctx: _Ctx) -> _Span:
    y = int(m["y"])
    return _Span(date(y, 1, 1), date(y + 10, 1, 1), "decade")


_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}


def _h_quarter(m: re.Match[str], ctx: _Ctx) -> _Span:
    q = int(m["q"]) if m["q"] else _ORDINALS[m["ord"]]
    start = date(int(m["y"]), 3 * (q - 1) + 1, 1)
    return _Span(start, _shift_months(start, 3), "quarter")


def _h_season(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    name = m["s"]
    mod = " ".join((m["mod"] or "").split())
    if name == "fall" and not (mod or m["y"] or m["prep"]):
        return None  # "fall" alone is the verb
    if m["y"]:
        return _Span(*_season(name, int(m["y"])), "season")
    today = ctx.today
    instances = [_season(name, y) for y in range(today.year - 2, today.year + 3)]
    current = next((s for s in instances if s[0] <= today < s[1]), None)
    if mod in ("last", "past", "previous", "this past"):
        chosen = [s for s in instances if s[1] <= today and s != current][-1]
    elif mod in ("next", "coming", "this coming"):
        chosen = next(s for s in instances if s[0] > today)
    elif mod == "this":
        # The instance closest to the anchor: in October "this summer" is the one just gone.
        chosen = min(instances, key=lambda s: _distance(s, today))
    elif ctx.tense(m.start(), m.end()) == "future":
        chosen = next(s for s in instances if s[1] > today)
    else:
        chosen = [s for s in instances if s[0] <= today][-1]
    return _Span(*chosen, "season")


def _distance(span: tuple[date, date], d: date) -> int:
    if d < span[0]:
        return (span[0] - d).days
    if d >= span[1]:
        return (d - span[1]).days + 1
    return 0


def _h_month_range(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    """'from March to May' / 'between June and August': the first month by tense, the second after it."""
    if not (_month_ok(ctx.raw(m, "mon")) and _month_ok(ctx.raw(m, "mon2"))):
        return None
    first = _h_month_bare(m, ctx)
    if first is None:
        return None
    last = _MONTHS[m["mon2"]]
    year = first.start.year if last >= first.start.month else first.start.year + 1
    return _Span(first.start, _month(year, last)[1], "range")


def _h_year_range(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    a, b = int(m["y"]), int(m["y2"])
    return _Span(_year(a)[0], _year(b)[1], "range") if a <= b else None


def _h_vague(m: re.Match[str], ctx: _Ctx) -> _Span:
    word = " ".join(m[0].split())
    today = ctx.today
    if word == "the other day":
        return _Span(today - timedelta(days=7), today, "approx", 0.4)
    if word in ("a while ago", "a while back"):
        return _Span(today - timedelta(days=365), today - timedelta(days=7), "approx", 0.2)
    return _Span(today - timedelta(days=30), today + timedelta(days=1), "approx", 0.3)


def _h_before_last(m: re.Match[str], ctx: _Ctx) -> _Span | None:
    per = m["per2"]
    if per == "week":
        start = _week(ctx.today)[0] - timedelta(weeks=2)
        return _Span(start, start + timedelta(days=7), "week")
    if per == "weekend":
        sat = _week(ctx.today)[0] + timedelta(days=5, weeks=-2)
        return _Span(sat, sat + timedelta(days=2), "weekend")
    if per == "month":
        start = _shift_months(date(ctx.today.year, ctx.today.month, 1), -2)
        return _Span(*_month(start.year, start.month), "month")
    return _Span(*_year(ctx.today.year - 2), "year")


_DIGIT = "#"  # trigger: the text has a digit


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    handler: _Handler
    triggers: frozenset[str]  # words (or _DIGIT) one of which the text must contain for the rule to run


def _rule(pattern: str, handler: _Handler, triggers: set[str] | frozenset[str] | str) -> _Rule:
    words = frozenset(triggers.split()) if isinstance(triggers, str) else frozenset(triggers)
    return _Rule(re.compile(pattern), handler, words)  # matched against the ASCII-lower-cased text


# No trailing "." in the month group: "in April." must not eat the full stop that ends its sentence.
_MON = rf"(?P<mon>(?:{_MON_ALT})\b)"
_ORD = r"(?:st|nd|rd|th)"
_YEAR = r"(?P<y>(?:1[89]|2[01])\d{2})"
_UNIT_WORDS = frozenset(
    w + s for w in ("hour", "day", "week", "fortnight", "month", "year", "decade") for s in ("", "s")
)
_MONTH_WORDS = frozenset(_MONTHS)
_WEEKDAY_WORDS = frozenset(_WEEKDAYS)

# Each rule's span is its group "core" when it has one (the preposition that licenses a bare month or year
# is not part of the time expression), else the whole match. Triggers skip a rule's regex when the text
# cannot match it, which keeps an ordinary turn well under a millisecond.
_RULES: list[_Rule] = [
    _rule(rf"\b{_NUM}\s+{_UNIT}\s+(?P<dir>ago|back)\b", _h_ago, "ago back"),
    _rule(
        rf"\bin\s+(?P<core>{_NUM}\s+{_UNIT})(?P<dir>)\b(?!\s+(?:ago|back|before|after|earlier|later))",
        _h_in_future,
        _UNIT_WORDS,
    ),
    _rule(rf"\b{_NUM}\s+{_UNIT}\s+(?P<dir>from\s+now)\b", _h_in_future, "now"),
    _rule(
        rf"\b(?:(?:over|in|during|for|within)\s+)?the\s+(?P<dir>past|last|previous|next|coming)\s+"
        rf"(?:{_NUM}\s+)?{_UNIT}\b",
        _h_rolling,
        "past last previous next coming",
    ),
    _rule(
        rf"\b(?P<dir>past|last|previous|next|coming)\s+{_NUM}\s+{_UNIT}\b", _h_rolling, "past last previous next coming"
    ),
    _rule(
        r"\b(?:the\s+)?day\s+before\s+yesterday\b|\b(?:the\s+)?day\s+after\s+tomorrow\b|\byesterday(?:\s+"
        r"(?:morning|afternoon|evening|night))?\b|\btomorrow\b|\btoday\b|\btonight\b|\bthis\s+(?:morning|afternoon|"
        r"evening)\b|\blast\s+night\b|\bearlier\s+today\b",
        _h_rel_day,
        "yesterday tomorrow today tonight morning afternoon evening night",
    ),
    _rule(
        r"\b(?:(?P<mod>last|previous|this|current|next|coming)\s+(?P<per>week|weekend|month|quarter|year)"
        r"(?P<before_last>)|the\s+(?P<per2>week|weekend|month|year)\s+before\s+last)\b",
        lambda m, ctx: _h_rel_period(m, ctx) if m["mod"] else _h_before_last(m, ctx),
        "week weekend month quarter year",
    ),
    _rule(
        r"\b(?P<el>earlier|later)\s+(?:this|in\s+the)\s+(?P<per>week|month|year)\b", _h_early_late_this, "earlier later"
    ),
    _rule(r"\b(?:over|on|at|during)\s+(?P<core>the\s+weekend)\b", _h_weekend_bare, "weekend"),
    _rule(
        r"\b(?:the\s+)?(?P<part>start|beginning|middle|end)\s+of\s+the\s+(?P<per>week|month|year)\b",
        _h_part_of_current,
        "start beginning middle end",
    ),
    _rule(
        rf"\b(?:(?P<mod>last|this\s+past|this\s+coming|this|next|coming|past|previous|on)\s+)?(?P<wd>{_WD_ALT})\b",
        _h_weekday,
        _WEEKDAY_WORDS,
    ),
    _rule(rf"\b(?P<mod>last|this|next|coming|past|previous)\s+{_MON}(?!\.?\s*\d)", _h_month_rel, _MONTH_WORDS),
    _rule(
        r"\b(?:(?:in|during|since|until|till|by|throughout|over|around|of|from|before|after|through|for|early|late|"
        rf"mid)\s+|mid-\s*)(?:the\s+month\s+of\s+)?(?P<core>{_MON})(?!\.?\s*\d)",
        _h_month_bare,
        _MONTH_WORDS,
    ),
    _rule(
        rf"\b(?:from|between)\s+(?P<core>{_MON}\s*(?:to|and|until|till|through|-|–)\s*"
        rf"(?P<mon2>(?:{_MON_ALT})\b))(?!\.?\s*\d)",
        _h_month_range,
        _MONTH_WORDS,
    ),
    _rule(rf"\b{_MON}\.?\s*,?\s+(?:of\s+)?{_YEAR}\b", _h_month_year, _MONTH_WORDS),
    _rule(rf"\b(?:the\s+)?(?P<d>[0-3]?\d){_ORD}?\s+(?:of\s+)?{_MON}(?:\.?\s*,?\s*{_YEAR}\b)?", _h_dmy, _MONTH_WORDS),
    _rule(rf"\b{_MON}\.?\s+(?:the\s+)?(?P<d>[0-3]?\d)(?!\d){_ORD}?\b(?:\s*,?\s*{_YEAR}\b)?", _h_mdy, _MONTH_WORDS),
    _rule(r"\b(?P<y>\d{4})[-/.](?P<m>[01]?\d)[-/.](?P<d>[0-3]?\d)(?!\d)", _h_iso, _DIGIT),
    # Dotted dates need a four-digit year, so that version numbers ("1.2.10") are not read as dates.
    _rule(
        r"\b(?P<a>[0-3]?\d)(?:(?P<sep>/)(?P<b>[0-3]?\d)/(?P<y>\d{4}|\d{2})|(?P<sep2>\.)(?P<b2>[0-3]?\d)\.(?P<y2>\d{4}))\b",
        _h_slash,
        _DIGIT,
    ),
    _rule(rf"\bon\s+the\s+(?P<core>(?P<d>[0-3]?\d){_ORD})\b", _h_ordinal_day, _DIGIT),
    _rule(
        r"\b(?:(?:in|during|since|until|till|by|of|for|throughout|from|before|after|around|circa|early|late|mid|"
        rf"year)\s+|mid-\s*)(?P<core>{_YEAR})\b(?!\s*(?:%|dollars|euros|people|users|items|units))",
        _h_year,
        _DIGIT,
    ),
    _rule(
        rf"\b(?:from|between)\s+(?P<core>{_YEAR}\s*(?:to|and|until|till|through|-|–)\s*"
        r"(?P<y2>(?:1[89]|2[01])\d{2}))\b",
        _h_year_range,
        _DIGIT,
    ),
    _rule(r"\b(?:the\s+)?(?P<y>(?:1[89]|20)\d0)['’]?s\b", _h_decade, _DIGIT),
    _rule(
        rf"\b(?:q(?P<q>[1-4])|(?P<ord>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter)\s*(?:of\s+)?,?\s*{_YEAR}\b",
        _h_quarter,
        _DIGIT,
    ),
    _rule(
        r"\b(?:(?P<mod>last|this\s+past|this\s+coming|this|next|coming|past|previous)\s+|"
        r"(?P<prep>in|during|over|throughout|the|of)\s+(?:the\s+)?)?"
        rf"(?P<s>spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?{_YEAR})?\b(?!\s+of\s+(?!(?:19|20)\d\d))",
        _h_season,
        "spring summer autumn fall winter",
    ),
    _rule(
        r"\b(?:recently|lately|of\s+late|these\s+days|not\s+long\s+ago|the\s+other\s+day|a\s+while\s+(?:ago|back))\b",
        _h_vague,
        "recently lately late these long other while",
    ),
]


# --- combining neighbours: "early May", "the week before 8 May", "since 2019", "from March to May" --------

_PART = re.compile(
    r"(?P<part>\bearly|\blate|\bmid-?|\bthe\s+(?:start|beginning|middle|end)\s+of|\b(?:start|beginning|middle|end)\s+of)"
    r"\s*(?:in\s+)?$",
    re.IGNORECASE,
)
_RELATIVE_TO = re.compile(
    rf"\b(?:(?P<n>the|{_NUM_BODY})\s+)(?P<unit>day|week|month|year)s?\s+(?P<dir>before|after)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
# "I was late last week" is about being late, not about the end of the week.
_NOT_PART = re.compile(r"\b(?:was|were|is|am|are|be|been|being|too|so|very|running|arrived|came|got|stayed)\s+$", re.I)
_SINCE = re.compile(r"\bsince\s+(?:the\s+)?$", re.IGNORECASE)
_RANGE_OPEN = re.compile(r"\b(?:from|between)\s+(?:the\s+)?$", re.IGNORECASE)
_RANGE_JOIN = re.compile(r"^\s*(?:to|and|until|till|through|thru|-|–|—)\s*(?:the\s+)?$", re.IGNORECASE)
_PARTS_OF = ("week", "weekend", "month", "quarter", "season", "year", "decade")


def _combine(hits: list[_Hit], ctx: _Ctx) -> list[_Hit]:
    text = ctx.text
    out: list[_Hit] = []
    for hit in hits:
        before = text[max(0, (out[-1].end if out else 0)) : hit.start][-40:]
        head = hit.start - len(before)
        part = _PART.search(before)
        if part and hit.span.granularity in _PARTS_OF and not _NOT_PART.search(before[: part.start()]):
            word = part["part"].lower()
            third = 0 if ("early" in word or "start" in word or "beginning" in word) else 1 if "mid" in word else 2
            hit = _Hit(head + part.start(), hit.end, _third(hit.span, third))
            before = text[max(0, (out[-1].end if out else 0)) : hit.start][-40:]
            head = hit.start - len(before)
        rel = _RELATIVE_TO.search(before)
        if rel:
            n_raw = rel["n"].lower()
            bounds = (1, 1) if n_raw == "the" else _count(n_raw)
            if bounds is not None and bounds[0] == bounds[1]:
                unit, n = rel["unit"].lower(), bounds[0]
                if rel["dir"].lower() == "before":
                    a = _shift(unit, hit.span.start, -n)
                else:
                    a = _shift(unit, hit.span.end, n - 1) if unit != "day" else hit.span.start + timedelta(days=n)
                b = a + timedelta(days=1) if unit == "day" else _shift(unit, a, 1)
                hit = _Hit(head + rel.start(), hit.end, _Span(a, b, unit))
                before = text[max(0, (out[-1].end if out else 0)) : hit.start][-40:]
        if _SINCE.search(before) and hit.span.start <= ctx.today:
            hit = _Hit(hit.start, hit.end, _Span(hit.span.start, ctx.today + timedelta(days=1), "range"))
        if out and _RANGE_JOIN.match(text[out[-1].end : hit.start]):
            prev = out[-1]
            opener = _RANGE_OPEN.search(text[max(0, prev.start - 20) : prev.start])
            dash = text[prev.end : hit.start].strip() in ("-", "–", "—")
            if (opener or dash) and prev.span.start < hit.span.end:
                out[-1] = _Hit(prev.start, hit.end, _Span(prev.span.start, hit.span.end, "range"))
                continue
        out.append(hit)
    return out


# --- public API --------------------------------------------------------------------------------------------


def resolve(text: str, anchor: datetime) -> list[TimeMention]:
    """Every time expression in ``text``, in order, as an absolute window around ``anchor`` (the turn's time).

    Windows are in the anchor's time zone (naive in, naive out). Overlapping matches keep the longest.
    """
    ctx = _Ctx(text, anchor, anchor.date())
    found: list[_Hit] = []
    # A-Z only, so offsets stay those of ``text`` (str.lower can change the length of some non-ASCII text),
    # and case-sensitive patterns on a lower-cased copy run about twice as fast as re.IGNORECASE.
    low = text.translate(_ASCII_LOWER)
    words = set(_WORD.findall(low))
    if any(c.isdigit() for c in text):
        words.add(_DIGIT)
    for rule in _RULES:
        if words.isdisjoint(rule.triggers):
            continue
        for m in rule.pattern.finditer(low):
            try:
                span = rule.handler(m, ctx)
            except (ValueError, OverflowError):  # "999 decades ago" leaves the calendar: not a usable date
                continue
            if span is None or span.end <= span.start:
                continue
            start, end = m.span("core") if "core" in rule.pattern.groupindex and m["core"] else m.span()
            found.append(_Hit(start, end, span))
    found.sort(key=lambda h: (h.start, -(h.end - h.start)))
    kept: list[_Hit] = []
    for hit in found:
        if not kept or hit.start >= kept[-1].end:
            kept.append(hit)
    try:
        combined = _combine(kept, ctx)
    except (ValueError, OverflowError):  # a shift past year 9999: keep the expressions uncombined
        combined = kept
    tz = anchor.tzinfo
    return [
        TimeMention(
            text=text[h.start : h.end],
            start=h.start,
            end=h.end,
            valid_from=datetime.combine(h.span.start, time(), tzinfo=tz),
            valid_to=datetime.combine(h.span.end, time(), tzinfo=tz),
            granularity=h.span.granularity,
            confidence=h.span.confidence,
        )
        for h in combined
        if h.span.start < h.span.end
    ]


def query_window(question: str, now: datetime | None = None) -> tuple[datetime, datetime] | None:
    """The absolute window a question asks about, or None when it sets no time constraint.

    "What did I do last May?" -> May of last year; "When did X happen?" -> None. Several expressions
    ("in May or June") give the window that covers them all.
    """
    found = resolve(question, now if now is not None else datetime.now(UTC))
    if not found:
        return None
    return min(m.valid_from for m in found), max(m.valid_to for m in found)
