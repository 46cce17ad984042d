"""A job finished in parts (a Forget: ingest and retrieve each erase their share): the gateway's merge of the parts
(acm.job_events.merge_part) is DONE only once every part reported, in any order, any number of times; and the wire
form of a part. Also retrieve's hint for anticipate (what of an applied MemoriesWritten it carries)."""

from __future__ import annotations

import itertools

import pytest

from acm.domain.models import JobStatus
from acm.forget import FORGET_PARTS, ForgetJob
from acm.job_events import PART_PREFIX, JobEvents, JobUpdate, merge_part, update_from_pb, update_to_pb
from acm.ports.bus import PermanentError
from acm.v1 import events_pb2
from acm_retrieve.handlers.memories import indexed_from_pb

INGEST = JobUpdate(
    "job-1", JobStatus.DONE, {"memories_erased": 4, "shared_erased": 1}, part="ingest", parts=FORGET_PARTS
)
RETRIEVE = JobUpdate("job-1", JobStatus.DONE, {"memories_erased": 3}, part="retrieve", parts=FORGET_PARTS)


def _apply(updates: list[JobUpdate]) -> JobUpdate:
    """What the gateway's handler does with each update of one job: merge while pending, then nothing."""
    counts: dict[str, int] = {}
    result = JobUpdate("job-1", JobStatus.PENDING)
    for update in updates:
        if result.status is not JobStatus.PENDING:
            break  # a finished job never changes
        result = merge_part(counts, update)
        counts = result.counts
    return result


def test_one_part_leaves_the_job_pending_and_says_which_part_reported() -> None:
    pending = merge_part({}, INGEST)
    assert pending.status is JobStatus.PENDING
    assert pending.counts == {
        "memories_erased": 4,
        "shared_erased": 1,
        f"{PART_PREFIX}ingest": 1,
        f"{PART_PREFIX}retrieve": 0,
    }


def test_the_job_is_done_once_every_part_reported_in_any_order_and_any_number_of_times() -> None:
    # A count both parts report (the memories, and retrieve's copy of them) counts once, the larger.
    expected = {"memories_erased": 4, "shared_erased": 1}
    for order in itertools.permutations([INGEST, RETRIEVE, INGEST]):
        done = _apply(list(order))
        assert (done.status, done.counts) == (JobStatus.DONE, expected), order
    assert _apply([INGEST, INGEST, INGEST]).status is JobStatus.PENDING  # a redelivered part is not the other
    assert _apply([RETRIEVE, RETRIEVE]).status is JobStatus.PENDING


def test_a_failed_part_fails_the_job_at_once() -> None:
    failed = JobUpdate("job-1", JobStatus.FAILED, {}, "erasure refused", part="retrieve", parts=FORGET_PARTS)
    result = _apply([failed, INGEST])
    assert (result.status, result.error, result.counts) == (JobStatus.FAILED, "erasure refused", {})


def test_a_part_travels_with_its_parts_and_one_outside_them_is_permanent() -> None:
    wire = events_pb2.JobUpdated.FromString(update_to_pb(INGEST).SerializeToString())
    assert (wire.part, list(wire.parts)) == ("ingest", list(FORGET_PARTS))
    assert update_from_pb(wire) == INGEST
    with pytest.raises(PermanentError):
        update_from_pb(events_pb2.JobUpdated(job_id="j", status=wire.status, part="compact", parts=FORGET_PARTS))


def test_only_the_groups_whose_erasure_a_fetch_could_see_report_a_part() -> None:
    jobs = JobEvents(bus=None)  # type: ignore[arg-type]  # never published to here
    with pytest.raises(ValueError, match="not a part"):
        ForgetJob("compact", jobs, processed=None)  # type: ignore[arg-type]
    assert ForgetJob("retrieve", jobs, processed=None).group == "retrieve"  # type: ignore[arg-type]


def test_retrieve_hints_anticipate_with_the_searched_memories_only() -> None:
    body = events_pb2.MemoriesWritten(
        memories=[
            events_pb2.WrittenMemory(memory_id="t", kind="turn"),  # a turn's preview: no vector
            events_pb2.WrittenMemory(memory_id="a", kind="fact", embedding=[0.1], entity_names=["Sam", "Paris"]),
            events_pb2.WrittenMemory(memory_id="b", kind="preference", embedding=[0.2], entity_names=["Jane"]),
        ]
    )
    hint = indexed_from_pb(body)
    assert hint is not None
    assert (list(hint.kinds), list(hint.entity_names)) == (["fact", "preference"], ["Sam", "Paris", "Jane"])
    assert indexed_from_pb(events_pb2.MemoriesWritten(memories=[body.memories[0]])) is None
