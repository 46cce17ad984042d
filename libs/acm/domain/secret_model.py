"""A learned second opinion for secrets said in prose (issue 18): passwords, passphrases, PINs, one-time codes and
keys handed over in a sentence ("the wifi one is Harbor2291!", "码是8841").

The rules in acm.domain.pii need a cue in a known phrasing; this model scores every token that could be a secret
by its shape, from the token's shape and the words around it, so a phrasing no rule lists can still count.
Logistic regression over hashed features; the weights ship with the package (secret_model.json, trained by
scripts/train_secret_model.py on tests/data/safety/make_train_secrets.py) and scoring is plain Python: no numpy
on the hot path. Pure: the weights are read once, on first use, from the package itself.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

WEIGHTS_FILE = "secret_model.json"
DIM = 1 << 15  # hashed feature space; only the weights of features seen in training are stored

# A token: printable ASCII without spaces, quotes, brackets, ":" and ","; CJK text around it ends it ("码是8841").
# Pure words, and words that end a sentence ("great!"), are skipped inside the regex engine: the lookahead
# wants a digit, or a symbol with more of the token after it.
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9!@#$%^&*_+=./~?\\|-])(?=[A-Za-z]*(?:[0-9]|[!@#$%^&*_+=./~?\\|-][A-Za-z0-9!@#$%^&*_+=./~?\\|-]))[A-Za-z0-9!@#$%^&*_+=./~?\\|-]{4,200}"
)
_LEAD = "=.-/~?|\\*_"  # "*" and "_": markdown emphasis ("**Password**")
_TRAIL = ".?|\\/-~*_"
_EMAIL = re.compile(r"[^@]+@[^@]+\.[A-Za-z]{2,}")
_ASSIGNED = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*=")  # "pass=Harbor22": the value is after the "="
_DIGIT = re.compile(r"[0-9]")
_DIGIT_RUN = re.compile(r"[0-9]+")
_WORD = re.compile(r"[a-z]+|[\u3400-\u9fff]")
_CJK = re.compile(r"[\u3400-\u9fff]")
_LEFT_CHARS = 64
_RIGHT_CHARS = 40
# Inside a whole artifact (a log, a dump, a table: this many candidates within _CROWD_CHARS either side) ids
# outnumber secrets ~80 to 1, and the prose threshold's flags there were 65 % right on generated artifacts
# (tests/data/safety/make_train_artifacts.py): such a token needs the model's crowd_threshold, chosen on them the
# same way (98 % precision). People's sentences never hold so many (the training lines: at most 4 in 99.9 %).
CROWD = 6
_CROWD_CHARS = 300

# Nearest cue to the left, by family: a feature, not a rule (the model weighs it with everything else).
_CUES: dict[str, str] = {
    **dict.fromkeys(("password", "passwd", "pass", "pw", "pwd", "passphrase", "passcode", "login", "creds"), "pw"),
    **dict.fromkeys(("pin", "combo", "unlock", "keypad"), "pin"),
    **dict.fromkeys(("code", "otp", "verification", "texted", "sms", "fa", "mfa", "totp"), "otp"),
    **dict.fromkeys(("key", "token", "secret", "bearer", "apikey", "credential", "credentials"), "key"),
}
_CUES_ZH = {"密码": "pw", "口令": "pw", "码": "otp", "验证": "otp", "密钥": "key", "令牌": "key", "钥": "key"}


@dataclass(frozen=True, slots=True)
class Candidate:
    start: int
    end: int
    value: str


def candidates(text: str) -> Iterator[Candidate]:
    """Tokens of `text` shaped like a secret: 4-8 digits, letters with digits or symbols, long random strings."""
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        value = m.group(0)
        if value.startswith("//"):
            continue  # a URL's host and path
        # "--from-literal=password=Harbor22": the value after a flag's dashes and the last "name="
        dashes = len(value) - len(value.lstrip("-"))
        start += dashes
        value = value[dashes:]
        while (assigned := _ASSIGNED.match(value)) and assigned.end() < len(value):
            start += assigned.end()
            value = value[assigned.end() :]
        lead = len(value) - len(value.lstrip(_LEAD))
        trail = len(value) - len(value.rstrip(_TRAIL))
        if lead or trail:
            value = value[lead : len(value) - trail]
            start += lead
        end = start + len(value)
        if _shaped_like_secret(value) and "//" not in value and not _EMAIL.fullmatch(value):
            yield Candidate(start, end, value)


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = frozenset("0123456789abcdefABCDEF")


def _shaped_like_secret(value: str) -> bool:
    """What a person hands over: a PIN or code, a password, a passphrase. Long random strings (keys, digests, ids)
    are the rules' (vendor prefixes, cues, names), and paths, UUIDs and hex runs are identifiers."""
    n = len(value)
    if n < 4 or n > 40 or "/" in value:
        return False
    digits = sum(c.isdigit() for c in value)
    letters = sum(c.isalpha() for c in value)
    symbols = n - digits - letters
    if digits == n:
        return n <= 8
    if (n >= 12 and all(c in _HEX for c in value)) or _UUID.fullmatch(value):
        return False
    if letters and digits:
        return n >= 5
    if letters and symbols:  # "P@ssw0rd", "maple-tiger-river"; not "great!" or "self-care"
        inner = [c for c in value[:-1] if not c.isalnum()]
        return n >= 8 and (len(inner) >= 2 or any(c != "-" for c in inner))
    if digits and symbols:
        return digits >= 4 and n >= 6
    return False


