"""acm.memories.v1 carries each memory in full (ingest's events → retrieve's projection), and acm.jobs.v1 a job's
outcome: the mappings both ways, and the projection's rule for events applied out of order."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta

import pytest

from acm.domain.models import JobStatus, Layer, Memory, MemoryStatus
from acm.domain.scope import Scope, Tier
from acm.job_events import JobUpdate, update_from_pb, update_to_pb
from acm.memory_wire import stored_from_pb, stored_to_pb, written_from_pb, written_to_pb
from acm.ports.bus import PermanentError
from acm.v1 import events_pb2
from acm_ingest.events import BusEvents
from acm_ingest.usecases import Changes, WrittenMemory
from acm_retrieve.handlers.memories import changes_from_pb
from acm_retrieve.projection import newest

SCOPE = Scope("acme", "cust-1", "alice", "agent-1", "s1")
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _memory(**changes: object) -> Memory:
    base = Memory(
        memory_id="m1",
        owner=SCOPE.owner(Tier.CUSTOMER),
        text="Alice: the warehouse moved to Lyon.",
        layer=Layer.MID,
        kind="fact",
        source_turn_ids=("t1", "t2"),
        created_at=T0,
        agent_id="agent-1",
        session_id="s1",
        updated_at=T0 + timedelta(minutes=5),
        valid_from=T0 - timedelta(days=1),
        valid_to=T0 + timedelta(days=30),
        token_count=11,
        mention_count=3,
        access_count=7,
        status=MemoryStatus.STALE,
        superseded_by="m2",
        schema_version=4,
        slot="warehouse|located_in",
        role="tool",
        tool_name="crm_lookup",
        trust="untrusted",
        metadata=(("channel", "email"), ("ticket", "T-7")),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_every_field_of_a_memory_survives_the_event() -> None:
    memory = _memory()
    # Every field differs from its default, so a field the wire forgets fails the comparison.
    defaults = Memory("x", SCOPE.owner(Tier.USER), "", Layer.SHORT, "", (), T0 + timedelta(days=9))
    changed = {f.name for f in fields(Memory) if getattr(memory, f.name) != getattr(defaults, f.name)}
    assert changed == {f.name for f in fields(Memory)}
    pb = events_pb2.WrittenMemory.FromString(written_to_pb(memory, [0.5, 0.25], ["Lyon"]).SerializeToString())
    assert written_from_pb(pb, SCOPE) == memory
    assert list(pb.embedding) == [0.5, 0.25] and list(pb.entity_names) == ["Lyon"]


def test_a_memory_without_its_stored_form_is_refused() -> None:
    legacy = events_pb2.MemoriesWritten(memories=[events_pb2.WrittenMemory(memory_id="m1", text="old publisher")])
    with pytest.raises(PermanentError, match="stored form"):
        changes_from_pb(legacy, SCOPE, 2)


async def test_ingest_publishes_its_changes_and_retrieve_reads_them_back() -> None:
    published: list[tuple[str, str, bytes]] = []

    class Bus:
        async def publish(self, topic: str, key: str, value: bytes) -> None:
            published.append((topic, key, value))

    turn = _memory(
        memory_id="turn-1", kind="turn", status=MemoryStatus.ACTIVE, superseded_by="", owner=SCOPE.owner(Tier.USER)
    )
    fact = _memory(status=MemoryStatus.ACTIVE, superseded_by="")
    changes = Changes(authored=["m1"], erased=["gone-1"])
    changes.wrote([turn, fact])
    changes.indexed([WrittenMemory(fact, [1.0, 0.0], ("Lyon",))])  # the fact's later version, with its vector
    await BusEvents(Bus()).memories_written(  # type: ignore[arg-type]
        SCOPE, "ev-1", "job-1", changes, {"turns": 1, "facts": 1}, "model-a", ""
    )
    [(topic, key, value)] = published
    assert (topic, key) == ("acm.memories.v1", SCOPE.session_key)
    body = events_pb2.Envelope.FromString(value).memories_written
    assert (body.job_id, dict(body.counts)) == ("job-1", {"turns": 1, "facts": 1})

    got = changes_from_pb(body, SCOPE, 2)
    assert list(got.written) == [turn, fact]
    assert [(p.memory_id, p.vector, p.owner, p.model) for p in got.vectors] == [
        ("m1", [1.0, 0.0], fact.owner, "model-a")
    ]
    assert (list(got.authored), list(got.erased)) == (["m1"], ["gone-1"])
    with pytest.raises(PermanentError, match="2-d embedding, the index is 3-d"):
        changes_from_pb(body, SCOPE, 3)


def test_the_projection_keeps_the_later_write_and_never_reactivates_a_stale_memory() -> None:
    active = _memory(status=MemoryStatus.ACTIVE, superseded_by="", valid_to=None, mention_count=1)
    assert active.updated_at is not None
    restated = replace(active, mention_count=2, updated_at=active.updated_at + timedelta(hours=1))
    stale = replace(restated, status=MemoryStatus.STALE, superseded_by="m2", valid_to=T0 + timedelta(days=2))
    assert newest(None, active) == active
    assert newest(active, restated) == restated
    assert newest(restated, active) == restated  # an older event applied late changes nothing
    assert newest(active, active) == active  # redelivery
    # The stale version arrived first (another partition); the restatement written before it does not revive it.
    assert newest(stale, restated).status is MemoryStatus.STALE
    assert restated.updated_at is not None
    revived = newest(stale, replace(restated, updated_at=restated.updated_at + timedelta(hours=1)))
    assert (revived.status, revived.superseded_by, revived.valid_to) == (MemoryStatus.STALE, "m2", stale.valid_to)


def test_job_updates_round_trip_and_a_broken_one_is_permanent() -> None:
    update = JobUpdate("job-1", JobStatus.FAILED, {"turns": 0}, "turn too large")
    assert update_from_pb(events_pb2.JobUpdated.FromString(update_to_pb(update).SerializeToString())) == update
    for status in JobStatus:
        assert update_from_pb(update_to_pb(JobUpdate("j", status))).status is status
    with pytest.raises(PermanentError):
        update_from_pb(events_pb2.JobUpdated(status=update_to_pb(update).status))  # no job id
    with pytest.raises(PermanentError):
        update_from_pb(events_pb2.JobUpdated(job_id="j"))  # no status


def test_a_memory_still_valid_has_no_end_on_the_wire() -> None:
    # JSON clients (the HTTP API, the console) read a set Timestamp of 0 as 1970-01-01, not as "no end".
    pb = stored_to_pb(_memory(valid_to=None, status=MemoryStatus.ACTIVE, superseded_by=""))
    assert not pb.HasField("valid_to")
    assert stored_from_pb(pb, SCOPE).valid_to is None
