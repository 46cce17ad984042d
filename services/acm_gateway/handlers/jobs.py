"""acm.jobs.v1 → the gateway's jobs table (the gateway owns jobs; ingest and retrieve report outcomes as events).
JobRepo.finish creates a row the gateway has not written yet (the update may overtake the create, which is
insert-if-absent) and never moves a finished job back, so redelivery and late updates are harmless."""

from __future__ import annotations

from dataclasses import dataclass

from acm.envelopes import decode
from acm.job_events import update_from_pb
from acm.ports.bus import Record
from acm.ports.stores import JobRepo

GROUP = "gateway-jobs"  # one group for every replica: each update is applied once


@dataclass
class JobUpdatedHandler:
    jobs: JobRepo

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "job_updated")
        update = update_from_pb(env.job_updated)
        await self.jobs.finish(scope, update.job_id, update.status, update.counts, update.error)
