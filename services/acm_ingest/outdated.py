"""The statements a tool record's new version outdates (acm.domain.record_changes): found among the memories
that name the record's key, made stale pointing at the new version, in the same write as the turn's facts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from acm.domain.facts import RECORD_KIND
from acm.domain.models import Memory, MemoryStatus
from acm.domain.record_changes import RecordChange, outdated, record_change
from acm.domain.scope import Scope
from acm.ports.stores import MemoryRepo

# Memories naming a changed key read per turn, newest first. An older statement was read when an earlier
# change of the key was written (each change reads the statements said before it).
NAMING_READ = 200
_NOT_STATEMENTS = frozenset({RECORD_KIND, "turn", "flagged_episode"})  # records have their slot; turns are raw


async def outdated_statements(
    memories: MemoryRepo, scope: Scope, superseded: Mapping[str, Memory], facts: Sequence[Memory], now: datetime
) -> dict[str, Memory]:
    """The active statements (prose, tool calls) that name a record whose new version among ``facts`` changed
    a field they state, stale, by memory id. ``superseded``: what the facts made stale already (the records'
    older versions among them)."""
    by_id = {f.memory_id: f for f in facts}
    changes: list[tuple[RecordChange, Memory]] = []
    for old in superseded.values():
        new = by_id.get(old.superseded_by)
        if old.kind != RECORD_KIND or new is None or new.status is not MemoryStatus.ACTIVE:
            continue
        change = record_change(old.slot, old.text, new.text)
        if change is not None:
            changes.append((change, new))
    if not changes:
        return {}
    keys = list(dict.fromkeys(c.key for c, _ in changes))
    out: dict[str, Memory] = {}
    for said in await memories.phrase_search(scope, keys, NAMING_READ):
        if said.kind in _NOT_STATEMENTS or said.memory_id in superseded or said.memory_id in by_id:
            continue
        for change, new in changes:
            # Only what was said before the new result; a doubtful result never outdates a trusted statement.
            if said.created_at > new.created_at or (said.trusted and not new.trusted):
                continue
            if outdated(change, said.text):
                out[said.memory_id] = replace(
                    said,
                    status=MemoryStatus.STALE,
                    superseded_by=new.memory_id,
                    valid_to=new.valid_from or new.created_at,
                    updated_at=now,
                )
                break
    return out
