"""The turn channel's wire and ids (pure): a turn's vector rides on its host fact in acm.memories.v1 and becomes
a point of its own, under the turn model and an id that maps back to the host."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from acm.domain.models import Layer, Memory, stable_id
from acm.domain.retrieval import PRESETS, share_turn_ranks, turn_model, turn_point_id, weighted_rrf
from acm.domain.scope import Scope, Tier
from acm.memory_wire import written_to_pb
from acm.ports.bus import PermanentError
from acm.v1 import events_pb2
from acm_retrieve.handlers.memories import changes_from_pb

SCOPE = Scope("acme", "cust-1", "alice", "agent-1", "s1")
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _fact(memory_id: str, text: str) -> Memory:
    return Memory(
        memory_id=memory_id,
        owner=SCOPE.owner(Tier.USER),
        text=text,
        layer=Layer.MID,
        kind="fact",
        source_turn_ids=("t1",),
        created_at=T0,
        session_id="s1",
    )


def test_a_turn_point_id_maps_back_to_its_host_and_never_to_another_memory() -> None:
    ids = [stable_id("fact", str(i)) for i in range(200)]
    points = [turn_point_id(i) for i in ids]
    assert [turn_point_id(p) for p in points] == ids
    assert not set(points) & set(ids)
    assert all(len(p) == 32 and int(p, 16) >= 0 for p in points)
    assert turn_point_id("not-a-hex-id") == "not-a-hex-id"  # hosts nothing; an erasure deletes it once


def test_the_host_fact_carries_its_turn_vector_to_a_point_of_the_turn_model() -> None:
    host, other = stable_id("fact", "a"), stable_id("fact", "b")
    body = events_pb2.MemoriesWritten(
        embedding_model="model-a",
        memories=[
            written_to_pb(_fact(host, "Alice: It was a long day."), [1.0, 0.0], (), [0.5, 0.75]),
            written_to_pb(_fact(other, "Alice: We signed it."), [0.0, 1.0]),
        ],
    )
    got = changes_from_pb(events_pb2.MemoriesWritten.FromString(body.SerializeToString()), SCOPE, 2)
    assert [(p.memory_id, list(p.vector), p.model) for p in got.vectors] == [
        (host, [1.0, 0.0], "model-a"),
        (turn_point_id(host), [0.5, 0.75], turn_model("model-a")),
        (other, [0.0, 1.0], "model-a"),
    ]
    assert {p.owner for p in got.vectors} == {SCOPE.owner(Tier.USER)}
    with pytest.raises(PermanentError, match="3-d embedding, the index is 2-d"):
        written = written_to_pb(_fact(host, "Alice: It was a long day."), [1.0, 0.0], (), [0.1, 0.2, 0.3])
        changes_from_pb(events_pb2.MemoriesWritten(embedding_model="m", memories=[written]), SCOPE, 2)


def test_a_turn_ranked_first_lifts_its_host_in_the_fusion_and_precise_has_no_turn_channel() -> None:
    p = PRESETS["balanced"]
    fused = weighted_rrf({"keyword": ["a", "b"], "vector": ["a", "b"], "turn": ["b"]}, p.list_weights, p.rrf_k)
    assert fused["b"] > fused["a"]
    assert PRESETS["precise"].turn_k == 0 and p.turn_k > 0


def test_the_turn_rank_goes_to_every_ranked_fact_of_the_turn_but_the_host_counts_it_once() -> None:
    t0, t1 = ("s1", T0), ("s1", T0.replace(minute=5))
    turn_of = {"host": t0, "sibling": t0, "other": t1, "host2": t1}
    fused = {"host": 0.02, "sibling": 0.01, "other": 0.015, "unturned": 0.012}
    shared = share_turn_ranks(fused, ["host", "host2"], turn_of, 0.5, 60)
    assert shared["host"] == 0.02  # its own gift is already in fused, from the turn list
    assert shared["sibling"] == pytest.approx(0.01 + 0.5 / 61)
    assert shared["other"] == pytest.approx(0.015 + 0.5 / 62)
    assert shared["unturned"] == 0.012 and "host2" not in shared  # only what the lists ranked is scored
