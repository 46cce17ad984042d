"""What both of ingest's job handlers (turns, memory edits) do around their own step: skip an event already
applied (event_id), verify the envelope's signature and its key's rights in the claimed scope, mark the event
applied after the step; and fail the job of an event that can never be applied."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, NoReturn

from acm.auth import verify_envelope
from acm.domain.models import JobStatus
from acm.domain.scope import Action, Scope
from acm.envelopes import decode
from acm.job_events import JobEvents
from acm.metrics import job_reached
from acm.ports.bus import PermanentError, Record
from acm.ports.owners import KeySource
from acm.ports.stores import ApiKey, AuditLog, ProcessedEvents
from acm.v1 import events_pb2
from acm_ingest import GROUP


@dataclass(kw_only=True)
class JobEventHandler(ABC):
    """A handler of one Envelope body that belongs to a job (subclasses: dataclasses with their use case)."""

    body: ClassVar[str]  # the Envelope body the topic carries
    keys: KeySource  # the gateway's API keys (acm.ports.owners)
    jobs: JobEvents
    processed: ProcessedEvents
    audit: AuditLog

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, self.body)
        if await self.processed.seen(GROUP, env.event_id):
            return
        key = await verify_envelope(env, scope, self.keys, self.audit, self.action(env))
        await self.handle(env, scope, key)
        await self.processed.mark(GROUP, env.event_id)

    @abstractmethod
    def action(self, env: events_pb2.Envelope) -> Action:
        """What the event asks of its signing key, as the gateway names it for the same request (the key's grant
        must allow it in the claimed scope: a key publishing straight to the bus has no more rights there)."""

    @abstractmethod
    async def handle(self, env: events_pb2.Envelope, scope: Scope, key: ApiKey) -> None:
        """The handler's own step, on a verified event (signed by ``key``) not applied before (a subclass without it
        fails at construction, not at its first record)."""

    async def fail(self, scope: Scope, job_id: str, kind: str, exc: Exception) -> NoReturn:
        """The event can never be applied: its job FAILED with the reason (acm.jobs.v1), the record to the
        dead letters."""
        await self.jobs.finished(scope, job_id, JobStatus.FAILED, {}, str(exc))
        job_reached(kind, JobStatus.FAILED)
        raise PermanentError(str(exc)) from exc
