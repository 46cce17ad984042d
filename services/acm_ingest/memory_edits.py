"""The Memory API's writes, applied by ingest (the memories' owner): a correction (a new version that supersedes
the old), the deletion of one memory from every store, and an import. Each is one event (acm.memory.edits.v1);
each publishes what it changed, with the job's counts, as one MemoriesWritten (retrieve applies it to its read model
and reports the job DONE); the handler (acm_ingest.handlers.memory_edits) decodes the edit."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from acm.domain.instruction import Trust, instruction_verdict
from acm.domain.models import Layer, Memory, MemoryStatus, stable_id, utcnow
from acm.domain.pii import PiiRules, redact_text
from acm.domain.scope import Scope, Tier
from acm.domain.tokens import TokenCounter
from acm.ports.embedder import Embedder
from acm.ports.owners import SchemaSource
from acm.ports.stores import Cache, MemoryRepo
from acm.prefetch_state import bump_generations
from acm_ingest.pipeline import pii_rules
from acm_ingest.usecases import Changes, Events, WrittenMemory

CORRECTION_ROLE = "user"  # a correction is the client's statement of the fact, through the Memory API


@dataclass(frozen=True, slots=True)
class Correction:
    memory_id: str
    new_memory_id: str
    text: str
    source: str


@dataclass
class ApplyMemoryEdits:
    memories: MemoryRepo
    cache: Cache
    embedder: Embedder
    tokens: TokenCounter
    schemas: SchemaSource  # the architect's (acm.ports.owners)
    events: Events  # acm.memories.v1 tells retrieve's read model and vector index what changed
    now: Callable[[], datetime] = utcnow
    secret_model: bool = True  # the learned second opinion for secrets after the rules (ACM_SECRET_MODEL)

    async def update(self, scope: Scope, job_id: str, edit: Correction, at: datetime) -> dict[str, int]:
        """The new version (said at ``at``, the request's time) supersedes the memory; the old one stays,
        stale, pointing at it. A memory already gone or superseded is left as it is (counts say so)."""
        found = await self.memories.get(scope, [edit.memory_id])
        if not found or found[0].status is not MemoryStatus.ACTIVE:
            already = await self.memories.get(scope, [edit.new_memory_id])
            changes = Changes()
            if already:  # a redelivery: both versions again, in case the first event never went out
                await self._index(scope, changes, already, [*found, *already])
            counts = {"updated": 0, "already_applied": 1} if already else {"updated": 0, "not_active": 1}
            return await self._publish(scope, job_id, changes, counts)
        old = found[0]
        # As a turn's facts are: redacted (the gateway did so already; a direct publisher may not have) and
        # checked for instructions (a doubtful or ordering correction is kept marked, never a LONG memory).
        text = redact_text(edit.text, await self._rules(scope))
        trust = instruction_verdict(text, CORRECTION_ROLE).trust
        new = replace(
            old,
            memory_id=edit.new_memory_id,
            text=text,
            layer=Layer.MID if trust is not Trust.NORMAL and old.layer is Layer.LONG else old.layer,
            source_turn_ids=(edit.source,),
            created_at=at,
            updated_at=None,
            valid_from=at,
            valid_to=None,
            token_count=self.tokens.count(text),
            mention_count=1,
            access_count=0,
            superseded_by="",
            role=CORRECTION_ROLE,
            tool_name="",
            trust=str(trust),
        )
        stale = replace(old, status=MemoryStatus.STALE, superseded_by=new.memory_id, valid_to=at, updated_at=self.now())
        await self.memories.upsert([stale, new])
        changes = Changes()
        if new.tier is not Tier.USER:
            await self.memories.add_authors(scope, [new.memory_id])
            changes.authored.append(new.memory_id)
        await self._index(scope, changes, [new], [stale, new])
        return await self._publish(scope, job_id, changes, {"updated": 1})

    async def delete(self, scope: Scope, job_id: str, memory_id: str) -> dict[str, int]:
        """Every store: the row and its keyword index, its authorship (here), retrieve's copy, its vector point and
        its graph mentions (by the event)."""
        erased = await self.memories.delete(scope, [memory_id])
        if erased:
            await bump_generations(self.cache, scope, (Tier.USER, Tier.CUSTOMER, Tier.CLIENT))
        # The id goes out even when nothing was left to erase here: a redelivery must still reach retrieve's copy.
        return await self._publish(scope, job_id, Changes(erased=[memory_id]), {"deleted": len(erased)})

    async def import_(self, scope: Scope, job_id: str, memories: Sequence[Memory]) -> dict[str, int]:
        """Writes the memories (their ids already derived from the target user, so importing again rewrites the
        same rows) and indexes the active ones that are searched (facts, not turn previews)."""
        changes = Changes()
        if memories:
            rules = await self._rules(scope)
            memories = [replace(m, text=redact_text(m.text, rules)) for m in memories]
            await self.memories.upsert(memories)
            searched = [m for m in memories if m.status is MemoryStatus.ACTIVE and m.kind != "turn"]
            await self._index(scope, changes, searched, memories)
        return await self._publish(scope, job_id, changes, {"imported": len(memories)})

    async def _rules(self, scope: Scope) -> PiiRules:
        return pii_rules(await self.schemas.latest(scope), self.secret_model)

    async def _index(
        self, scope: Scope, changes: Changes, searched: Sequence[Memory], written: Sequence[Memory]
    ) -> None:
        """``written`` into the changes, the ``searched`` ones among them with their vectors."""
        changes.wrote(written)
        if searched:
            vectors = await asyncio.to_thread(self.embedder.embed, [m.text for m in searched])
            changes.indexed(WrittenMemory(m, vector) for m, vector in zip(searched, vectors, strict=True))
        # Prefetched bundles and assembled sessions may hold the old text.
        await bump_generations(self.cache, scope, {m.tier for m in written} | {Tier.USER})

    async def _publish(self, scope: Scope, job_id: str, changes: Changes, counts: dict[str, int]) -> dict[str, int]:
        await self.events.memories_written(
            scope, stable_id("memories", job_id), job_id, changes, counts, self.embedder.name, ""
        )
        return counts
