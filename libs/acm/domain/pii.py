"""PII and secret redaction for one turn, before anything is stored (pure, deterministic, fast).

Every detector yields spans on the original text; overlapping spans are merged and the union is
replaced once, by a placeholder naming the most sensitive kind in it. Checksummed kinds (cards: Luhn,
IBAN: mod-97, Chinese resident id: ISO 7064) are validated so that order numbers and other long digit
runs survive. Existing placeholders split the text into independent segments, so a placeholder is never
matched again and redact() is idempotent.

Emails and phone numbers can be let through by the agent schema (a CRM agent may need them); cards,
IBANs, secrets, one-time codes and national ids never can.

Speed (this runs on every turn): keyword patterns run on a lowered copy of the same length and start with a
literal, so the regex engine jumps between candidates instead of trying every position (IGNORECASE or
a leading \\b costs ~10x); word boundaries are checked in Python. Digit-shaped detectors only scan
windows around long digit runs, found by one pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from phonenumbers import Leniency, PhoneNumberMatcher

from acm.domain import secret_model
from acm.domain.models import Turn
from acm.domain.schema import PrivacyRules
from acm.domain.textforms import (
    dumps_like,
    embedded_json,
    has_escapes,
    loads_container,
    map_json_strings,
    normalise_width,
    unescape_with_offsets,
)

# Priority order: when spans of different kinds overlap, the merged span is named after the first.
KINDS = ("secret", "national_id", "card", "iban", "otp", "email", "phone")
_PRIORITY = {kind: rank for rank, kind in enumerate(KINDS)}

PLACEHOLDER = "[REDACTED:{kind}]"
_PLACEHOLDER_RE = re.compile(r"\[REDACTED:[a-z_]+\]")

Span = tuple[int, int, str]  # (start, end, kind) on the scanned segment
# A detector's "this value is not a secret" (an error code, a count of codes sent): the learned model does not score
# it, and it is never redacted.
_CLEARED = "cleared"


@dataclass(frozen=True, slots=True)
class PiiRules:
    """What the agent schema lets through. Everything not listed here is always redacted."""

    emails: bool = True
    phones: bool = True
    # The learned second opinion for secrets said in prose (acm.domain.secret_model; ACM_SECRET_MODEL).
    secret_model: bool = True

    @classmethod
    def of(cls, privacy: PrivacyRules, secret_model: bool = True) -> PiiRules:
        """What an agent schema's privacy section lets through, with the learned second opinion or not."""
        return cls(emails=privacy.redact_emails, phones=privacy.redact_phones, secret_model=secret_model)


@dataclass(frozen=True, slots=True)
class Redaction:
    text: str
    counts: dict[str, int]  # kind -> placeholders inserted; only kinds that occurred

    @property
    def total(self) -> int:
        return sum(self.counts.values())


_DEFAULT_RULES = PiiRules()


def redact(text: str, rules: PiiRules = _DEFAULT_RULES) -> Redaction:
    """Replace every PII value found in `text` by `[REDACTED:<kind>]` and count them by kind."""
    detectors = [detect for kind, detect in _DETECTORS if _enabled(kind, rules)]
    out: list[str] = []
    counts: dict[str, int] = {}
    pos = 0
    # Placeholders from an earlier pass are kept verbatim and never scanned: idempotence.
    for ph in [*_PLACEHOLDER_RE.finditer(text), None]:
        seg_end = ph.start() if ph else len(text)
        out.append(_redact_segment(text[pos:seg_end], detectors, rules.secret_model, counts))
        if ph is None:
            break
        out.append(ph.group(0))
        pos = ph.end()
    return Redaction("".join(out), counts)


# --- every string of a turn ---------------------------------------------------------------------


def redact_turn(turn: Turn, rules: PiiRules = _DEFAULT_RULES) -> tuple[Turn, dict[str, int]]:
    """The turn with every string it carries redacted: content, tool_name, metadata keys and values.

    Content and metadata values that are JSON (tool output, tool-call arguments, JSON inside a JSON
    string) are decoded first, each string scanned after the key it sits under ("pwd", "验证码" are cues
    only found in keys), and encoded back the way they came; escaped text that is not valid JSON is read
    unescaped. Returns the new turn and the placeholders inserted by kind."""
    counts: dict[str, int] = {}
    content = redact_text(turn.content, rules, counts)
    tool_name = redact_text(turn.tool_name, rules, counts) if turn.tool_name else ""
    metadata: dict[str, str] = {}
    for key, value in turn.metadata.items():
        new_key = redact_text(key, rules, counts)
        metadata[new_key] = _redact_under_key(value, key, rules, counts)
    if content == turn.content and tool_name == turn.tool_name and metadata == turn.metadata:
        return turn, counts
    return replace(turn, content=content, tool_name=tool_name, metadata=metadata), counts


def redact_text(text: str, rules: PiiRules = _DEFAULT_RULES, counts: dict[str, int] | None = None) -> str:
    """redact() for a string that may be JSON, hold JSON, or carry JSON escapes; adds to `counts`."""
    counts = {} if counts is None else counts
    value = loads_container(text)
    if value is not None:
        return _redact_json(value, text, rules, counts)
    parts: list[str] = []
    pos = 0
    for start, end, inner in embedded_json(text):
        parts.append(_redact_plain(text[pos:start], rules, counts))
        parts.append(_redact_json(inner, text[start:end], rules, counts))
        pos = end
    parts.append(_redact_plain(text[pos:], rules, counts))
    return "".join(parts)


_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
# Form and change-log shapes name the field in one member and carry its value in another:
# {"name": "password", "value": "..."}, {"field": "iban", "new": "..."}.
_NAME_MEMBERS = ("name", "field", "key", "label", "param", "attribute", "fieldName", "field_name")
_VALUE_MEMBERS = ("value", "val", "new", "new_value", "newValue", "old", "old_value", "oldValue", "data", "content")


def _redact_json(value: object, original: str, rules: PiiRules, counts: dict[str, int]) -> str:
    def one(text: str, key: str, is_key: bool) -> str:
        return redact_text(text, rules, counts) if is_key or not key else _redact_under_key(text, key, rules, counts)

    mapped = map_json_strings(_named_values(value, rules, counts), one)
    return original if mapped == value else dumps_like(mapped, original)


def _named_values(value: object, rules: PiiRules, counts: dict[str, int], depth: int = 0) -> object:
    """`value` with each form-style value redacted under the name its sibling member gives it."""
    if depth > 32:
        return value
    if isinstance(value, list):
        return [_named_values(item, rules, counts, depth + 1) for item in value]
    if not isinstance(value, dict):
        return value
    out = {k: _named_values(v, rules, counts, depth + 1) for k, v in value.items()}
    name = next((value[k] for k in _NAME_MEMBERS if isinstance(value.get(k), str)), None)
    if name:
        for k in _VALUE_MEMBERS:
            member = out.get(k)
            if isinstance(member, str):
                out[k] = _redact_under_key(member, name, rules, counts)
    return out


def _redact_under_key(value: str, key: str, rules: PiiRules, counts: dict[str, int]) -> str:
    """A value read after its key ("otp: 481516"), so the key's cue counts; only the value is replaced."""
    if loads_container(value) is not None:
        return _redact_json(loads_container(value), value, rules, counts)
    prefix = _CAMEL.sub(" ", key).replace("_", " ").replace("-", " ").replace(".", " ").strip() + ": "
    if _PLACEHOLDER_RE.search(prefix):
        prefix = ""
    spans = [(max(s, len(prefix)) - len(prefix), e - len(prefix), k) for s, e, k in find_spans(prefix + value, rules)]
    spans = [sp for sp in spans if sp[1] > 0]
    if spans and names_identifier(key):
        # "token_id", "next_page_token", "ETag": an identifier's member; a secret there only by its own format.
        formatted = list(_formatted_secrets(_Text(value, value.lower(), ())))
        spans = [(s, e, k) for s, e, k in spans if k != "secret" or any(s < fe and e > fs for fs, fe, _k in formatted)]
    if spans and _APPROVAL_KEY.search(prefix.lower()):
        spans = [sp for sp in spans if sp[2] != "otp"]  # {"auth_code": "482913"}: a card network's approval
    if not spans:
        return _redact_plain(value, rules, counts) if has_escapes(value) else value
    return _apply(value, spans, counts)


def _redact_plain(text: str, rules: PiiRules, counts: dict[str, int]) -> str:
    if not has_escapes(text):
        result = redact(text, rules)
        for kind, n in result.counts.items():
            counts[kind] = counts.get(kind, 0) + n
        return result.text
    # "\u9a8c\u8bc1\u7801: 481516" in a truncated tool output: scan the decoded text, replace in the original.
    decoded, starts, ends = unescape_with_offsets(text)
    spans = [(starts[s], ends[e - 1], k) for s, e, k in find_spans(decoded, rules) if e > s]
    return _apply(text, spans, counts)


def _apply(text: str, spans: list[Span], counts: dict[str, int]) -> str:
    parts: list[str] = []
    pos = 0
    for start, end, kind in sorted(spans):
        if start < pos:
            continue
        parts.append(text[pos:start])
        parts.append(PLACEHOLDER.format(kind=kind))
        counts[kind] = counts.get(kind, 0) + 1
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


# --- segment scanning ---------------------------------------------------------------------------

_ASCII_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# Six or more characters of digits and separators: every digit-shaped value contains such a run.
_NUMERIC_RUN = re.compile(r"\d[\d ().+/.-]{4,}\d")
_WINDOW_MARGIN = 12  # context scanned around a run: IBAN country code, NINO letters, look-arounds


