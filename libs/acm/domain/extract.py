"""Deterministic entity extraction from one sentence: mentions and the typed relations it states.

Finds capitalised names ("Sarah Chen", "New York City"), identifiers ("PO-20261028-0098", "INC-42") and
amounts with a currency (`mentions`), and relations such as works_at, reports_to or approved between two of
them (`typed_relations`). Normalisation (aliases, canonical entities) is acm.domain.entities; times are
acm.domain.timeparse. Pure: no IO.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

_NAME = re.compile(r"\b([A-Z][a-z]+(?:[ -](?:[A-Z][a-z]+|of|de|van|von))*(?: [A-Z][a-z]+)?)\b")
_ACRONYM = re.compile(r"\b([A-Z]{2,6}s?)\b")
_NOT_ACRONYMS = frozenset({"OK", "I", "AM", "PM", "OMG", "LOL", "BTW", "TBH", "IMO", "FYI", "ASAP", "DM", "THE", "AND"})
_ID = re.compile(r"\b([A-Z]{2,6}-\d(?:[\d-]{0,30}\d)?)\b")
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
    By For From To Of With About After Before Since Until Into Over Under Around Across Through Near Between
    During Within Without According Has Have Had Whose Whom Monday Tuesday Wednesday Thursday
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


# --- typed relations between two mentions of one sentence (deterministic) ----------------------------
# What stands between two mentions, as the whole of it, names the relation: "Sarah Chen works at Acme",
# "Tom reports to Sarah", "Priya approved PO-20261028-0098". A first-person sentence ("I work at Acme") is
# a slot of its speaker (acm.domain.facts.slot_of), not a relation between two mentions.
_BETWEEN: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (predicate, re.compile(rf"^\s*,?\s*(?:who\s+)?(?:{pattern})(?:\s+(?:the|a|an))?\s*$", re.I))
    for predicate, pattern in (
        ("works_at", r"(?:now\s+|still\s+)?(?:works|worked|is working|has worked)\s+(?:at|for)"),
        ("member_of", r"(?:has\s+)?joined"),
        ("reports_to", r"(?:now\s+)?reports\s+to"),
        ("manages", r"(?:manages|managed|leads|led|heads|headed|runs|ran)"),
        ("lives_in", r"(?:now\s+)?(?:lives|lived|is living|is based|moved|relocated|has moved)\s+(?:in|to)"),
        ("married_to", r"(?:married|is married to|was married to|got married to)"),
        ("approved", r"(?:has\s+|had\s+)?approved"),
        ("rejected", r"(?:has\s+|had\s+)?rejected"),
        ("requested", r"(?:has\s+|had\s+)?(?:requested|submitted|raised|filed|opened)"),
        ("owns", r"owns|owned"),
    )
)
_IS = re.compile(r"^\s*,?\s*(?:is|was)\s*$", re.I)
_ROLE_AFTER = re.compile(
    r"^(?:'s|’s)\s+(manager|boss|wife|husband|partner|sister|brother|mother|father|son|daughter|friend|"
    r"colleague|assistant|approver|lawyer|doctor|mentor)\b",
    re.I,
)
_AMOUNT_BETWEEN = re.compile(r"^\s*(?:is\s+)?(?:for|of|worth|totall?ing|at|amounts to|=)\s*$", re.I)
_PEOPLE_AND_THINGS = ("name", "id")


def typed_relations(sentence: str, found: Sequence[Mention]) -> list[tuple[str, str, str]]:
    """(subject, predicate, object) mention texts for the relations a sentence states between two of its
    mentions, in order of appearance. Deterministic and conservative: a pair counts only when the words
    between them are exactly a known pattern, so "Sarah met Tom at Acme" states no employment."""
    spans: list[tuple[int, int, Mention]] = []
    for m in found:
        start = sentence.find(m.text)
        if start >= 0:
            spans.append((start, start + len(m.text), m))
    spans.sort(key=lambda s: s[0])
    out: list[tuple[str, str, str]] = []
    for (_, a_end, a), (b_start, b_end, b) in itertools.pairwise(spans):
        between = sentence[a_end:b_start]
        if a.type == "id" and b.type == "amount" and _AMOUNT_BETWEEN.match(between):
            out.append((a.text, "amount", b.text))
            continue
        if a.type not in _PEOPLE_AND_THINGS or b.type not in _PEOPLE_AND_THINGS:
            continue
        role = _ROLE_AFTER.match(sentence[b_end:])
        if role and _IS.match(between):
            out.append((a.text, f"{role.group(1).lower()}_of", b.text))  # "Sarah is Tom's manager"
            continue
        for predicate, pattern in _BETWEEN:
            if pattern.match(between):
                out.append((a.text, predicate, b.text))
                break
    return list(dict.fromkeys(out))
