"""acm.turns.v1 → memories. Verifies the envelope's signature and is idempotent on event_id. A turn it cannot
process fails its job (acm.jobs.v1); else the use case publishes what it wrote with the job's counts, and retrieve
reports the job DONE once that is retrievable."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from acm.auth import verify_envelope
from acm.convert import InvalidTurn, turn_from_pb
from acm.domain.models import JobStatus
from acm.envelopes import decode
from acm.job_events import JobEvents
from acm.metrics import job_reached
from acm.ports.bus import PermanentError, Record
from acm.ports.owners import KeySource
from acm.ports.stores import AuditLog, ProcessedEvents
from acm_ingest import GROUP
from acm_ingest.usecases import IngestTurn

log = logging.getLogger("acm.ingest")


@dataclass
class TurnsHandler:
    ingest: IngestTurn
    keys: KeySource  # the gateway's API keys (acm.ports.owners)
    jobs: JobEvents
    processed: ProcessedEvents
    audit: AuditLog
    max_turn_bytes: int

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "turn_received")
        if await self.processed.seen(GROUP, env.event_id):
            return
        await verify_envelope(env, scope, self.keys, self.audit)
        body = env.turn_received
        try:
            turn = turn_from_pb(body.turn, scope, self.max_turn_bytes, body.turn.turn_id or env.event_id)
        except InvalidTurn as exc:
            await self.jobs.finished(scope, body.job_id, JobStatus.FAILED, {}, str(exc))
            job_reached("ingest", JobStatus.FAILED)
            raise PermanentError(str(exc)) from exc
        counts = await self.ingest(turn, body.job_id, env.traceparent)
        job_reached("ingest", JobStatus.DONE)  # ingest's part is done; retrieve reports the job DONE
        await self.processed.mark(GROUP, env.event_id)
        log.debug("ingested turn %s (job %s): %s", turn.turn_id, body.job_id, counts)