@dataclass(frozen=True, slots=True)
class _Text:
    seg: str
    low: str  # seg lowered, same length, so offsets are shared
    runs: tuple[tuple[int, int, int], ...]  # (start, end, digit count) of each numeric run

    def windows(self, min_digits: int) -> list[tuple[int, int]]:
        """Merged regions around the runs with at least `min_digits` digits: all a digit detector scans."""
        merged: list[tuple[int, int]] = []
        for start, end, digits in self.runs:
            if digits < min_digits:
                continue
            start, end = max(0, start - _WINDOW_MARGIN), min(len(self.seg), end + _WINDOW_MARGIN)
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
            else:
                merged.append((start, end))
        # Past about one window per 50 characters, the calls cost more than one pass over the whole text.
        return [(0, len(self.seg))] if len(merged) * 50 > len(self.seg) else merged


def _numeric_runs(seg: str) -> tuple[tuple[int, int, int], ...]:
    return tuple((m.start(), m.end(), sum(map(str.isdigit, m.group(0)))) for m in _NUMERIC_RUN.finditer(seg))


Detector = Callable[[_Text], Iterator[Span]]


def _enabled(kind: str, rules: PiiRules) -> bool:
    if kind == "email":
        return rules.emails
    if kind == "phone":
        return rules.phones
    return True


def _segment_spans(segment: str, detectors: list[Detector], learned: bool) -> list[Span]:
    if len(segment) < 4:  # nothing we detect is shorter than a 4-digit code
        return []
    # Full-width digits and letters, NBSP and ideographic spaces read as ASCII; same length, same offsets.
    scanned = normalise_width(segment)
    low = scanned.lower()  # fast; only U+0130 lowers to two characters, then fall back to ASCII-only
    if len(low) != len(scanned):
        low = scanned.translate(_ASCII_LOWER)
    text = _Text(scanned, low, _numeric_runs(scanned))
    spans = [span for detect in detectors for span in detect(text)]
    if learned:  # a second opinion after the rules: where a rule found something, its span and kind stand
        spans.extend(list(_learned_secrets(text, spans)))
    # Values a rule read as something else (an error code, a count) are no secret for the model either.
    spans = [sp for sp in spans if sp[2] != _CLEARED]
    return _merge(spans) if spans else []


def find_spans(text: str, rules: PiiRules = _DEFAULT_RULES) -> list[Span]:
    """The merged (start, end, kind) spans redact() would replace, as offsets in `text`."""
    detectors = [detect for kind, detect in _DETECTORS if _enabled(kind, rules)]
    spans: list[Span] = []
    pos = 0
    for ph in [*_PLACEHOLDER_RE.finditer(text), None]:
        seg_end = ph.start() if ph else len(text)
        found = _segment_spans(text[pos:seg_end], detectors, rules.secret_model)
        spans.extend((pos + s, pos + e, k) for s, e, k in found)
        if ph is None:
            break
        pos = ph.end()
    return spans


def _redact_segment(segment: str, detectors: list[Detector], learned: bool, counts: dict[str, int]) -> str:
    spans = _segment_spans(segment, detectors, learned)
    if not spans:
        return segment
    parts: list[str] = []
    pos = 0
    for start, end, kind in spans:
        parts.append(segment[pos:start])
        parts.append(PLACEHOLDER.format(kind=kind))
        counts[kind] = counts.get(kind, 0) + 1
        pos = end
    parts.append(segment[pos:])
    return "".join(parts)


def _merge(spans: list[Span]) -> list[Span]:
    """Union of overlapping spans; each union keeps the highest-priority kind among its members."""
    spans.sort(key=lambda s: (s[0], -s[1]))
    merged: list[Span] = []
    for start, end, kind in spans:
        if start >= end:
            continue
        if merged and start < merged[-1][1]:
            m_start, m_end, m_kind = merged[-1]
            best = kind if _PRIORITY[kind] < _PRIORITY[m_kind] else m_kind
            merged[-1] = (m_start, max(m_end, end), best)
        else:
            merged.append((start, end, kind))
    return merged


def _starts_word(low: str, i: int) -> bool:
    return i == 0 or not _latin_letter(low[i - 1])  # "我的password是 ...": a CJK character ends a word


def _ends_word(low: str, i: int) -> bool:
    return i >= len(low) or not _latin_letter(low[i])


def _latin_letter(ch: str) -> bool:
    return ch.isalpha() and not "\u3040" <= ch <= "\u9fff"


_TRAILING_PUNCT = ".,;:?)]}>"  # not "!": passwords often end with one


def _value(m: re.Match[str], seg: str, group: str = "v") -> tuple[int, int, str]:
    """The value group (original case) without trailing sentence punctuation."""
    start, end = m.span(group)
    value = seg[start:end].rstrip(_TRAILING_PUNCT) or seg[start:end]
    return start, start + len(value), value


# --- checksums ----------------------------------------------------------------------------------


def luhn_ok(digits: str) -> bool:
    """Luhn mod-10 check, used by every payment card scheme."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_ok(iban: str) -> bool:
    """ISO 13616 mod-97 check on a compact IBAN (no spaces), including the country's length."""
    iban = iban.upper()
    if _IBAN_LENGTHS.get(iban[:2]) != len(iban) or not iban[2:4].isdigit() or not iban.isalnum():
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_CHECK = "10X98765432"


def cn_id_ok(value: str) -> bool:
    """Chinese resident id (GB 11643): region, birth date, sequence, ISO 7064 MOD 11-2 check character."""
    if len(value) != 18 or not value[:17].isdigit():
        return False
    year, month, day = int(value[6:10]), int(value[10:12]), int(value[12:14])
    if not (1900 <= year <= 2099 and 1 <= month <= 12 and 1 <= day <= 31):
        return False
    check = _CN_CHECK[sum(int(c) * w for c, w in zip(value[:17], _CN_WEIGHTS, strict=True)) % 11]
    return value[17].upper() == check


def _ssn_ok(area: str, group: str, serial: str) -> bool:
    # The SSA never issues area 000, 666 or 900-999, group 00 or serial 0000.
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


_entropy = secret_model.entropy  # bits per character: random tokens score high, words and ids low


