"""The one acm.forget.v1 handler. Every service that holds data of a scope subscribes it with what it erases
(its own data only). Those whose share a Fetch could still return (ingest: the memories and the graph; retrieve:
its copy of the memories, the vectors and the pools) also pass a ForgetJob: each reports its part of the job DONE
on acm.jobs.v1, and the gateway (the jobs' owner) marks the job DONE once every part in FORGET_PARTS did."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from acm.auth import verify_envelope
from acm.convert import forget_level
from acm.domain.models import JobStatus
from acm.domain.scope import Action, ForgetLevel, Scope
from acm.envelopes import decode
from acm.job_events import JobEvents
from acm.ports.bus import Record
from acm.ports.owners import KeySource
from acm.ports.stores import AuditLog, ProcessedEvents

# What a service erases for a Forget: idempotent (erasing twice is a no-op), returning counts by kind, a
# count, or nothing.
Erase = Callable[[Scope, ForgetLevel], Awaitable[Mapping[str, int] | int | None]]

# The consumer groups whose erasure a Forget's job waits for (each reports its part; acm.job_events.merge_part).
FORGET_PARTS = ("ingest", "retrieve")


@dataclass(frozen=True)
class ForgetJob:
    """A part of the forget job: handles an event once, audits the erasure and reports its part (named by its
    group, one of FORGET_PARTS) DONE with its counts."""

    group: str
    jobs: JobEvents
    processed: ProcessedEvents

    def __post_init__(self) -> None:
        if self.group not in FORGET_PARTS:
            raise ValueError(f"group {self.group!r} is not a part of a forget job ({', '.join(FORGET_PARTS)})")


@dataclass
class ForgetHandler:
    erase: Erase
    keys: KeySource  # the gateway's API keys (acm.ports.owners)
    audit: AuditLog
    job: ForgetJob | None = None

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "forget_requested")
        if self.job is not None and await self.job.processed.seen(self.job.group, env.event_id):
            return
        level = forget_level(env)
        # The key's rights as the gateway checks the Forget RPC: an agent key publishing to the bus itself erases
        # nothing outside its customers (users), and never a whole customer or client.
        await verify_envelope(env, scope, self.keys, self.audit, Action.forget(level))
        erased = await self.erase(scope, level)
        if self.job is None:
            return
        counts = dict(erased) if isinstance(erased, Mapping) else {}
        await self.audit.record(scope.client_id, "forget", f"{level.value} of {scope.session_key}: {counts}")
        await self.job.jobs.finished(
            scope, env.forget_requested.job_id, JobStatus.DONE, counts, part=self.job.group, parts=FORGET_PARTS
        )
        await self.job.processed.mark(self.job.group, env.event_id)
