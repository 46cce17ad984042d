"""GetWorkingMemory's messages carry a working memory and its latest compaction record without loss: the
gateway assembles a session's context from what compact sends exactly as compact would from its store."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from acm.domain.compaction.engine import SessionTurn, WorkingMemory
from acm.domain.compaction.pinned import PinnedEntity, PinnedState
from acm.domain.compaction.record import CompactionRecord
from acm.ports.compactor import StoredWorkingMemory
from acm.v1 import compact_pb2
from acm.working_wire import stored_working_from_pb, stored_working_to_pb

AT = datetime(2026, 10, 28, 9, 0, 0, 123456, tzinfo=UTC)


def _memory() -> WorkingMemory:
    po = PinnedEntity(
        "PO-20261028-0098",
        "purchase_order",
        # Order matters (the newest values last, the pinned line renders them in order); "approved" was never
        # stated with a time.
        {"status": "pending_approval", "amount": "125,000.00 CNY", "approved": ""},
        ("t1", "t2"),
        AT + timedelta(minutes=2),
        acts=3,
        stated_at={"status": AT + timedelta(minutes=1), "amount": AT},
    )
    goal = PinnedEntity("goal", "goals", {"stay under": "130,000.00 CNY"}, ("t0",), None)
    turns = (
        SessionTurn("t3", "user", "user: Thanks. What else is open?", 9, AT + timedelta(minutes=3)),
        SessionTurn(
            "t4", "tool", 'tool[erp.list]: {"open": []}', 11, AT + timedelta(minutes=4), "erp.list", "tool[erp.list]"
        ),
    )
    return WorkingMemory(
        version=4,
        pinned=PinnedState({goal.key: goal, po.key: po}),
        episodes=("user asked for 40 laptops → erp.create_po → pending_approval", "second line"),
        recent=turns,
        through_at=AT + timedelta(minutes=2),
        through_ids=("t2",),
        turns_compacted=3,
    )


def _record() -> CompactionRecord:
    return CompactionRecord(
        "cmp-1", "compacted", 900, 310, 0.3444, True, 2, ("atom",), (), 3, 2, "ok", 12.5, created_at=AT
    )


def _across(stored: StoredWorkingMemory) -> StoredWorkingMemory:
    wire = stored_working_to_pb(stored).SerializeToString()
    return stored_working_from_pb(compact_pb2.GetWorkingMemoryResponse.FromString(wire))


def test_a_working_memory_and_its_record_cross_the_wire_unchanged() -> None:
    back = _across(StoredWorkingMemory(_memory(), _record()))
    assert back.memory == _memory()
    assert back.memory is not None and list(back.memory.pinned.entities) == ["goal", "PO-20261028-0098"]
    assert list(back.memory.pinned.entities["PO-20261028-0098"].attributes) == ["status", "amount", "approved"]
    assert back.memory.pinned.render() == _memory().pinned.render()
    # The summariser is not part of the public Compaction message (the gateway's Fetch shows none either).
    assert back.latest == replace(_record(), summariser="deterministic")


def test_a_session_never_compacted_has_neither() -> None:
    assert _across(StoredWorkingMemory(None, None)) == StoredWorkingMemory(None, None)
    failed_only = replace(_record(), outcome="failed")
    assert _across(StoredWorkingMemory(None, failed_only)) == StoredWorkingMemory(None, failed_only)


def test_an_empty_working_memory_is_not_taken_for_none() -> None:
    """A stored working memory with nothing in it (every field at its default) is still stored."""
    back = _across(StoredWorkingMemory(WorkingMemory(), None))
    assert back.memory == WorkingMemory()