def _has_letter_and_digit(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# Values that are an identifier, a reference or a version by their own syntax, whatever name they sit under
# (passwords aside: a password may be any string): a version with pre-release or build metadata ("4.3.10-rc.2",
# "1.38.11+build.9727"), a lowercase namespace and a counter or short hash ("deps-c56f9e015584",
# "db-creds-1238", "orders:4821"), an ARN or URN. A key or token is random all through; a 16-hex tail is 64 bits.
_VERSION_VALUE = re.compile(r"v?\d+(?:\.\d+){1,3}(?:-[0-9a-z]+(?:\.[0-9a-z]+)*)?(?:\+[0-9a-z]+(?:[.-][0-9a-z]+)*)?")
_SLUG_ID_VALUE = re.compile(r"[a-z]{2,}(?:[-_][a-z]{2,}){0,3}[-_:/](?:[0-9]{1,16}|[0-9a-f]{4,16})")
_REFERENCE_VALUE = re.compile(r"(?:arn|urn):[a-z0-9-]*:")


def _identifier_value(value: str) -> bool:
    low = value.lower()
    return bool(_VERSION_VALUE.fullmatch(low) or _SLUG_ID_VALUE.fullmatch(value) or _REFERENCE_VALUE.match(low))


_TOKEN_ENDS = frozenset(" \t\n\r\"'`([{<,;=")


def _in_reference(low: str, at: int) -> bool:
    """Whether position `at` is inside an ARN or URN ("arn:aws:secretsmanager:…:secret:prod/db"): its parts are
    a path, not names and values."""
    if "arn:" not in low and "urn:" not in low:
        return False
    start = at
    while start > max(0, at - 120) and low[start - 1] not in _TOKEN_ENDS:
        start -= 1
    return low.startswith(("arn:", "urn:"), start)


# fmt: off
_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
    "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
    "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
    "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
    "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}
# fmt: on

# --- cards and IBANs ----------------------------------------------------------------------------

# Digits with single space/dash separators; the look-arounds keep us out of ids like PO-2026...,
# decimals (1234.56) and longer runs. ASCII classes: CJK text puts digits right after characters.
# Separators: space (NBSP and full-width spaces arrive as spaces), dash, dot or slash, one kind per number.
_CARD = re.compile(r"(?<![A-Za-z0-9_+.,/-])\d(?:[ ./-]?\d){12,22}(?![A-Za-z0-9_-]|[.,/]\d)")
_IBAN_HEAD = re.compile(r"\b[A-Za-z]{2}\d{2} $")
_SEPARATOR = re.compile(r"[ ./-]")
# A word naming a payment card just before the number: then a 15-19 digit number is a card even when it
# fails Luhn (many Chinese UnionPay debit cards do).
_CARD_CUE = re.compile(r"card|unionpay|bank|acct|account|卡|银联|银行|账户|账号|户名|cc\b")
_CARD_CUE_WINDOW = 40  # before the number; the cue may also follow it ("6212 ... 这张储蓄卡")
_CARD_CUE_AFTER = 16
# ... and a number introduced as an order, invoice, tracking or reference number is not a card.
_NOT_CARD_CUE = re.compile(
    r"(?:(?<![a-z])(?:order|invoice|tracking|reference|ref|ticket|booking|confirmation|shipment|parcel|waybill"
    r"|transaction|serial|policy|claim|case|part|model|account|member|membership|customer|item|sku|lot)(?![a-z])|订单|单号|运单|快递|发票|编号|流水号|工单|票号)[^\d]{0,12}$"
)


# A number under an id's name (a JSON member "id" or "user_id", "id 4539…"; not "ID card") is a key, not a card:
# database keys are long numbers, and one in ten passes Luhn. Cards only; an SSN or a national id keeps its rules.
_ID_BEFORE = re.compile(r"(?<![a-z])(?:id|ids|uuid|guid)(?![a-z])[^\d]{0,12}$")


def _nearest_cue_before(low: str, at: int) -> int:
    """Where the card cue closest before `at` (within the cue window) starts; -1 when there is none."""
    start = -1
    for m in _CARD_CUE.finditer(low, max(0, at - _CARD_CUE_WINDOW), at):
        start = m.start()
    return start


def _cards(t: _Text) -> Iterator[Span]:
    seg = t.seg
    for ws, we in t.windows(13):
        for m in _CARD.finditer(seg, ws, we):
            if _IBAN_HEAD.search(seg, max(0, m.start() - 5), m.start()):
                continue  # the body of an IBAN that failed its checksum: not a card either
            raw = m.group(0)
            groups = _SEPARATOR.split(raw)
            if len(groups) > 1 and (
                len(set(_SEPARATOR.findall(raw))) > 1 or len(groups[0]) != 4 or max(map(len, groups)) > 6
            ):
                continue  # cards are printed 4-4-4-4 / 4-6-5 with one kind of separator ("4555 1305662030056": two)
            digits = "".join(groups)
            not_card = _NOT_CARD_CUE.search(t.low, max(0, m.start() - 24), m.start())
            if (
                not_card
                and not _CARD_CUE.search(not_card.group(0))
                and _nearest_cue_before(t.low, m.start()) < not_card.start()
            ):
                continue  # "招商银行 … 流水号 2026…": the label next to the number says what it is
            cued = _CARD_CUE.search(t.low, max(0, m.start() - _CARD_CUE_WINDOW), m.start()) or _CARD_CUE.search(
                t.low, m.end(), m.end() + _CARD_CUE_AFTER
            )
            if 15 <= len(digits) <= 19 and (
                cued
                or (
                    digits.startswith("62")  # the UnionPay range
                    and len(digits) >= 16
                    and not not_card
                )
            ):
                yield m.start(), m.end(), "card"  # named a card: the whole number, Luhn or not
                continue
            if not_card or _ID_BEFORE.search(t.low, max(0, m.start() - 24), m.start()):
                continue
            # Longest run of whole groups that is a valid card: "4111 ... 1111 123" leaves the CVV out.
            for k in range(len(groups), 0, -1):
                digits = "".join(groups[:k])
                if 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_ok(digits):
                    yield m.start(), m.start() + len(" ".join(groups[:k])), "card"
                    break


# A card's verification code under its own name ("cvv: 123", {"cvc2": "0481"}, "安全码 123"): 3-4 digits. Not "csc" or
# "cid" (a customer, a content id).
_CVV = re.compile(
    r"(?<![a-z0-9])(?:cvv2?|cvc2?|card\s+verification(?:\s+(?:value|code))?|card\s+security\s+code|安全码)"
    r"(?:\s*(?:number|code|no\.?|#))?\s*(?:is|:|：|=|#)?\s*[\"'`]?(?P<v>\d{3,4})(?![\d.,]?\d|[a-z])"
)
_CVV_WORDS = ("cvv", "cvc", "verification", "security code", "安全码")


def _cvvs(t: _Text) -> Iterator[Span]:
    if any(w in t.low for w in _CVV_WORDS):
        for m in _CVV.finditer(t.low):
            yield m.start("v"), m.end("v"), "card"


_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]){11,30}")  # "de89 3704 ...", "IT36-E537-..."


def _ibans(t: _Text) -> Iterator[Span]:
    for ws, we in t.windows(6):
        pos = ws
        while (m := _IBAN.search(t.seg, pos, we)) is not None:
            # The next search starts inside this match: it may run on into a second IBAN ("DE89... and GB29...").
            pos = m.start() + 1
            raw = m.group(0)
            want = _IBAN_LENGTHS.get(raw[:2].upper())
            if want is None:
                continue
            # The match may run on into following words ("... 00 BIC COBADEFF"): cut at the country length.
            count, cut = 0, 0
            for i, ch in enumerate(raw):
                count += ch not in " -"
                if count == want:
                    cut = i + 1
                    break
            if not cut or raw[cut : cut + 1] not in ("", " ", "-"):
                continue  # too short, or the value goes on past the country's length
            if iban_ok(raw[:cut].replace(" ", "").replace("-", "")):
                pos = m.start() + cut
                yield m.start(), pos, "iban"


# --- secrets ------------------------------------------------------------------------------------

# Words that follow "password is ..." in ordinary talk about passwords, not a password itself.
_NOT_A_SECRET = frozenset(
    """is was the a an not too wrong incorrect invalid expired required correct right empty blank missing same
    different weak strong short long changed reset set updated sensitive case-sensitive stored saved hidden
    encrypted hashed secure insecure ok fine protected needed mandatory optional below above attached in on at
    for to and or but still now being also my your their his her our this that it something what which
    unknown forgotten lost visible shown displayed working broken locked unlocked valid generated rotated
    revoked managed shared sent please here there incorrectly mine yours again
    must should need needs contain contains require requires cannot will would expire expires be have has""".split()
)

# "password is x", "pwd: x", "the passcode for the safe is x", "set my password to x".
_PASSWORD = re.compile(
    r"(?:pass(?:word|wd|code|phrase)|pwd|pw|pin(?: ?(?:code|number|no\.?))?)s?"
    r"(?:\s+(?:for|of|on|from|in|at)\s+(?:the\s+|my\s+|our\s+)?[\w.@-]{1,40}(?:\s+[\w.@-]{1,20}){0,2}?)?"
    r"(?P<sep>[\"']?\s*(?:[:=：?]|->|=>)\s*|\s+(?:is|was)(?:\s+(?:now|still))?\s*:?\s+|\s+to\s+|(?P<zh>\s*(?:就是|是|为|為)\s*)"
    r"|(?P<bare>\s+(?=\S*[\d!@#$%^&*])))"
    r"[\"'“‘`]?(?P<v>[^\s\"'”’`，。；：！？、（）【】]+)"  # CJK punctuation ends the value: "pwd: x，order ..."
)
_PASSWORD_SYMBOLS = frozenset("!@#$%^&*-_+=~?")
# The value first: "It's X — that's the password for the router", "X is my wifi password".
_PASSWORD_AFTER = re.compile(
    r"(?P<v>[^\s\"'“”‘’`，。；：！？、（）【】]{4,})[\"'”’`]?\s*(?:[,;—–-]+\s*)?(?:that's|that\s+is|this\s+is|which\s+is|is|was"
    r"|=)\s+(?:the|my|our|your)\s+(?:[\w-]+\s+){0,2}?(?:pass(?:word|code|phrase)|pwd|pin)\b"
)
# "creds are bob@corp / s3cret", "login: jdoe / hunter2": a user, a slash, the password.
_CREDENTIAL_PAIR = re.compile(
    r"(?:creds?|credentials|login|log-in|username|user)(?:\s+(?:for|of|on|to)\s+(?:the\s+|my\s+|our\s+)?[\w.-]+(?:\s+[\w.-]+){0,2}?)?"
    r"\s*(?:are|is|:|=)?\s*[^\s/]{2,64}\s*/\s*[\"'`]?(?P<v>[^\s\"'`]{4,})"
    r"|(?:user(?:name)?|login|account)\s+[^\s/]{2,64}\s+(?:pass(?:word|phrase|code)?|pwd|pw)(?![a-z])\s*[:=]?\s*[\"'`]?"
    r"(?P<w>[^\s\"'`]{4,})"
)
# "my pass is X": "pass" alone only with an owner before it and "is" or ":" after.
_PASS_SHORT = re.compile(
    r"(?:my|the|our|your)\s+pass\s*(?:is|was|:|=)\s*[\"'“‘`]?(?P<v>[^\s\"'”’`，。；：！？、（）【】]+)"
)
_SET_VERB_BEFORE = re.compile(r"(?:set|change|changed|reset|update|updated)\s+(?:my|the|our|your)\s+(?:[a-z]+\s+)?$")
# Chinese: the value must be printable ASCII, so "密码是什么" (what is the password) is left alone.
_PASSWORD_ZH = re.compile(
    r"(?:密码|口令|密碼)\s*(?:就是|也是|还是|是|为|為|:|：|=|(?:改|换|设|设置|更改|修改)(?:成|为)了?)?\s*[\"'“‘]?(?P<v>[!-~]+)"
)
# Chinese key cues: 密钥 / 令牌 / 秘钥 then a random-looking value.
_KEY_ZH = re.compile(r"(?:密钥|秘钥|令牌|金钥)\s*(?:是|为|為|:|：|=)?\s*[\"'“‘]?(?P<v>[A-Za-z0-9+/=_.-]{16,})")

