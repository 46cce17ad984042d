"""Deterministic entity extraction from one turn (basic: names, ids, emails-free).

Finds capitalised names ("Sarah Chen", "New York City"), identifiers ("PO-20261028-0098", "INC-42"),
and amounts with a currency. Later issues add normalisation (aliases, canonical entities), typed
relations and time; this module stays pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = re.compile(r"\b([A-Z][a-z]+(?:[ -](?:[A-Z][a-z]+|of|de|van|von))*(?: [A-Z][a-z]+)?)\b")
_ACRONYM = re.compile(r"\b([A-Z]{2,6}s?)\b")
_NOT_ACRONYMS = frozenset({"OK", "I", "AM", "PM", "OMG", "LOL", "BTW", "TBH", "IMO", "FYI", "ASAP", "DM", "THE", "AND"})
_ID = re.compile(r"\b([A-Z]{2,6}-\d[\d-]{1,30}\d|[A-Z]{2,6}-\d)\b")
_AMOUNT = re.compile(
    r"(?:(?P<cur1>USD|EUR|GBP|CNY|JPY|\$|€|£|¥)\s?(?P<num1>\d[\d,]*(?:\.\d+)?))"
    r"|(?:(?P<num2>\d[\d,]*(?:\.\d+)?)\s?(?P<cur2>USD|EUR|GBP|CNY|JPY|dollars|euros))"
)
# Sentence-initial words and pronouns that are capitalised for grammar, not because they name things.
_STOP = frozenset(
    """I I'm I've I'll I'd A An The This That These Those It Its He She We They You Your My Our Their His Her
    Hi Hello Hey Thanks Thank Yes No Ok Okay Sure Well So And But Or If When What Where Why How Who Which
    Please Also Just Then There Here Do Does Did Is Are Was Were Be Been Can Could Would Should Will Let
    Oh Wow Great Good Nice Sorry Maybe Today Yesterday Tomorrow Not Any Some All Both Each Every As At In On
    Last Next This Tonight Once Now Later Soon Anyway Actually Really Totally Definitely Absolutely Hope Love
    By For From To Of With About After Before Since Until Into Over Under Monday Tuesday Wednesday Thursday
    Friday Saturday Sunday January February March April May June July August September October November
    December""".split()
)


@dataclass(frozen=True, slots=True)
class Mention:
    text: str
    type: str  # "name", "id", "amount"


def mentions(text: str) -> list[Mention]:
    """Entity mentions in order of first appearance, without duplicates (case-insensitive)."""
    found: dict[str, Mention] = {}
    for m in _ID.finditer(text):
        found.setdefault(m.group(1).lower(), Mention(m.group(1), "id"))
    for m in _AMOUNT.finditer(text):
        raw = m.group(0).strip()
        found.setdefault(raw.lower(), Mention(raw, "amount"))
    for m in _ACRONYM.finditer(text):
        if m.group(1).rstrip("s") not in _NOT_ACRONYMS and not any(m.group(1).lower() in key for key in found):
            found.setdefault(m.group(1).lower(), Mention(m.group(1), "name"))
    for m in _NAME.finditer(text):
        words = [w for w in m.group(1).split(" ") if w]
        while words and words[0] in _STOP:
            words.pop(0)
        while words and words[-1] in ("of", "de", "van", "von"):
            words.pop()
        name = " ".join(words)
        if len(name) < 2 or name in _STOP:
            continue
        if any(name.lower() in key for key in found):  # part of an id already found
            continue
        found.setdefault(name.lower(), Mention(name, "name"))
    return list(found.values())
