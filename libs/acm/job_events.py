"""acm.jobs.v1: a job's outcome as an event. The gateway owns the jobs table; ingest (a turn or an edit it cannot
process, a finished Forget) and retrieve (a turn's or edit's memories applied, i.e. retrievable) report here, and
the gateway's handler (acm_gateway.handlers.jobs) applies the update. Keyed by the scope's session key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from acm import topics
from acm.domain.models import JobStatus
from acm.domain.scope import Scope
from acm.envelopes import envelope
from acm.ports.bus import EventBus, PermanentError
from acm.v1 import events_pb2, gateway_pb2

STATUS_TO_PB = {
    JobStatus.PENDING: gateway_pb2.JOB_STATUS_PENDING,
    JobStatus.DONE: gateway_pb2.JOB_STATUS_DONE,
    JobStatus.FAILED: gateway_pb2.JOB_STATUS_FAILED,
}
STATUS_FROM_PB = {v: k for k, v in STATUS_TO_PB.items()}


@dataclass(frozen=True, slots=True)
class JobUpdate:
    job_id: str
    status: JobStatus
    counts: dict[str, int] = field(default_factory=dict)
    error: str = ""


def update_to_pb(update: JobUpdate) -> events_pb2.JobUpdated:
    return events_pb2.JobUpdated(
        job_id=update.job_id, status=STATUS_TO_PB[update.status], counts=update.counts, error=update.error
    )


def update_from_pb(pb: events_pb2.JobUpdated) -> JobUpdate:
    """PermanentError for an update without a job id or a known status (it can never apply)."""
    if not pb.job_id or pb.status not in STATUS_FROM_PB:
        raise PermanentError(f"job update without a job id or a known status ({pb.job_id[:40]!r}, {pb.status})")
    return JobUpdate(pb.job_id, STATUS_FROM_PB[pb.status], {k: int(v) for k, v in pb.counts.items()}, pb.error)


class JobEvents:
    """Publishes job outcomes on acm.jobs.v1 (the jobs' owner, the gateway, applies them)."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    async def finished(
        self, scope: Scope, job_id: str, status: JobStatus, counts: Mapping[str, int], error: str = ""
    ) -> None:
        if not job_id:
            return  # nothing to finish (an event published by a sweep, not for a request)
        event = envelope(scope)
        event.job_updated.CopyFrom(update_to_pb(JobUpdate(job_id, status, dict(counts), error)))
        await self._bus.publish(topics.JOBS, scope.session_key, event.SerializeToString())