# Vendor token formats, recognised by their prefixes (case-sensitive, on the original text).
_TOKEN_PREFIXES = ("sk-", "sk_", "rk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox")
_TOKEN_PREFIXES_UPPER = ("AKIA", "ASIA", "AIza", "eyJ", "1//0", "ya29.")
_TOKEN_FORMATS = re.compile(
    r"(?:sk-(?:proj-|ant-(?:api\d{2}-)?)?[A-Za-z0-9_-]{20,}"
    r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{40,}"
    r"|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r"|1//0[A-Za-z0-9_-]{40,}|ya29\.[A-Za-z0-9_-]{30,}"
    r")(?![A-Za-z0-9_-])"
)
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S)
_BEARER = re.compile(r"bearer\s+(?P<v>[a-z0-9._~+/-]{12,}=*)")
_URL_CREDENTIALS = re.compile(r"://[^\s:/@]+:(?P<v>[^\s@/]+)@")
# Passwords on a command line: mysql -p'x' / -p"x", --password=x, sshpass -p x, PGPASSWORD=x, MYSQL_PWD=x.
_CLI_PASSWORD = re.compile(
    r"(?<![\w-])(?:-p(?P<q>['\"])(?P<v>[^'\"\s]{3,})(?P=q)|--password(?:=|\s+)['\"]?(?P<w>[^'\"\s]{3,})"
    r"|sshpass\s+-p\s*['\"]?(?P<x>[^'\"\s]{3,})|(?:pgpassword|mysql_pwd|redispassword)=['\"]?(?P<y>[^'\"\s]{3,}))"
)
# mysql's glued form, -pSECRET, only on a mysql client line ("-p8080" elsewhere is a port).
_MYSQL_GLUED = re.compile(r"\bmysql(?:dump|admin|sh)?\b[^\n]*?(?<![\w-])-p(?P<v>[^\s'\"-][^\s'\"]{3,})")
_BASIC_AUTH = re.compile(r"authorization\W{0,3}\s*basic\s+(?P<v>[a-z0-9+/]{12,}={0,2})")
# Session cookies by name: "connect.sid=…; theme=dark", "JSESSIONID=…".
_SESSION_COOKIE = re.compile(
    r"(?<![\w.-])(?:connect\.sid|sid|sessionid|session_id|session|sess|phpsessid|jsessionid|asp\.net_sessionid"
    r"|[a-z0-9]+_session|_session|auth_token|access_token|jwt|token)=(?P<v>[^;\s\"',]{16,})"
)

# key / token / secret / credential, then what follows. A bare "key" ("key: value pairs", "the key is
# 42") only counts with a qualifier before it (api key, access_key, OPENAI_API_KEY) or a random value.
_KEY_WORDS = ("key", "token", "secret", "credential", "session", "authorization", "cookie")
_KEY_WORD = re.compile(r"key|token|secret|credential|session|authorization|cookie")
_KEY_QUALIFIED = re.compile(r"(?:api|access|secret|private|signing|client|license|ssh|encryption)[_ -]?$")
_GLUED_PREFIXES = frozenset({"api", "access", "secret", "private", "auth", "bot", "refresh", "session", "client"})
_KEY_ASSIGN_TAIL = re.compile(
    r"s?(?:[_ -]?(?:access[_ -]?)?key|[_ -]?token|[_ -]?id)?"
    r"(?:\s+(?:for|of|on)\s+(?:the\s+)?[\w.-]{1,30})?"
    r"(?P<sep>[\"']?\s*(?:[:=：]|=>|->)\s*|\s+(?:is|was)\s*:?\s+)[\"'`]?(?P<v>[a-z0-9._~+/=:-]{6,})"
)
# A long random-looking string shortly after the word ("the deploy token for staging 7hG2kP9x...").
_KEY_ENTROPY_TAIL = re.compile(
    r"s?(?:[ \t]+[a-z]+){0,3}?[ \t]*(?:[\u4e00-\u9fff]{1,6}[ \t]*)?[:=：]?[ \t]*[\"'`]?(?P<v>[a-z0-9+/_=.-]{16,})"
)


# A random string with no cue at all ("here you go: 9fce...b0"): a 32/40/64-digit hex run, or 32+ characters of
# mixed-case letters and digits, is a secret unless the words before say it is a hash or an id, or it sits in
# a URL path or query.
_BARE_RANDOM = re.compile(
    r"(?<![A-Za-z0-9+/=_.-])(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{40}|[0-9a-fA-F]{32}|[A-Za-z0-9+_-]{32,}={0,2})"
    r"(?![A-Za-z0-9+/=_-])"
)
_HASH_CUE = re.compile(
    r"(?:commit|sha(?:1|224|256|384|512)?|ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|public|hash|checksum|digest|md5|revision|rev|etag|uuid|guid|fingerprint|object|blob|tree|merge|cherry-pick"
    r"|revert|git|build|image|id|ids|version|file|path|url|doc|document|sheet|video|record|row|ref|checkout|head|parent"
    r"|trace|traceparent|span|request|release|idempotency|cursor|page|pagination|continuation|marker|arn)s?\b[^\n]{0,24}$"
)


# A value assigned to a name that starts a word (logfmt "raw=…", env "X=…"): mixed-case random text is scanned
# like a bare one (hex there is mostly a release or commit hash). Not after "?" or "&" (a URL query).
_ASSIGNED_RANDOM = re.compile(
    r"(?:^|(?<=[\s;,(\[{]))[A-Za-z_][\w.-]{0,30}=(?P<v>[A-Za-z0-9+_.-]{32,}={0,2})(?![A-Za-z0-9+/=_-])"
)


def _bare_random(t: _Text) -> Iterator[Span]:
    seg = t.seg
    found = [(m.start(), m.end()) for m in _BARE_RANDOM.finditer(seg)]
    if "=" in seg:
        found += [(m.start("v"), m.end("v")) for m in _ASSIGNED_RANDOM.finditer(seg)]
    for start, end in found:
        yield from _random_value(t, start, end)


def _random_value(t: _Text, start: int, end: int) -> Iterator[Span]:
    value = t.seg[start:end]
    if not _has_letter_and_digit(value):
        return
    is_hex = all(c in "0123456789abcdefABCDEF" for c in value)
    if not is_hex and not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
        return
    if not is_hex and _entropy(value) < 4.0:
        return
    if _HASH_CUE.search(t.low, max(0, start - 40), start):
        return
    yield start, end, "secret"


def _formatted_secrets(t: _Text) -> Iterator[Span]:
    """Secrets by their own format, whatever they sit under: vendor tokens, private keys, bearer values, URL
    credentials."""
    seg, low = t.seg, t.low
    if any(p in low for p in _TOKEN_PREFIXES) or any(p in seg for p in _TOKEN_PREFIXES_UPPER):
        for m in _TOKEN_FORMATS.finditer(seg):
            if m.start() == 0 or not (seg[m.start() - 1].isalnum() or seg[m.start() - 1] in "_-"):
                yield m.start(), m.end(), "secret"
    if "private key-----" in low:
        for m in _PRIVATE_KEY.finditer(seg):
            yield m.start(), m.end(), "secret"
    for m in _BEARER.finditer(low):
        start, end, value = _value(m, seg)
        if _has_letter_and_digit(value) or (len(value) >= 20 and _entropy(value) >= 3.5):
            yield start, end, "secret"
    for m in _URL_CREDENTIALS.finditer(seg):
        yield m.start("v"), m.end("v"), "secret"


def _secrets(t: _Text) -> Iterator[Span]:
    seg, low = t.seg, t.low
    for m in _PASSWORD.finditer(low):
        if not _starts_word(low, m.start()):
            if low[m.start() - 1] != "_" and not seg[m.start() : m.start() + 3].isupper():
                continue  # "bypass", "compass"; DB_PASSWORD= and DBPASSWORD= are fine
        if m.group("sep").strip() == "?" and m.group("v").lower() in _NOT_A_SECRET:
            continue
        if m.group("sep").strip() == "to" and not _SET_VERB_BEFORE.search(low, max(0, m.start() - 26), m.start()):
            continue  # "the password to the vault" is not "set my password to ..."
        start, end, value = _value(m, seg)
        if value.lower() in _NOT_A_SECRET:
            continue
        if m.group("zh") is not None and not (value.isascii() and value.isprintable()):
            continue  # "密码是什么": a question about the password
        if m.group("bare") is not None and not _password_like(
            value, pin=low[m.start()] == "p" and low[m.start() + 1] == "i"
        ):
            continue  # "password reset link", "pin the note": a bare space needs a value that looks like one
        yield start, end, "secret"
    if "cred" in low or "login" in low or "user" in low:
        for m in _CREDENTIAL_PAIR.finditer(low):
            if _starts_word(low, m.start()):
                start, end, value = _value(m, seg, "v" if m.group("v") else "w")
                if value.lower() not in _NOT_A_SECRET and not value.lower().startswith(("pass", "pwd", "pw:", "pw=")):
                    yield start, end, "secret"  # "login: jdoe / password: x" is the password rule's
    if "pass" in low or "pin" in low or "pwd" in low:
        for pattern in (_PASSWORD_AFTER, _PASS_SHORT):
            for m in pattern.finditer(low):
                start, end, value = _value(m, seg)
                if value.lower() not in _NOT_A_SECRET and (
                    pattern is _PASS_SHORT
                    or _password_like(value, pin=False)
                    or (value.isdigit() and 4 <= len(value) <= 8)
                ):
                    yield start, end, "secret"
    if "密" in seg or "口令" in seg:
        for m in _PASSWORD_ZH.finditer(seg):
            start, end, _ = _value(m, seg)
            yield start, end, "secret"
    if "钥" in seg or "令牌" in seg:
        for m in _KEY_ZH.finditer(seg):
            start, end, value = _value(m, seg)
            if _has_letter_and_digit(value) and _entropy(value) >= 3.3:
                yield start, end, "secret"
    yield from _formatted_secrets(t)
    if "-p" in low or "password=" in low or "pwd=" in low:
        for m in _CLI_PASSWORD.finditer(low):
            group = next(g for g in ("v", "w", "x", "y") if m.group(g))
            if m.group(group).lower() not in _NOT_A_SECRET:
                yield m.start(group), m.end(group), "secret"
        if "mysql" in low:
            for m in _MYSQL_GLUED.finditer(low):
                yield m.start("v"), m.end("v"), "secret"
    if "basic" in low:
        for m in _BASIC_AUTH.finditer(low):
            yield m.start("v"), m.end("v"), "secret"
    if "=" in low:
        for m in _SESSION_COOKIE.finditer(low):
            value = m.group("v")
            if _has_letter_and_digit(value) or _entropy(value) >= 3.5:
                yield m.start("v"), m.end("v"), "secret"
    if any(w in low for w in _KEY_WORDS):
        for m in _KEY_WORD.finditer(low):
            yield from _keyed_secret(seg, low, m)
    if len(seg) >= 32:
        yield from _bare_random(t)
    yield from _assigned_by_name(t)


