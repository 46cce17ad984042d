"""The edge vector store keeps the filters of recent searches (issue 20, CPU a Fetch): a search with a kept
filter finds exactly what one with a fresh filter finds, a deleted point is not found through a kept filter,
and the cache stays within its bound. A real qdrant-edge shard."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime
from pathlib import Path

from acm.adapters import qdrant_terms as qt
from acm.adapters.edge_store import EdgeVectorStore, Filters
from acm.domain.models import Layer, Owner
from acm.domain.scope import ALL_TIERS, Scope, Tier
from acm.ports.stores import VectorPoint

DIM = 32
SCOPE = Scope("c", "cu", "u", "a", "s")
OTHER_USER = Scope("c", "cu", "u2", "a", "s")


def _id(i: int) -> str:
    return uuid.UUID(int=i + 1).hex


async def _store(path: Path, n: int = 600) -> EdgeVectorStore:
    store = EdgeVectorStore(path)
    await store.ensure(DIM)
    rng = random.Random(20)
    now = datetime.now(UTC)
    owners = [Owner("c", Tier.USER, "cu", "u"), Owner("c", Tier.USER, "cu", "u2"), Owner("c", Tier.CUSTOMER, "cu")]
    await store.upsert(
        [
            VectorPoint(_id(i), [rng.random() for _ in range(DIM)], owners[i % 3], Layer.LONG, now, "s", "m")
            for i in range(n)
        ]
    )
    return store


async def test_kept_filters_find_what_fresh_filters_find(tmp_path: Path) -> None:
    store = await _store(tmp_path / "v")
    uncached = await _store(tmp_path / "fresh")
    uncached._filters = Filters(max_entries=0)  # every search builds its filter
    rng = random.Random(7)
    among = [_id(i) for i in rng.sample(range(600), 300)]
    try:
        for k in range(12):
            query = [rng.random() for _ in range(DIM)]
            for scope in (SCOPE, OTHER_USER):
                for ids in (None, among, among[: 40 + k]):
                    kept = await store.search(scope, query, 25, among=ids, model="m")
                    fresh = await uncached.search(scope, query, 25, among=ids, model="m")
                    assert kept == fresh and kept
                    if ids is not None:
                        assert {m for m, _ in kept} <= set(ids)
        # Other scopes and models never share a filter: another user's points stay invisible.
        mine = await store.search(SCOPE, query, 600, model="m")
        theirs = await store.search(OTHER_USER, query, 600, model="m")
        assert {m for m, _ in mine}.isdisjoint({_id(i) for i in range(1, 600, 3)})
        assert {m for m, _ in theirs}.isdisjoint({_id(i) for i in range(0, 600, 3)})
        assert await store.search(SCOPE, query, 10, model="other") == []
        assert len(store._filters) > 1
    finally:
        await store.close()
        await uncached.close()


async def test_a_deleted_point_is_not_found_through_a_kept_filter(tmp_path: Path) -> None:
    store = await _store(tmp_path / "v")
    among = [_id(i) for i in range(0, 300, 3)]  # u's own points
    query = [0.5] * DIM
    try:
        before = await store.search(SCOPE, query, 10, among=among, model="m")
        gone = before[0][0]
        await store.delete(SCOPE, [gone])
        after = await store.search(SCOPE, query, 10, among=among, model="m")
        assert gone not in {m for m, _ in after}
        assert [m for m, _ in after] == [m for m, _ in before[1:]] + [after[-1][0]]
    finally:
        await store.close()


def test_filters_stay_within_their_bound() -> None:
    filters = Filters(max_entries=3)
    terms = [qt.visible_among(SCOPE, ALL_TIERS, "m", (_id(i),)) for i in range(5)]
    built = [filters.get(t) for t in terms]
    assert len(filters) == 3
    assert filters.get(terms[4]) is built[4]  # kept
    assert filters.get(terms[0]) is not built[0]  # evicted, built again
    assert Filters(max_entries=0).get(terms[0]) is not None
