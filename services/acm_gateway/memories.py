"""The Memory API at the gateway (docs/memory-api.md): reads go to retrieve through the MemoryReader port;
writes are checked here and published for ingest, the memories' owner, to apply (a job id back, as Ingest).
The scope is already authenticated and authorised by the servicer (Authenticator.authorize)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from acm.domain.errors import InvalidRequest
from acm.domain.models import Job, JobStatus, Memory, MemoryStatus, Turn, new_id, stable_id
from acm.domain.pii import PiiRules, redact_text
from acm.domain.scope import Scope, Tier, edit_denial
from acm.metrics import job_reached
from acm.ports.memories import MemoryPage, MemoryQuery, MemoryReader, UsersPage
from acm.ports.stores import ApiKey, AuditLog, JobRepo, MemoryFilter
from acm_gateway.errors import PermissionDenied, Unavailable
from acm_gateway.usecases import AcceptTurn

MAX_BATCH = 500  # turns per IngestBatch, memories per ImportUser
EXPORT_PAGE = 200
MAX_SOURCE_CHARS = 256


class MemoryEvents(Protocol):
    """What the Memory API publishes (acm_gateway.memory_events.BusMemoryEvents); Unavailable when the bus
    refuses."""

    async def memory_updated(
        self, key: ApiKey, scope: Scope, job_id: str, old: Memory, new_memory_id: str, text: str, source: str
    ) -> None: ...

    async def memory_deleted(self, key: ApiKey, scope: Scope, job_id: str, memory_id: str) -> None: ...

    async def memories_imported(self, key: ApiKey, scope: Scope, job_id: str, memories: Sequence[Memory]) -> None: ...


def imported_id(scope: Scope, memory_id: str) -> str:
    """An imported memory's id in the target user: the same line imported again rewrites the same row."""
    return stable_id("import", scope.client_id, scope.customer_id, scope.user_id, memory_id) if memory_id else ""