# A value is a secret by the meaning of the name it is assigned to (NAME=v, name: v, "Name": v, a header), not
# by how random it looks: the name's words (split at _ - . and camelCase) end in a password word, hold
# "secret", "token" or "credential", or end in "key" after a qualifier that does not name an identifier.
_ASSIGN_TAIL = r"[\"']?[ \t]*(?::=|=>|[:=：])[ \t]*[\"'`]?(?P<v>[^\s\"'`,;]{4,})"
_ASSIGNED = re.compile(r"(?<![\w.-])(?P<name>[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+){0,5})" + _ASSIGN_TAIL)
# A JSON key or metadata name as the redactor puts it before its value ("rabbitmq default pass: …"): spaces
# join its words, only at the start and before ": " (in prose, "token accepted sub=…" is sub's value).
_KEY_PREFIXED = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9]*(?: [A-Za-z0-9]+){1,5}): [\"'`]?(?P<v>[^\s\"'`,;]{4,})")
_NAME_SPLIT = re.compile(r"[ _.-]+|(?<=[a-z0-9])(?=[A-Z])")
_PASSWORD_NAMES = frozenset({"pass", "password", "passwd", "pwd", "passphrase", "passcode"})
_SECRET_NAMES = frozenset({"secret", "secrets", "token", "credential", "credentials", "apikey", "secretkey", "auth"})
# What a name ending in these words holds is about the secret, not the secret: token_type, password_policy.
_NOT_VALUE_NAMES = frozenset(
    """id ids name names type types url uri uris path file files length len expiry expires expiration ttl at
    in version hint hints policy policies count enabled required min max rotation rotated updated created
    changed reset endpoint header prefix format mode scope scopes kind algorithm alg hash hashed salt
    ref refs reference arn urn request requests total""".split()
)
# A name ending in these words names an identifier, a reference or a version (the name's last word is what it
# holds: token_id is an id, secret_arn a reference, next_page_token a cursor).
_ID_NOUNS = frozenset(
    """id ids uuid guid sku ref refs reference arn urn etag cursor checksum digest hash sha commit fingerprint
    version build revision rev url uri path kid""".split()
)
# "<x>_key" names an identifier, not a secret, after these words: idempotency_key, object_key, public_key.
_ID_KEY_QUALIFIERS = frozenset(
    """idempotency object public cache sort partition primary foreign routing dedup dedupe lookup row shard
    s3 storage file message i18n translation index map group event dict hash sort range composite natural
    surrogate unique license product""".split()
)
# ... and "<x>_token" after these: a page token is a cursor (next_page_token, NextToken, continuation_token).
_ID_TOKEN_QUALIFIERS = frozenset("page pagination continuation next cursor sync resume".split())
_ID_QUALIFIERS = _ID_KEY_QUALIFIERS | _ID_TOKEN_QUALIFIERS | {"publishable"}
_WORD_BEFORE = re.compile(r"([a-z0-9]+)[ _.-]?$")
_VALUE_WORDS = frozenset(
    {"true", "false", "null", "none", "yes", "no", "on", "off", "undefined", "enabled", "disabled"}
)


def names_identifier(name: str) -> bool:
    """Whether a key or field name names an identifier, a reference or a version by its last word ("order_id",
    "tokenId", "secret arn", "ETag", "next_page_token", "idempotency-key", "public key"): what it holds is no
    secret unless it is one by its own format. Two ids are credentials: Vault's "secret_id", and the access key
    id of AWS and every S3-compatible store (half of a key pair, kept and leaked with its secret)."""
    words = [w.lower() for w in _NAME_SPLIT.split(name) if w]
    if not words:
        return False
    if words[-1] in _ID_NOUNS:
        return not _CREDENTIAL_ID.search(" ".join(words))
    return words[-1] in ("key", "keys", "token", "tokens") and len(words) > 1 and words[-2] in _ID_QUALIFIERS


def _random_name_part(word: str) -> bool:
    """A part of a name that is itself an id ("auth-6eda9baed7-ornuq", a pod): then the name is an instance's."""
    runs = _DIGIT_RUNS.findall(word)
    return len(word) >= 5 and (word[0].isdigit() or len(runs) >= 2 or sum(map(len, runs)) >= 4)


_DIGIT_RUNS = re.compile(r"\d+")


def _name_means_secret(name: str, value: str) -> bool:
    parts = [w for w in _NAME_SPLIT.split(name) if w]
    words = [w.lower() for w in parts]
    if not words or words[-1] in _NOT_VALUE_NAMES or names_identifier(name) or any(map(_random_name_part, parts)):
        return False
    if words[-1] in _PASSWORD_NAMES:
        return True  # a password may be any word
    if _identifier_value(value):
        return False
    # A key or token is random: "auth: token accepted", "secret: classified" are words about it.
    random = _has_letter_and_digit(value) or (len(value) >= 16 and _entropy(value) >= 3.5)
    random = random or (len(value) >= 8 and value != value.lower() and value != value.upper())
    # "auth" names a service or a step ("auth.queue_depth", "auth_request") unless it is the name's last word.
    if any(w in _SECRET_NAMES and (w != "auth" or i == len(words) - 1) for i, w in enumerate(words)):
        return random
    return words[-1] == "key" and len(words) > 1 and words[-2] not in _ID_KEY_QUALIFIERS and random


def _assigned_by_name(t: _Text) -> Iterator[Span]:
    seg = t.seg
    if ":" not in seg and "=" not in seg and "：" not in seg:
        return
    head = _KEY_PREFIXED.match(seg)
    for m in [head, *_ASSIGNED.finditer(seg)] if head else _ASSIGNED.finditer(seg):
        value = m.group("v").rstrip(_TRAILING_PUNCT)
        low = value.lower()
        if len(value) < 4 or low in _NOT_A_SECRET or low in _VALUE_WORDS or value.startswith(("${", "{{", "<", "%")):
            continue
        if _name_means_secret(m.group("name"), value) and not _in_reference(t.low, m.start()):
            yield m.start("v"), m.start("v") + len(value), "secret"


def _password_like(value: str, pin: bool) -> bool:
    if pin:
        return value.isdigit() and 4 <= len(value) <= 8
    has_symbol = any(c in _PASSWORD_SYMBOLS for c in value[:-1]) or value[-1:] in "!#$%&*"
    return len(value) >= 6 and (_has_letter_and_digit(value) or has_symbol)


# "token accepted sub=…": a value after another name and its "=" is that name's.
_OWN_NAME = re.compile(r"[a-z][ \t]*=[ \t]*[\"'`]?$")
_OWN_NAME_HEAD = re.compile(r"[a-z_][a-z0-9_.-]{0,30}=")
_FOLLOWING_WORD = re.compile(r"s?[ _.-]?([a-z]+)\b")
_CREDENTIAL_ID = re.compile(r"(?:secret|access[ _.-]?key)[ _.-]?id$")


def _keyed_secret(seg: str, low: str, m: re.Match[str]) -> Iterator[Span]:
    start, after = m.start(), m.end()
    if _in_reference(low, start):
        return
    if not _starts_word(low, start):
        j = start
        while j > 0 and low[j - 1].isalpha():
            j -= 1
        if low[j:start] not in _GLUED_PREFIXES:
            return  # "monkey", "turnkey"
    if not _ends_word(low, after) and not (low[after] == "s" and _ends_word(low, after + 1)):
        return  # "keyboard", "tokenizer", "secretary"
    if m.group(0) in ("key", "token"):
        before = _WORD_BEFORE.search(low, max(0, start - 24), start)
        if before and before.group(1) in (_ID_KEY_QUALIFIERS if m.group(0) == "key" else _ID_TOKEN_QUALIFIERS):
            return  # idempotency_key, object_key, public_key, next_page_token: an identifier's name
    following = _FOLLOWING_WORD.match(low, after)
    if following and following.group(1) in _ID_NOUNS:
        if not _CREDENTIAL_ID.search(low, max(0, start - 12), following.end()):
            return  # "token id: tok_…", "key version 3", "secret arn": the value is the id's
    qualified = m.group(0) != "key" or bool(_KEY_QUALIFIED.search(low, max(0, start - 12), start))
    tail = _KEY_ASSIGN_TAIL.match(low, after) if qualified else None
    if tail:
        v_start, v_end, value = _value(tail, seg)
        if value.lower() not in _NOT_A_SECRET and not _identifier_value(value):
            assigned = tail.group("sep").strip() not in ("is", "was", "is:", "was:")
            # "token: expired" or "the token is invalid" are statuses; values have digits or mixed case.
            looks_random = _has_letter_and_digit(value) or (len(value) >= 16 and _entropy(value) >= 3.5)
            mixed = value != value.lower() and value != value.upper() and len(value) >= 8
            if looks_random or (assigned and mixed):
                yield v_start, v_end, "secret"
                return
    tail = _KEY_ENTROPY_TAIL.match(low, after)
    between = low[after : tail.start("v")] if tail else ""
    if tail and ((" " in between and _OWN_NAME.search(between)) or _OWN_NAME_HEAD.match(tail.group("v"))):
        tail = None
    if tail:
        v_start, v_end, value = _value(tail, seg)
        if _has_letter_and_digit(value) and _entropy(value) >= 3.3 and not _identifier_value(value):
            yield v_start, v_end, "secret"


