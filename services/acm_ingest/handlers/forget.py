"""acm.forget.v1 → erase memories and graph nodes of the scope; finishes the forget job."""

from __future__ import annotations

from dataclasses import dataclass

from acm.auth import verify_envelope
from acm.convert import forget_level
from acm.domain.models import JobStatus
from acm.envelopes import decode
from acm.ports.bus import Record
from acm.ports.stores import ApiKeyRepo, AuditLog, JobRepo, ProcessedEvents
from acm_ingest import GROUP
from acm_ingest.usecases import ForgetScope


@dataclass
class ForgetHandler:
    forget: ForgetScope
    jobs: JobRepo
    processed: ProcessedEvents
    audit: AuditLog
    api_keys: ApiKeyRepo

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "forget_requested")
        if await self.processed.seen(GROUP, env.event_id):
            return
        await verify_envelope(env, scope, self.api_keys, self.audit)
        level = forget_level(env)
        counts = await self.forget(scope, level)
        await self.audit.record(scope.client_id, "forget", f"{level.value} of {scope.session_key}: {counts}")
        await self.jobs.finish(scope, env.forget_requested.job_id, JobStatus.DONE, counts)
        await self.processed.mark(GROUP, env.event_id)
