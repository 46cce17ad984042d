"""Key-fact atoms: the smallest statements a compaction must not lose (or invent).

An atom is (kind, value) with a normalised value, so "125,000.00 CNY" and "CNY 125000" are one atom.
Kinds: id, amount, quantity, date, name, status, version (from any text), goal (a user's stated goal or
constraint) and tool (a tool and its result). Text is cleaned of protocol noise first (see noise.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation

from acm.domain import sentences as S
from acm.domain.identifiers import identifiers

_CURRENCY = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "CNY", "RMB": "CNY", "元": "CNY"}
_CODES = "USD|EUR|GBP|CNY|JPY|CHF|CAD|AUD|HKD|SGD|INR|RMB"
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
AMOUNT = re.compile(
    rf"(?:(?P<c1>{_CODES}|US\$|\$|€|£|¥)\s?(?P<n1>{_NUM})(?![\d.,]*\d))"
    rf"|(?:(?P<n2>{_NUM}) ?(?P<c2>{_CODES}|元)\b)"
)
_UNITS = (
    "%|ms|sec|seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|GB|MB|TB|KB|GiB|MiB|TiB|"
    "vCPUs?|CPUs?|cores?|replicas?|nodes?|pods?|instances?|users?|seats?|licen[cs]es?|units?|items?|pcs|kg|km|"
    "servers?|hosts?|tickets?|requests?|rps|qps|errors?"
)
QUANTITY = re.compile(rf"(?<![\w.,-])({_NUM}) ?({_UNITS})(?![\w])", re.IGNORECASE)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_RE = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
ISO_DATE = re.compile(
    r"\b(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}| ?UTC)?)?\b"
)
DMY_DATE = re.compile(rf"\b(\d{{1,2}}) ({_MONTH_RE}),? (\d{{4}})\b")
MDY_DATE = re.compile(rf"\b({_MONTH_RE}) (\d{{1,2}}),? (\d{{4}})\b")
VERSION = re.compile(r"(?<![\w.])(v\d+(?:\.\d+){1,3})(?!\w|\.\d)")
# Two or three capitalised words: a person or an organisation ("Li Wei", "Acme Industrial Supply").
NAME = re.compile(r"\b([A-Z][a-z]+(?:[ '][A-Z][a-z]+){1,2})\b")
_NAME_STOP = frozenset(
    """I A An The This That These Those It Its He She We They You Your My Our Their His Her Hi Hello Hey Thanks
    Thank Yes No Ok Okay Sure Well So And But Or If When What Where Why How Who Which Please Also Just Then There
    Here Do Does Did Is Are Was Were Be Been Can Could Would Should Will Let Great Good Sorry Today Yesterday
    Tomorrow Not Any Some All As At In On Last Next Now By For From To Of With About After Before Since Until
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August
    September October November December Calling Called Checking Done Noted Status Update Updated Result
    Dr Mr Mrs Ms Mx Prof Sir Dame Madam""".split()
)
STATUSES = (
    "approved|rejected|pending_approval|pending|open|opened|closed|resolved|escalated|in_progress|on_hold|"
    "cancelled|canceled|failed|succeeded|rolled_back|deployed|mitigated|acknowledged|draft|submitted|paid|"
    "shipped|blocked|investigating|monitoring|completed|scheduled|verified|declined|reopened|triaged"
)
STATUS = re.compile(
    rf"\b(?:status\s*[=:]\s*|is now |now |was |is |marked |moved to |set to )({STATUSES})\b", re.IGNORECASE
)
# A stated goal or constraint: first-person intent or requirement, or an explicit limit. Epistemic "must"
# ("that must have been fun"), advice ("never give up") and conversational moves ("there's something I want
# to tell you", "you're right where you need to be") are not goals.
_CONVERSATIONAL = (
    r"(?! (?:tell|say|ask|share|show|thank|let you know|hear|know (?:what|how|if|whether|more)|see (?:what|how|if)|"
    r"remind you)\b)"
)
_GOAL = re.compile(
    r"\b(?:(?:I|we)(?:'d| would)? (?:need to|must(?! have)|have to|want to|would like to|'d like to|plan to|intend to)"
    + _CONVERSATIONAL
    + r"(?<!where I need to)(?<!where we need to)"
    r"|(?:my|our) (?:goal|aim|priority|requirement|deadline|budget|target) (?:is|was)"
    r"|make sure|ensure that|deadline|no later than|no more than|at most|at least|must not|must stay|must be done"
    r"|(?<!where you )(?<!where I )(?<!where we )needs? to be|has to be|cannot exceed|can't exceed"
    r"|within (?:the )?budget|(?:budget|cap|limit) of)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True, order=True)
class Atom:
    kind: str
    value: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.value}"


def sentences(text: str) -> list[str]:
    return S.split(text)


def norm_amount(number: str, currency: str) -> str:
    code = _CURRENCY.get(currency, currency.upper())
    try:
        value = Decimal(number.replace(",", ""))
    except InvalidOperation:
        return f"{number} {code}"
    return f"{value.normalize():f} {code}"


def _norm_number(number: str) -> str:
    try:
        return f"{Decimal(number.replace(',', '')).normalize():f}"
    except InvalidOperation:
        return number


def _unit(unit: str) -> str:
    u = unit.lower()
    if u in ("%", "ms", "rps", "qps", "pcs", "kg", "km") or (len(u) <= 3 and u.endswith("b")):
        return u
    return u.rstrip("s") if not u.endswith("ss") else u


def _month(name: str) -> int:
    return _MONTHS.index(name[:3].lower()) + 1


def _iso(y: int, m: int, d: int) -> str | None:
    try:
        return date(y, m, d).isoformat()
    except ValueError:
        return None


def dates(text: str) -> list[str]:
    found: list[str] = []
    for m in ISO_DATE.finditer(text):
        day = _iso(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if day:
            found.append(f"{day}T{m.group(4)}:{m.group(5)}" if m.group(4) else day)
    for m in DMY_DATE.finditer(text):
        day = _iso(int(m.group(3)), _month(m.group(2)), int(m.group(1)))
        if day:
            found.append(day)
    for m in MDY_DATE.finditer(text):
        day = _iso(int(m.group(3)), _month(m.group(1)), int(m.group(2)))
        if day:
            found.append(day)
    return found


def ids(text: str) -> list[str]:
    return identifiers(text)


def amounts(text: str) -> list[tuple[str, str]]:
    """(as written, normalised) of each amount with a currency."""
    out = []
    for m in AMOUNT.finditer(text):
        number, currency = (m.group("n1"), m.group("c1")) if m.group("n1") else (m.group("n2"), m.group("c2"))
        out.append((m.group(0).strip(), norm_amount(number, currency)))
    return out


def names(text: str) -> list[str]:
    found = []
    for m in NAME.finditer(text):
        words = m.group(1).split(" ")
        while words and words[0] in _NAME_STOP:
            words.pop(0)
        while words and words[-1] in _NAME_STOP:
            words.pop()
        if len(words) >= 2:
            found.append(" ".join(words))
    return found


def goal_sentences(text: str) -> list[str]:
    return [s for s in sentences(text) if _GOAL.search(s)]


def norm_text(text: str) -> str:
    return " ".join(re.sub(r"[^\w%.:/-]+", " ", text.lower()).split()).strip(" .")


def fact_atoms(text: str) -> set[Atom]:
    """The atoms any text states (no goals: those depend on who said it)."""
    atoms: set[Atom] = {Atom("id", i) for i in ids(text)}
    spans = []
    for m in AMOUNT.finditer(text):
        spans.append(m.span())
    atoms |= {Atom("amount", norm) for _raw, norm in amounts(text)}
    for m in QUANTITY.finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        atoms.add(Atom("quantity", f"{_norm_number(m.group(1))} {_unit(m.group(2))}"))
    atoms |= {Atom("date", d) for d in dates(text)}
    atoms |= {Atom("name", n.lower()) for n in names(text)}
    atoms |= {Atom("status", m.group(1).lower()) for m in STATUS.finditer(text)}
    atoms |= {Atom("version", v) for v in VERSION.findall(text)}
    return atoms


def tool_result(text: str) -> str:
    """What a tool call came to: its stated status, else error / ok."""
    m = STATUS.search(text)
    if m:
        return m.group(1).lower()
    if re.search(r"\b(?:error|failed|failure|exception|denied|timeout)\b", text, re.IGNORECASE):
        return "error"
    return "ok"


def turn_atoms(role: str, tool_name: str, cleaned: str) -> set[Atom]:
    """Atoms of one (cleaned) turn: its facts, the user's goals, and the tool → result pair."""
    atoms = fact_atoms(cleaned)
    if role == "user":
        atoms |= {Atom("goal", norm_text(s)) for s in goal_sentences(cleaned)}
    if role == "tool" and tool_name:
        atoms.add(Atom("tool", f"{tool_name} -> {tool_result(cleaned)}"))
    return atoms