# --- one-time codes -----------------------------------------------------------------------------

_OTP_VALUE = r"(?P<v>(?:g-)?(?:\d{2,4}(?:[ -]\d{2,4}){1,3}|\d{4,8}))"
# A unit after the number makes it a size or a count, not a code ("the code is 2048 lines").
# ... and so does a decimal or version going on ("the code 2024.1 release"), or a verb that explains an error code
# ("the code 4012 means the card was declined").
_NOT_A_CODE_AFTER = (
    r"(?![a-z0-9_-]|[.,]\d|[ \t]*(?:lines?|ms|s|secs?|seconds?|minutes?|mins?|bytes?|kb|mb|gb|%|px|chars?|characters"
    r"|loc|times|errors?|tests?|files?|tokens?|means|meant|indicates|signals|refers|stands)\b)"
)
_OTP_WORDS = ("code", "otp", "2fa", "one-time", "one time", "onetime", "authenticator", "authy", "mfa", "totp")
# A number someone texted or messaged: "the number the bank texted is 785931", "the digits they sent me: 4410".
_OTP_SENT = re.compile(
    r"(?:number|digits|code|pin)\s+(?:(?!is\b|was\b)[a-z'’-]+\s+){0,4}?(?:texted|sent|messaged|sms'?d|emailed|gave)"
    r"(?:\s+(?!is\b|was\b)[a-z'’-]+){0,3}?\s*(?:is|was|:|=)\s*:?\s*(?P<v>\d{4,8})(?![\d.,]\d)"
)
_OTP_ANCHOR = re.compile(r"passcode|code|otp|2fa|one[- ]?time|authenticator|authy|mfa|totp")
_DIGITS = re.compile(r"\d+")
# "code" alone is everywhere (error code, zip code, source code): it needs a qualifier before it.
_OTP_QUALIFIER = re.compile(
    r"(?:verification|security|auth|authentication|authorization|login|log-in|log in|sign-in|sign in|signin"
    r"|access|sms|text|2fa|mfa|otp|one-time|one time|onetime|confirmation|confirm|verify|two-factor|two factor|2-step"
    r"|step-up|stepup|step up|challenge|tfa|email|e-mail|dynamic"  # a step-up or e-mailed code, 动态码's English
    r"|use|enter|entered|type|typed|your|my|the|this|digit|digits|\d-digit|token"
    r"|(?:your|my)\s+[a-z][\w&'.-]*)\s+$"  # "your Lyft code is 4821": a service's name (not another code's noun)
)
# "the code they emailed me 176066", "the bank just sent 874943", "Verification: 2414".
_OTP_SENT_DIRECT = re.compile(
    r"(?:(?:code|otp|pin|passcode)\s+(?:[a-z'’-]+\s+){0,4}?|(?:bank|they|app|site|service)\s+(?:just\s+)?)"
    r"(?:texted|sent|emailed|messaged|gave)(?:\s+(?:me|us|you))?\s*[:=]?\s*(?P<v>\d{4,8})(?![\d.,]\d)"
    r"(?!\s*(?:units?|items?|dollars?|usd|eur|rmb|yuan|times|people|pcs|pieces|emails?|messages?|orders?|%))"
    r"|(?<![a-z])verification\s*[:：]\s*(?P<w>\d{4,8})(?![\d.,]\d)"
)
# A number followed by a plural noun counts it ("sent 4500 invoices", "sent 6636 push notifications"); not "… 4821
# is", "… 4821 as", "… 4821 via sms".
_COUNTED = re.compile(
    r"[ \t]+(?:(?!(?:via|by|in|to|on|at|from|for|over|through|as|is|was)\b)[a-z]+[ \t]+)?"
    r"(?!(?:is|was|as|has|its|this|us|yes|his|hers|ours|yours|theirs|sms)\b)[a-z]{2,}s\b"
)
_CODE_IS = re.compile(r"(?<![a-z])code'?s\s+(?P<v>\d{4,8})(?![\d.,]\d)")  # "Code's 0792"
# A noun before "code" that names another kind of code: "error codes 4012 and 4013", "94107 is the zip code".
_OTHER_CODE = re.compile(
    r"(?:zip|postal|post|area|country|currency|error|status|exit|return|response|reason|promo|promotional|coupon"
    r"|discount|voucher|gift|referral|invite|invitation|product|item|sku|airport|iata|booking|tracking|source|qr|bar"
    r"|cpt|icd|diagnosis|procedure|billing|tax|swift|bank|branch|sort|routing|fare|seat|station|city|region|store"
    r"|department|colou?r|style|dress|event|class|order|ticket|member|membership|customer|employee|student|course"
    r"|account|reference|case|invoice|shipment|room|table|flight|vehicle|model|part|serial|batch|lot|unit|program"
    r"|project|cost|budget|isbn|unicode|hex|meeting|join|game|result|action|transaction|service|language|locale|state"
    r"|airline|carrier|cabin|meal|campaign|channel|partner|category|revenue|processing|postcode|house)\s+$"
)
# "Auth code" and "confirmation code" also name a card network's approval and a booking's reference: near a
# payment's or a booking's words (and no sign-in's), they are that.
_AMBIGUOUS_QUALIFIER = frozenset({"auth", "authorization", "confirmation", "confirm"})
_PAYMENT_OR_BOOKING = re.compile(
    r"receipt|approved|card|charge|payment|purchase|transaction|terminal|merchant|hotel|reservation|booking|booked"
    r"|table|check-in|check in|flight|itinerary|order|stay|刷卡|消费|小票|交易|商户|预订|订单|酒店|入住|航班|机票"
)
_SIGN_IN = re.compile(
    r"sign[- ]?in|log[- ]?in|verif|one[- ]?time|otp|2fa|two[- ]factor|share|expire|valid for|验证|登录|泄露|有效"
)


# A member named for an approval code is a payment processor's (ISO 8583 field 38, printed on receipts): an API prints a
# one-time code as otp / verification_code / …, and an OAuth authorization code is long and random (a secret's rules).
_APPROVAL_KEY = re.compile(r"(?:^|\s)(?:auth|authori[sz]ation|approval)\s+code:\s$|^授权码:\s$")


_SENTENCE_END = re.compile(r"[.!?。！？;；\n](?:\s|$)|[。！？；\n]")


def _means_other_code(low: str, start: int, end: int) -> bool:
    """Whether an ambiguous cue at low[start:end] sits among a payment's or a booking's words, with no sign-in's in
    its sentence."""
    if not _PAYMENT_OR_BOOKING.search(low, max(0, start - 120), end + 120):
        return False
    head = max(0, start - 160)
    before = [m.end() for m in _SENTENCE_END.finditer(low, head, start)]
    after = _SENTENCE_END.search(low, end)
    return not _SIGN_IN.search(low, before[-1] if before else head, after.start() if after else end + 160)