@dataclass
class MemoryApi:
    reader: MemoryReader | None  # None: the reads answer UNAVAILABLE
    events: MemoryEvents
    jobs: JobRepo
    audit: AuditLog
    accept_turn: AcceptTurn

    def _read(self) -> MemoryReader:
        if self.reader is None:
            raise Unavailable("no memory reader (the retrieve service) is configured for this gateway")
        return self.reader

    # --- reads ------------------------------------------------------------------------------------------

    async def get(self, scope: Scope, memory_id: str) -> Memory:
        return await self._read().get(scope, memory_id)

    async def list_memories(self, scope: Scope, query: MemoryQuery) -> MemoryPage:
        return await self._read().list_memories(scope, query)

    async def users(self, client_id: str, page_size: int, page_token: str) -> UsersPage:
        return await self._read().users(client_id, page_size, page_token)

    async def history(self, scope: Scope, memory_id: str, slot: str) -> list[Memory]:
        return await self._read().history(scope, memory_id, slot)

    async def export(self, scope: Scope, page_size: int, page_token: str) -> MemoryPage:
        """The scope's user's own memories (user tier: every agent and session), stale versions included."""
        where = MemoryFilter(tiers=(Tier.USER,), include_stale=True)
        return await self._read().list_memories(scope, MemoryQuery(where, "", page_size or EXPORT_PAGE, page_token))

    # --- writes -----------------------------------------------------------------------------------------

    async def update(self, key: ApiKey, scope: Scope, memory_id: str, text: str, source: str) -> tuple[str, str]:
        """(job id, the new version's id)."""
        text, source = text.strip(), source.strip()
        if not text:
            raise InvalidRequest("text is empty: give the corrected text")
        if len(text.encode()) > self.accept_turn.max_turn_bytes:
            raise InvalidRequest(f"text is over {self.accept_turn.max_turn_bytes} bytes")
        if not source or len(source) > MAX_SOURCE_CHARS:
            raise InvalidRequest(
                f"source is required (1-{MAX_SOURCE_CHARS} characters): where the correction comes from, "
                "e.g. a turn id or 'support ticket 881'"
            )
        old = await self._writable(key, scope, memory_id, "update")
        if old.status is not MemoryStatus.ACTIVE:
            raise InvalidRequest(
                f"memory {memory_id!r} was superseded by {old.superseded_by!r}: correct the newest version"
            )
        job_id, new_memory_id = new_id(), new_id()
        # Redacted before it is published, as a turn is: a secret never reaches the bus, a log or a store.
        text = redact_text(text, await self._rules(scope))
        await self.events.memory_updated(key, scope, job_id, old, new_memory_id, text, source)
        await self._job(scope, job_id, "memory_update")
        return job_id, new_memory_id

    async def delete(self, key: ApiKey, scope: Scope, memory_id: str) -> str:
        await self._writable(key, scope, memory_id, "delete")
        job_id = new_id()
        await self.events.memory_deleted(key, scope, job_id, memory_id)
        await self._job(scope, job_id, "memory_delete")
        await self.audit.record(scope.client_id, "memory.delete", f"{memory_id} in {scope.session_key}")
        return job_id

    async def import_(self, key: ApiKey, scope: Scope, memories: Sequence[Memory]) -> str:
        """``memories``: ExportUser's lines, read into the scope's user (user tier)."""
        if not memories:
            raise InvalidRequest("jsonl has no memory: give ExportUser's lines")
        if len(memories) > MAX_BATCH:
            raise InvalidRequest(f"{len(memories)} memories in one call; import at most {MAX_BATCH} per call")
        limit = self.accept_turn.max_turn_bytes
        for i, m in enumerate(memories, start=1):
            if not m.text.strip() or len(m.text.encode()) > limit:
                raise InvalidRequest(f"jsonl memory {i} ({m.memory_id[:40]!r}): its text must be 1 to {limit} bytes")
        mine, rules = scope.owner(Tier.USER), await self._rules(scope)
        placed = [
            replace(
                m,
                memory_id=imported_id(scope, m.memory_id),
                text=redact_text(m.text, rules),
                owner=mine,
                superseded_by=imported_id(scope, m.superseded_by),
            )
            for m in memories
        ]
        job_id = new_id()
        await self.events.memories_imported(key, scope, job_id, placed)
        await self._job(scope, job_id, "memory_import")
        return job_id

    async def ingest_batch(self, key: ApiKey, turns: Sequence[Turn], traceparent: str) -> list[tuple[str, str]]:
        """(job id, event id) per turn, each accepted as by Ingest, in order. The turns are checked before any
        is published; a bus failure midway leaves the earlier ones accepted (retry with the same turn ids)."""
        if not turns:
            raise InvalidRequest("turns is empty")
        if len(turns) > MAX_BATCH:
            raise InvalidRequest(f"{len(turns)} turns in one call; send at most {MAX_BATCH} per IngestBatch")
        accepted = []
        for turn in turns:
            event_id = new_id()
            accepted.append((await self.accept_turn(key, turn, event_id, traceparent), event_id))
        return accepted

    async def _rules(self, scope: Scope) -> PiiRules:
        return self.accept_turn.rules(await self.accept_turn.schemas.latest(scope))

    async def _writable(self, key: ApiKey, scope: Scope, memory_id: str, what: str) -> Memory:
        """The memory, if the scope sees it (NotFound otherwise) and the key may change it: an agent key only its
        users' own (user-tier) memories; the shared tiers are the admin's."""
        memory = await self._read().get(scope, memory_id)
        reason = edit_denial(key.grant, memory.tier, what, memory_id)
        if reason:
            await self.audit.record(
                key.client_id, "request.denied", f"key {key.key_id} ({key.grant.role}) {what} {memory.tier} memory"
            )
            raise PermissionDenied(reason)
        return memory

    async def _job(self, scope: Scope, job_id: str, kind: str) -> None:
        await self.jobs.create(Job(job_id=job_id, scope=scope, kind=kind))
        job_reached(kind, JobStatus.PENDING)
