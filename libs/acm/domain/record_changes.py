"""What a tool record's new version makes stale besides its older version (pure).

A record's versions share a slot (``record:<key>``), so a later result supersedes the earlier one. But the old
values also live in memories of another shape: the agent's prose ("PO-7 is draft now.", slotted ``po-7|status``
or not slotted at all) and its earlier calls (``update_po({"po_id": "PO-7", "status": "draft"})``). Nothing
superseded those, so a Fetch could show them, active, as the record's current state next to (or instead of)
the new record. A statement naming the record's key and holding a value that the key's field has just lost is
outdated by the result that changed it: the same id and field, a later value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from acm.domain.records import parse_fields

RECORD_SLOT = "record:"
MIN_VALUE_CHARS = 2  # a one-character value ("1", "y") is in too many sentences to say anything
_QUESTION_END = ("?", "？")


@dataclass(frozen=True, slots=True)
class RecordChange:
    """A record's fields that a new version changed: (old value, new value) per field."""

    key: str  # as the slot holds it (case-folded)
    changed: tuple[tuple[str, str], ...]
    kept: frozenset[str]  # every value of the new version, case-folded: still true wherever they are said


def record_key(slot: str) -> str:
    """The record key of a record slot ("record:po-7#2" → "po-7"), "" for another slot."""
    return slot[len(RECORD_SLOT) :].split("#", 1)[0] if slot.startswith(RECORD_SLOT) else ""


def _fields(memory_text: str) -> dict[str, str]:
    return parse_fields(memory_text.partition(": ")[2])  # after the "<speaker>: " a record memory starts with


def _telling(value: str, key: str) -> bool:
    """A value a sentence can state on its own: not the key, not a nested object or list, not one character."""
    v = value.strip()
    return len(v) >= MIN_VALUE_CHARS and v.casefold() != key and not v.startswith(("{", "[")) and "=" not in v


def record_change(slot: str, old_text: str, new_text: str) -> RecordChange | None:
    """The change from the record memory ``old_text`` to its successor ``new_text`` (same slot); None when no
    field a sentence could state changed."""
    key = record_key(slot)
    if not key:
        return None
    old, new = _fields(old_text), _fields(new_text)
    kept = frozenset(v.strip().casefold() for v in new.values())
    changed = tuple(
        (old[name].strip(), new[name].strip())
        for name in old.keys() & new.keys()
        if old[name].strip().casefold() != new[name].strip().casefold()
        and _telling(old[name], key)
        and old[name].strip().casefold() not in kept
    )
    return RecordChange(key, changed, kept) if changed else None


def _holds(value: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", text, re.IGNORECASE) is not None


def outdated(change: RecordChange, memory_text: str) -> bool:
    """Whether a (non-record) memory states one of the record's lost values as the key's: it names the key as a
    whole id, holds a field's old value and not that field's new one, and is not a question (a question states
    nothing)."""
    _speaker, sep, said = memory_text.partition(": ")
    said = said if sep else memory_text
    if said.rstrip().endswith(_QUESTION_END) or not _holds(change.key, said):
        return False
    return any(_holds(old, said) and not _holds(new, said) for old, new in change.changed)