_ONE_TIME_NOUN = re.compile(r"\s+(?:pass(?:word|code)|code|pin)")
# "… code is 482913", "… code: 482913", "the code, it's 482913".
_OTP_TAIL = re.compile(
    r"(?:\s+(?:pass(?:word|code)|code|pin|token|value|number))?(?:\s+(?:is|was)|\s*,?\s+it(?:'s|’s|\s+is|\s+was))?\s*[:：#=-]?\s*"
    r"(?:is\s+)?" + _OTP_VALUE + _NOT_A_CODE_AFTER
)
# "the OTP code you sent is 481516", "the code you texted me a minute ago is 872456": up to 8 words
# (letters only: no number, no sentence end) between the cue and "is/was" and the code.
_OTP_GAP_TAIL = re.compile(
    r"(?:\s+(?!is\b|was\b|says\b|reads\b|shows\b)[a-z][a-z'’-]*){0,8}?\s+(?:is|was|are|were|says|said|reads|shows"
    r"|showed|displays|gives|gave)\s*(?:me\s+)?:?\s*" + _OTP_VALUE + _NOT_A_CODE_AFTER
)
# "TOTP for the admin console: 602589", "the verification code for Acme: 482913": what the code is for, then a colon.
_OTP_FOR_TAIL = re.compile(
    r"\s+for\s+(?:[a-z][a-z'’-]*\s+){0,4}?[a-z][a-z'’-]*\s*[:：]\s*" + _OTP_VALUE + _NOT_A_CODE_AFTER
)
# Where a bare "code" came from names it a one-time code: "code from SMS: 482913", "code from the app: 4410".
_CODE_FROM = re.compile(
    r"\s+from\s+(?:the\s+|my\s+|your\s+)?(?:sms|text(?:\s+message)?|e-?mail|app|authenticator|phone|bank)\s*[:：]\s*"
    + _OTP_VALUE
    + _NOT_A_CODE_AFTER
)
# Qualifiers that only point at a code ("the code", "your code"): not enough for a label before a colon.
_POINTING = frozenset({"use", "enter", "type", "your", "my", "the", "this", "digit", "digits"})
# "Enter 314585 to verify your account", "use 4821 to sign in"
_OTP_ENTER = re.compile(
    r"(?:enter|use|type|input|submit)\s+(?:the\s+)?(?:code\s+)?(?P<v>\d{4,8})\s+(?:to|as|for)\s+(?:verify|sign|log"
    r"|confirm|complete|continue|authenticate|activate|reset|finish|proceed|your\s+(?:verification|login|otp))"
)
# "482913 is your verification code"
# "482913 is your verification code", "482913 — that's the code from the text", "482913 (the SMS code)"
_OTP_REVERSED = re.compile(
    r"(?P<v>(?:g-)?\d{4,8})(?:\s+(?:is|was|as)|\s*[—–,(-]\s*(?:(?:that|it)(?:'s|’s|\s+is|\s+was)\s+)?)\s*"
    r"(?:your|the|my)\s+(?:[\w-]+\s+){0,3}?(?:code|otp|pin|passcode)\b"
)
_OTP_ZH = re.compile(
    r"(?P<cue>验证码|校验码|动态码|动态密码|动态口令|一次性密码|登录码|登陆码|短信码|认证码|驗證碼|校驗碼|動態碼|動態密碼"
    r"|認證碼|一次性密碼|登入碼|确认码|授权码)(?:\s*[（(]\d{1,2}\s*位(?:数字|數字)?[)）])?"  # 验证码（6位）：…
    r"[^\d。！？!?\n号码碼]{0,10}?(?:是|为|為|:|：)?\s*" + _OTP_VALUE + r"(?!\d)"
)
_ZH_COUNT = re.compile(r"\s*(?:条|次|个|人|元|件|份|笔|张|秒|毫秒|天|小时)")  # a measure word: the number counts
# The code first: "482913（京东验证码）", "482913是您的验证码".
_OTP_ZH_REVERSED = re.compile(
    r"(?<![\d.,:/-])(?P<v>\d{4,8})\s*(?:[（(][^）)\d\n]{0,12}?|(?:是|为|為)\s*(?:您|你)?的?[^\d。！？\n]{0,8}?)"
    r"(?:验证码|校验码|动态码|动态密码|短信码|登录码|驗證碼)"
)
# An SMS that opens with the sender's name: "Telegram code: 48291", "<#> WhatsApp code 482-913". The name is
# capitalised and "code" is not (a Title-case key such as "ResultCode" reads "Result Code").
_BRAND_CODE = re.compile(
    r"(?:^|[\n>】\]]\s*)(?P<brand>[A-Z][A-Za-z0-9&'.-]{1,24})\s+code(?:\s+is)?\s*[:：]?\s*"
    + _OTP_VALUE.replace("(?:g-)?", "")
    + r"(?![A-Za-z0-9_-]|[.,]\d)"
)


def _otp_span(m: re.Match[str]) -> Span | None:
    """The code: 4-8 digits. Groups that run on into another number ("7305 666-12-3456") keep the first."""
    value, start = m.group("v"), m.start("v")
    groups = [g.end() for g in _DIGITS.finditer(value)]  # end offset of each digit group
    sizes = [len(g) for g in _DIGITS.findall(value)]
    total = sum(sizes)
    if 4 <= total <= 8:
        return start, m.end("v"), "otp"
    if total < 4:
        return None
    if sizes[0] >= 4:
        return start, start + groups[0], "otp"
    digits, end = 0, 0
    for size, group_end in zip(sizes, groups, strict=True):
        digits += size
        if digits > 8:
            break
        if digits >= 4:
            end = start + group_end
    return (start, end, "otp") if end else None


# "Code 434640 - do not share", "123456 (valid for 5 minutes)": a short number with the warning every one-time
# code message carries.
_OTP_WARNED = re.compile(
    r"(?<![\w.,/:-])(?P<v>\d{4,8})(?![\w,/:-]|\.\w|\s*(?:%|[a-z]{1,3}\b))[^\d\n]{0,30}?(?:do\s+not\s+share|don'?t\s+share"
    r"|never\s+share|not\s+share\s+(?:it|this)|do\s+not\s+disclose|valid\s+for\s+\d+\s*(?:min|minutes|mins)"
    r"|expires?\s+in\s+\d+\s*(?:min|minutes|mins|seconds)|请勿泄露|切勿泄露|不要告诉|分钟内有效)"
)


def _otps(t: _Text) -> Iterator[Span]:
    low = t.low
    if "share" in low or "disclose" in low or "valid for" in low or "expire" in low or "泄露" in low or "有效" in low:
        for m in _OTP_WARNED.finditer(low):
            named = _NOT_CARD_CUE.search(low, max(0, m.start() - 24), m.start())  # "order 552019 …", "quote …"
            yield m.start("v"), m.end("v"), _CLEARED if named else "otp"
    if any(w in low for w in _OTP_WORDS):
        for m in _OTP_ANCHOR.finditer(low):
            word = m.group(0)
            if not _starts_word(low, m.start()) or (m.start() and low[m.start() - 1] in _ASCII_ALNUM):
                continue  # "7fc92fa": "2fa" inside a hash
            qualifier = ""
            if word == "code":
                q = _OTP_QUALIFIER.search(low, max(0, m.start() - 24), m.start())
                if not q:
                    before = low[max(0, m.start() - 8) : m.start()].rstrip()
                    sent = _CODE_FROM.match(low, m.end())  # "code from SMS: 482913", opening its clause
                    if sent and not (before and before[-1].isalnum()):
                        yield sent.start("v"), sent.end("v"), "otp"
                    continue
                qualifier = q.group(0).split()[-1]
                if _OTHER_CODE.search(low, q.start(), m.start()):  # "your zip code is 94107", "my order code: 4821"
                    other = _OTP_TAIL.match(low, m.end())
                    if other:
                        yield other.start("v"), other.end("v"), _CLEARED
                    continue
                if qualifier in _AMBIGUOUS_QUALIFIER and _means_other_code(low, q.start(), m.end()):
                    # "the auth code on the receipt is 450467", "the hotel confirmation code is …"
                    other = _OTP_TAIL.match(low, m.end())
                    if other:
                        yield other.start("v"), other.end("v"), _CLEARED
                    continue
            if word.startswith("one") and not _ONE_TIME_NOUN.match(low, m.end()):
                continue
            tail = _OTP_TAIL.match(low, m.end()) or _OTP_GAP_TAIL.match(low, m.end())
            if tail is None and qualifier not in _POINTING:
                tail = _OTP_FOR_TAIL.match(low, m.end())
            span = _otp_span(tail) if tail else None
            if span:
                yield span
    if "texted" in low or "sent" in low or "messaged" in low or "sms" in low or "emailed" in low:
        for m in _OTP_SENT.finditer(low):
            if _starts_word(low, m.start()):
                yield m.start("v"), m.end("v"), "otp"
    if (
        "sent" in low
        or "texted" in low
        or "emailed" in low
        or "messaged" in low
        or "gave" in low
        or "verification" in low
    ):
        for m in _OTP_SENT_DIRECT.finditer(low):
            group = "v" if m.group("v") else "w"
            if group == "v" and _COUNTED.match(low, m.end("v")):
                yield m.start("v"), m.end("v"), _CLEARED  # "the app sent 1200 notifications": a count
                continue
            yield m.start(group), m.end(group), "otp"
    if "code's" in low or "codes " in low:
        for m in _CODE_IS.finditer(low):
            other = _OTHER_CODE.search(low, max(0, m.start() - 16), m.start())
            yield m.start("v"), m.end("v"), _CLEARED if other else "otp"
    if "enter" in low or "use" in low or "type" in low or "input" in low or "submit" in low:
        for m in _OTP_ENTER.finditer(low):
            if _starts_word(low, m.start()):
                yield m.start("v"), m.end("v"), "otp"
    if "your " in low or "the " in low or "my " in low:
        for m in _OTP_REVERSED.finditer(low):
            if m.start() == 0 or not low[m.start() - 1].isalnum():
                other = _OTHER_CODE.search(low, max(0, m.end() - 40), m.end() - len(m.group(0).split()[-1]))
                yield m.start("v"), m.end("v"), _CLEARED if other else "otp"  # "94107 is the zip code"
    if "码" in low or "碼" in low:
        for m in _OTP_ZH.finditer(low):
            approval = m.group("cue") in ("确认码", "授权码") and _means_other_code(low, m.start(), m.end())
            if approval or _ZH_COUNT.match(low, m.end()):  # "授权码 614143" on a receipt, "发送验证码 7765 条"
                yield m.start("v"), m.end("v"), _CLEARED
                continue
            span = _otp_span(m)
            if span:
                yield span
        for m in _OTP_ZH_REVERSED.finditer(low):
            if not _ZH_COUNT.match(low, m.end("v")):
                yield m.start("v"), m.end("v"), "otp"
    if " code" in low:
        for m in _BRAND_CODE.finditer(t.seg):
            brand = m.group("brand").lower()
            if not _OTHER_CODE.match(brand + " ") and not _OTP_QUALIFIER.match(brand + " "):
                span = _otp_span(m)
                if span:
                    yield span


# --- national ids -------------------------------------------------------------------------------