def _bucket(n: float, edges: tuple[float, ...]) -> int:
    for i, edge in enumerate(edges):
        if n < edge:
            return i
    return len(edges)


def _shape(value: str) -> str:
    out: list[str] = []
    for ch in value:
        c = "A" if "A" <= ch <= "Z" else "a" if "a" <= ch <= "z" else "9" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out[:10])


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def features(text: str, low: str, cand: Candidate) -> list[str]:
    """The named features of one candidate; `low` is `text` lowered (same length)."""
    v = cand.value
    n = len(v)
    digits = len(_DIGIT.findall(v))
    upper = v != v.lower()
    lower = v != v.upper()
    symbol = not v.isalnum()
    classes = f"{'U' if upper else ''}{'l' if lower else ''}{'d' if digits else ''}{'s' if symbol else ''}"
    run = max(map(len, _DIGIT_RUN.findall(v)), default=0)
    feats = [
        "bias",
        f"len:{_bucket(n, (5, 6, 7, 8, 9, 12, 16, 24, 40))}",
        f"cls:{classes}",
        f"run:{_bucket(run, (1, 4, 5, 6, 7, 8, 9, 12))}",
        f"ent:{_bucket(entropy(v), (2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0))}",
        f"shape:{_shape(v)}",
        f"dfrac:{_bucket(digits / n, (0.2, 0.5, 0.8, 1.0))}",
    ]
    if all(c in "0123456789abcdef" for c in v.lower()) and n >= 7:
        feats.append("hex")
    if v.isdigit() and n == 4 and v[:2] in ("19", "20"):
        feats.append("yearlike")
    if v.isdigit() and v[0] == "0":
        feats.append("lead0")
    left = low[max(0, cand.start - _LEFT_CHARS) : cand.start]
    right = low[cand.end : cand.end + _RIGHT_CHARS]
    lw = [w for w in _WORD.findall(left) if not _CJK.fullmatch(w)][-6:]
    rw = [w for w in _WORD.findall(right) if not _CJK.fullmatch(w)][:4]
    feats += [f"l:{w}" for w in lw]
    feats += [f"r:{w}" for w in rw]
    if lw:
        feats.append(f"l1:{lw[-1]}")
        feats.append(f"l1c:{classes}:{lw[-1]}")
    if len(lw) > 1:
        feats.append(f"l2:{lw[-2]} {lw[-1]}")
    if rw:
        feats.append(f"r1:{rw[0]}")
    # Chinese: characters and bigrams of the nearest CJK run on each side.
    lz = "".join(_CJK.findall(left[-12:]))[-6:]
    rz = "".join(_CJK.findall(right[:10]))[:4]
    feats += [f"lz:{lz[i : i + 2]}" for i in range(len(lz) - 1)]
    feats += [f"rz:{rz[i : i + 2]}" for i in range(len(rz) - 1)]
    if lz:
        feats.append(f"lz1:{lz[-1]}")
    if rz:
        feats.append(f"rz1:{rz[0]}")
    before = left.rstrip()
    feats.append(f"pb:{before[-1] if before else '^'}")
    feats.append(f"gap:{_bucket(len(left) - len(before), (1, 2, 3))}")
    after = right.lstrip()
    feats.append(f"pa:{after[0] if after else '$'}")
    cue, distance = _nearest_cue(lw, left)
    feats.append(f"cue:{cue}:{distance}")
    feats.append(f"cuec:{cue}:{classes}")
    return feats


