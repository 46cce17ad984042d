"""acm.jobs.v1 → the gateway's jobs table (the gateway owns jobs; ingest and retrieve report outcomes as events).
JobRepo.finish creates a row the gateway has not written yet (the update may overtake the create, which is
insert-if-absent) and never moves a finished job back, so redelivery and late updates are harmless.

A job finished in parts (a Forget) is read, merged with the part (acm.job_events.merge_part) and written back,
PENDING until every part reported: the updates are keyed by the job's session key, so one consumer applies a job's
updates one at a time and this read-then-write does not race another."""

from __future__ import annotations

from dataclasses import dataclass

from acm.domain.models import JobStatus
from acm.envelopes import decode
from acm.job_events import merge_part, update_from_pb
from acm.metrics import job_reached
from acm.ports.bus import Record
from acm.ports.stores import JobRepo

GROUP = "gateway-jobs"  # one group for every replica: each update is applied once


@dataclass
class JobUpdatedHandler:
    jobs: JobRepo

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "job_updated")
        update = update_from_pb(env.job_updated)
        if update.part:
            job = await self.jobs.get(scope, update.job_id)
            if job is not None and job.status is not JobStatus.PENDING:
                return  # finished: a redelivered or late part changes nothing
            update = merge_part(job.counts if job is not None else {}, update)
            if update.status is not JobStatus.PENDING:
                job_reached("forget", update.status)  # jobs in parts are Forgets (acm.forget.FORGET_PARTS)
        # finish() with PENDING writes the parts reported so far and leaves the job pending.
        await self.jobs.finish(scope, update.job_id, update.status, update.counts, update.error)