_SSN = re.compile(r"(?<![A-Za-z0-9_-])(?P<a>\d{3})(?P<s>[- ])(?P<g>\d{2})(?P=s)(?P<n>\d{4})(?![A-Za-z0-9_-])")
_SSN_KEYWORD = re.compile(
    r"(?:ssn|ss\s?#|social\s+security(?:\s+(?:number|no\.?|#))?|social(?=\s+(?:is|was|:|#)))\s*(?:is|was|:|#)?\s*:?\s*"
    r"(?P<v>(?P<a>\d{3})[- ]?(?P<g>\d{2})[- ]?(?P<n>\d{4}))(?!\d)"
)
_NINO = re.compile(
    r"(?<![A-Za-z0-9])(?P<v>[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D])(?![A-Za-z0-9])"
)
_NINO_BAD_PREFIX = frozenset({"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"})
_CN_ID = re.compile(r"(?<![0-9A-Za-z])[1-9]\d{16}[0-9Xx](?![0-9A-Za-z])")
# Ids introduced by a word that says what they are; the value must contain a digit.
_ID_WORDS = (
    "passport", "national", "tax", "driver", "licen", "nric", "aadhaar", "personnummer", "dni", "nie", "nif",
    "cpf", "social insurance",
)  # fmt: skip
_ID_NUMBER_HINT = re.compile(r"id(?:entity|entification)?\s+(?:card\s+)?(?:number|no|num|#)")
_ID_KEYWORD = re.compile(
    r"(?:passport(?:\s+(?:number|no\.?|num|#))?"
    r"|national\s+(?:id(?:entity)?|insurance)(?:\s+(?:card\s+)?(?:number|no\.?|num|#))?"
    r"|(?:id|identity|identification)\s+(?:card\s+)?(?:number|no\.?|num|#)"
    r"|tax\s+(?:id|identification)(?:\s+(?:number|no\.?))?"
    r"|driver'?s?\s+licen[cs]e(?:\s+(?:number|no\.?|#))?"
    r"|(?:social\s+insurance|nric|aadhaar|personnummer|dni|nie|nif|cpf)(?:\s+(?:number|no\.?|#))?)"
    r"\s*(?:is|:|：|=|#)?\s*(?P<v>[a-z0-9][a-z0-9-]{4,19})"
)
# "order ID number 44812" names an order, not a person.
_ID_OWNER_NOT_PERSON = re.compile(
    r"(?:order|customer|user|account|session|transaction|ticket|employee|invoice|tracking|request|member|job"
    r"|process|product|device|case|booking|reference|meeting)\s+$"
)
_ID_ZH_WORDS = ("身份", "护照", "護照", "社保", "社会保障")
_ID_ZH = re.compile(
    r"(?:身份证|身份證|护照|護照|社保|社会保障|居民身份)(?:号码|號碼|号|號|卡号)?\s*(?:是|为|為|:|：)?\s*"
    r"(?P<v>[A-Za-z0-9][A-Za-z0-9-]{4,19})"
)


def _national_ids(t: _Text) -> Iterator[Span]:
    seg, low = t.seg, t.low
    for ws, we in t.windows(6):
        for m in _NINO.finditer(seg, ws, we):
            if m.group("v")[:2] not in _NINO_BAD_PREFIX:
                yield m.start("v"), m.end("v"), "national_id"
    for ws, we in t.windows(9):
        for m in _SSN.finditer(seg, ws, we):
            if _NOT_CARD_CUE.search(t.low, max(0, m.start() - 24), m.start()):
                continue  # "policy number 330-22-1187", "order 123-45-6789"
            if _ssn_ok(m.group("a"), m.group("g"), m.group("n")):
                yield m.start(), m.end(), "national_id"
    for ws, we in t.windows(17):  # 17 digits and a check character that may be X
        for m in _CN_ID.finditer(seg, ws, we):
            if cn_id_ok(m.group(0).upper()):
                yield m.start(), m.end(), "national_id"
    if "ssn" in low or "social" in low or "ss#" in low or "ss #" in low:
        for m in _SSN_KEYWORD.finditer(low):
            if _starts_word(low, m.start()) and _ssn_ok(m.group("a"), m.group("g"), m.group("n")):
                yield m.start("v"), m.end("v"), "national_id"
    if any(w in low for w in _ID_WORDS) or _ID_NUMBER_HINT.search(low):
        for m in _ID_KEYWORD.finditer(low):
            if not _starts_word(low, m.start()):
                continue
            if _ID_OWNER_NOT_PERSON.search(low, max(0, m.start() - 20), m.start()):
                continue
            start, end, value = _value(m, seg)
            if any(c.isdigit() for c in value):
                yield start, end, "national_id"
    if any(w in seg for w in _ID_ZH_WORDS):
        for m in _ID_ZH.finditer(seg):
            if any(c.isdigit() for c in m.group("v")):
                yield m.start("v"), m.end("v"), "national_id"


# --- emails and phones --------------------------------------------------------------------------

_EMAIL_LOCAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")
_EMAIL_DOMAIN = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
    r"\.[A-Za-z]{2,24}\b"
)


def _emails(t: _Text) -> Iterator[Span]:
    # Anchored on each "@": walk left over the local part, match the domain to the right.
    seg = t.seg
    at = seg.find("@")
    while at > 0:
        start = at
        while start > 0 and at - start < 64 and seg[start - 1] in _EMAIL_LOCAL_CHARS:
            start -= 1
        while start < at and not seg[start].isalnum():
            start += 1  # a local part starts with a letter or digit
        before = seg[start - 1] if start else ""
        # "user:password@host" is a URL's credentials (a secret above), except in "mailto:".
        scheme = t.low.rfind("://", max(0, start - 80), start)
        url_userinfo = before == ":" and scheme >= 0 and not any(c.isspace() for c in seg[scheme:start])
        domain = _EMAIL_DOMAIN.match(seg, at + 1)
        if (
            start < at
            and domain
            and not url_userinfo
            and not ((before.isascii() and before.isalnum()) or before == "_")
        ):
            yield start, domain.end(), "email"
        at = seg.find("@", at + 1)


# E.164: "+" country code, then digit groups with at most one separator between them.
_PHONE_E164 = re.compile(r"(?<![A-Za-z0-9_+])\+\d{1,3}(?:[ .-]?(?:\(\d{1,4}\)|\d{1,5})){1,6}(?![A-Za-z0-9_-]|[.,]\d)")
# North American: (555) 123-4567, 555-123-4567, 1-800-555-1234. Area codes never start with 0 or 1.
_PHONE_US = re.compile(
    r"(?<![A-Za-z0-9_+$€£¥.,/:-])(?:1[ .-])?(?:\([2-9]\d{2}\)[ .-]?|[2-9]\d{2}(?P<s>[ .-]))\d{3}(?(s)(?P=s)|[ .-])\d{4}"
    r"(?![A-Za-z0-9_-]|[.,/:]\d)"
)
# Chinese mobile: 1[3-9] + 9 digits, optionally grouped 3-4-4.
_PHONE_CN = re.compile(r"(?<![A-Za-z0-9_+.-])1[3-9]\d(?:[ -]?\d{4}){2}(?![A-Za-z0-9_-]|[.,]\d)")
_PHONE_WORDS = ("phone", "tel", "mobile", "cell", "whatsapp", "fax", " me at", "电话", "手机", "联系方式")
_PHONE_KEYWORD = re.compile(
    r"(?:phone|tel|telephone|mobile|cell|whatsapp|fax|call\s+me\s+at|text\s+me\s+at|reach\s+me\s+at"
    r"|电话|手机|手机号|联系方式)"
    r"(?:\s*(?:number|no\.?|#|号码))?\s*(?:is|:|：|at)?\s*(?P<v>\+?\(?\d[\d ()./-]{5,18}\d)(?![A-Za-z0-9_-])"
)
_DATE_LIKE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}")


def _phones(t: _Text) -> Iterator[Span]:
    seg, low = t.seg, t.low
    for ws, we in t.windows(8):
        for m in _PHONE_E164.finditer(seg, ws, we):
            if 8 <= sum(c.isdigit() for c in m.group(0)) <= 15:
                yield m.start(), m.end(), "phone"
        for m in _PHONE_US.finditer(seg, ws, we):
            yield m.start(), m.end(), "phone"
        for m in _PHONE_CN.finditer(seg, ws, we):
            yield m.start(), m.end(), "phone"
    if "+" in seg and t.runs:
        # International numbers as Google's libphonenumber reads them: every country's number plan, any
        # grouping ("+44 (0)20 7946 0018", "+852 5123 4567"); only numbers valid for their country.
        for match in PhoneNumberMatcher(seg, "ZZ", leniency=Leniency.VALID):
            yield match.start, match.end, "phone"
    if any(w in low for w in _PHONE_WORDS):
        for m in _PHONE_KEYWORD.finditer(low):
            value = m.group("v")
            if not _starts_word(low, m.start()) or _DATE_LIKE.fullmatch(value.strip()):
                continue
            if 7 <= sum(c.isdigit() for c in value) <= 15:
                yield m.start("v"), m.end("v"), "phone"


def _learned_secrets(t: _Text, ruled: list[Span]) -> Iterator[Span]:
    """Tokens the learned model calls a secret by their shape and words around them, cue or not; tokens inside
    what the rules found (`ruled`) are left to them."""
    for start, end, _p in secret_model.shipped().spans(t.seg, t.low, ruled):
        yield start, end, "secret"


_DETECTORS: tuple[tuple[str, Detector], ...] = (
    ("secret", _secrets),
    ("national_id", _national_ids),
    ("card", _cards),
    ("card", _cvvs),
    ("iban", _ibans),
    ("otp", _otps),
    ("email", _emails),
    ("phone", _phones),
)
