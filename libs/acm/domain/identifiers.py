"""Identifiers in free text: the ids an agent acts on (``INC-7``, ``SKU-48213``, ``#W2378156``, ``FQ8APE``,
``gift_card_9513926``, ``ana_souza_3668``, UUIDs), whatever system minted them.

No id format is listed: an identifier is a token that mixes letters and digits (joined by ``-`` or ``_``),
or ``#`` and digits, or a UUID, or a capitals-and-digits code that starts with a digit (``2FBBAH``, ``4BMN53``:
booking codes and the like are minted at random, so a fifth of them start with one). Words, plain numbers,
amounts, dates, times ("3pm", "10AM"), ordinals ("2nd"), versions ("v2.1") and units ("10ms", "100KB") are not
identifiers."""

from __future__ import annotations

import re
from functools import lru_cache

# A letter first (so "3pm", "2nd", "10ms" are not ids), then letters and digits, "-"/"_"-joined parts.
_TOKEN = re.compile(
    r"(?<![\w#@./:-])(#?[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*|#\d{3,}[A-Za-z0-9-]*|\d[A-Z0-9]*[A-Z][A-Z0-9]*)"
    r"(?![\w@]|[-_][A-Za-z0-9]|\.\w)"
)
# A digit-first code: capitals and digits only, at least 5 long, with a letter before its last 3 characters or
# more than 3 letters at the end, so that a number with a unit or time of day ("100KB", "10AM") is not one.
_DIGIT_FIRST = re.compile(r"\d[A-Z0-9]{4,}")
_NUMBER_UNIT = re.compile(r"\d+[A-Z]{1,3}")
_UUID = re.compile(r"(?<![\w-])([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(?![\w-])")
_VERSION = re.compile(r"^v\d+$", re.IGNORECASE)
# Standards and encodings written like ids: "UTF-8" names no record.
_NOT_IDS = frozenset({"UTF", "SHA", "ISO", "RFC", "TLS", "HTTP", "MD", "AES", "RSA", "UTC", "GMT", "COVID", "IPV"})
MIN_CHARS = 4


def is_identifier(token: str) -> bool:
    """A whole token (as the patterns above cut it) that names a record."""
    bare = token.lstrip("#")
    if _UUID.fullmatch(token):
        return True
    if len(bare) < MIN_CHARS - (1 if token.startswith("#") else 0) or not any(c.isdigit() for c in bare):
        return False
    if token.startswith("#"):
        return True
    if token[0].isdigit():
        return _DIGIT_FIRST.fullmatch(token) is not None and not _NUMBER_UNIT.fullmatch(token)
    if not any(c.isalpha() for c in bare) or _VERSION.match(bare):
        return False
    head = re.split(r"[-_]", bare, maxsplit=1)[0].upper()
    return head not in _NOT_IDS


def identifiers(text: str) -> list[str]:
    """The identifiers of ``text``, first mention first, each once."""
    return list(_identifiers(text))


@lru_cache(maxsize=16384)
def _identifiers(text: str) -> tuple[str, ...]:
    # The same turns, pins and memories are read at every Fetch of a session: cached.
    found = [m.group(1) for m in _UUID.finditer(text)]
    found += [m.group(1) for m in _TOKEN.finditer(text) if is_identifier(m.group(1))]
    return tuple(dict.fromkeys(found))


@lru_cache(maxsize=4096)
def _mention(identifier: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w#-]){re.escape(identifier)}(?![\w]|[-_][A-Za-z0-9])", re.IGNORECASE)


def mentions_identifier(text: str, identifier: str) -> bool:
    """``text`` names ``identifier`` as a whole token ("INC-7" is not named by "INC-70"), in any case."""
    return _mention(identifier).search(text) is not None
