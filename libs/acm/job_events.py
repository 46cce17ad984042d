"""acm.jobs.v1: a job's outcome as an event. The gateway owns the jobs table; ingest (a turn or an edit it cannot
process, its part of a Forget) and retrieve (a turn's or edit's memories applied, i.e. retrievable; its part of a
Forget) report here, and the gateway's handler (acm_gateway.handlers.jobs) applies the update. Keyed by the scope's
session key, so a job's updates reach the gateway in order, one at a time.

A job finished in parts (a Forget: each service erasing a share reports its own) is DONE once every part reported
DONE (``merge_part``); until then the row stays PENDING and its counts say which parts reported."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

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


# A pending job's counts hold one of these per part it waits for: 1 once that part reported, 0 until then.
PART_PREFIX = "part:"


@dataclass(frozen=True, slots=True)
class JobUpdate:
    job_id: str
    status: JobStatus
    counts: dict[str, int] = field(default_factory=dict)
    error: str = ""
    part: str = ""  # set for a job finished in parts: which part this is
    parts: tuple[str, ...] = ()  # every part that job waits for


def update_to_pb(update: JobUpdate) -> events_pb2.JobUpdated:
    return events_pb2.JobUpdated(
        job_id=update.job_id,
        status=STATUS_TO_PB[update.status],
        counts=update.counts,
        error=update.error,
        part=update.part,
        parts=update.parts,
    )


def update_from_pb(pb: events_pb2.JobUpdated) -> JobUpdate:
    """PermanentError for an update without a job id or a known status, or a part outside its parts (it can never
    apply)."""
    if not pb.job_id or pb.status not in STATUS_FROM_PB:
        raise PermanentError(f"job update without a job id or a known status ({pb.job_id[:40]!r}, {pb.status})")
    if pb.part and pb.part not in pb.parts:
        raise PermanentError(f"job update for part {pb.part[:40]!r}, not one of its parts {list(pb.parts)[:8]}")
    return JobUpdate(
        pb.job_id,
        STATUS_FROM_PB[pb.status],
        {k: int(v) for k, v in pb.counts.items()},
        pb.error,
        pb.part,
        tuple(pb.parts),
    )


def merge_part(pending: Mapping[str, int], update: JobUpdate) -> JobUpdate:
    """What a job finished in parts becomes when ``update`` (one part's outcome) arrives over the counts of the job
    while it is pending (``pending``: empty before any part). The parts' counts are merged; a count two parts both
    report (ingest's memories and retrieve's copy of them) counts once, the larger. DONE once every part reported
    DONE, FAILED at once when a part failed, else PENDING with a ``part:<name>`` mark per part (1: reported).
    Order-free and idempotent: the same parts in any order, each any number of times, give the same job."""
    counts: dict[str, int] = {}
    for key, value in [*pending.items(), *update.counts.items()]:
        counts[key] = max(counts.get(key, value), value)
    for part in update.parts:
        counts.setdefault(PART_PREFIX + part, 0)
    counts[PART_PREFIX + update.part] = 1
    waiting = any(v == 0 for k, v in counts.items() if k.startswith(PART_PREFIX))
    status = JobStatus.PENDING if update.status is JobStatus.DONE and waiting else update.status
    if status is not JobStatus.PENDING:
        counts = {k: v for k, v in counts.items() if not k.startswith(PART_PREFIX)}
    return replace(update, status=status, counts=counts)


class JobEvents:
    """Publishes job outcomes on acm.jobs.v1 (the jobs' owner, the gateway, applies them)."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    async def finished(
        self,
        scope: Scope,
        job_id: str,
        status: JobStatus,
        counts: Mapping[str, int],
        error: str = "",
        *,
        part: str = "",
        parts: Sequence[str] = (),
    ) -> None:
        """``part``, ``parts``: for a job finished in parts, this one, and all the job waits for."""
        if not job_id:
            return  # nothing to finish (an event published by a sweep, not for a request)
        event = envelope(scope)
        event.job_updated.CopyFrom(update_to_pb(JobUpdate(job_id, status, dict(counts), error, part, tuple(parts))))
        await self._bus.publish(topics.JOBS, scope.session_key, event.SerializeToString())