def _nearest_cue(left_words: list[str], left: str) -> tuple[str, int]:
    """The family of the cue nearest on the left and its distance in words (0: right before), or none."""
    for i, w in enumerate(reversed(left_words)):
        family = _CUES.get(w)
        if family:
            return family, min(i, 5)
    tail = left[-12:]
    for cue, family in _CUES_ZH.items():
        if cue in tail:
            return family, 0
    return "none", 6


@lru_cache(maxsize=1 << 16)  # feature names repeat (shapes, buckets, common words): skip the encode and crc
def feature_index(name: str) -> int:
    return zlib.crc32(name.encode("utf-8")) & (DIM - 1)


@dataclass(frozen=True, slots=True)
class SecretModel:
    weights: dict[int, float]
    bias: float
    threshold: float
    crowd_threshold: float = 1.0  # inside a whole artifact (CROWD); 1.0: silent there

    def probability(self, text: str, low: str, cand: Candidate) -> float:
        w = self.weights
        z = self.bias + sum(w.get(feature_index(f), 0.0) for f in features(text, low, cand))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def spans(
        self, text: str, low: str | None = None, taken: Sequence[tuple[int, int, str]] = ()
    ) -> Iterator[tuple[int, int, float]]:
        """(start, end, probability) of each candidate at or above the threshold; candidates overlapping a span
        in `taken` (what the rules found) are not scored."""
        low = text.lower() if low is None else low
        if len(low) != len(text):
            low = text  # a character that lowers to two: lose case-folding, keep offsets
        cands = list(candidates(text))
        starts = [c.start for c in cands]
        for cand in cands:
            if taken and any(cand.start < e and cand.end > s for s, e, _k in taken):
                continue
            bar = self.crowd_threshold if len(cands) >= CROWD and crowded(starts, cand) else self.threshold
            if bar >= 1.0:
                continue
            p = self.probability(text, low, cand)
            if p >= bar:
                yield cand.start, cand.end, p


def crowded(starts: Sequence[int], cand: Candidate) -> bool:
    """Whether `cand` sits among CROWD or more candidates (itself included) within _CROWD_CHARS either side;
    `starts`: every candidate's start, in order."""
    return bisect_right(starts, cand.end + _CROWD_CHARS) - bisect_left(starts, cand.start - _CROWD_CHARS) >= CROWD


def from_json(data: dict[str, object]) -> SecretModel:
    raw = data["weights"]
    assert isinstance(raw, dict)
    bias, threshold = data["bias"], data["threshold"]
    assert isinstance(bias, float | int) and isinstance(threshold, float | int)
    crowd = data.get("crowd_threshold", 1.0)
    assert isinstance(crowd, float | int)
    return SecretModel({int(k): float(v) for k, v in raw.items()}, float(bias), float(threshold), float(crowd))


@lru_cache(maxsize=1)
def shipped() -> SecretModel:
    """The model that ships in the package (read once)."""
    text = resources.files("acm.domain").joinpath(WEIGHTS_FILE).read_text("utf-8")
    return from_json(json.loads(text))
