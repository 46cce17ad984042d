"""acm.turns.v1 → memories. Verifies the envelope's signature and is idempotent on event_id. A turn it cannot
process fails its job (acm.jobs.v1); else the use case publishes what it wrote with the job's counts, and retrieve
reports the job DONE once that is retrievable."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from acm.convert import InvalidTurn, turn_from_pb
from acm.domain.models import JobStatus
from acm.domain.scope import Scope
from acm.metrics import job_reached
from acm.v1 import events_pb2
from acm_ingest.handlers.job_event import JobEventHandler
from acm_ingest.usecases import IngestTurn

log = logging.getLogger("acm.ingest")


@dataclass
class TurnsHandler(JobEventHandler):
    body = "turn_received"
    ingest: IngestTurn
    max_turn_bytes: int

    async def handle(self, env: events_pb2.Envelope, scope: Scope) -> None:
        body = env.turn_received
        try:
            turn = turn_from_pb(body.turn, scope, self.max_turn_bytes, body.turn.turn_id or env.event_id)
        except InvalidTurn as exc:
            await self.fail(scope, body.job_id, "ingest", exc)
        counts = await self.ingest(turn, body.job_id, env.traceparent)
        job_reached("ingest", JobStatus.DONE)  # ingest's part is done; retrieve reports the job DONE
        log.debug("ingested turn %s (job %s): %s", turn.turn_id, body.job_id, counts)
