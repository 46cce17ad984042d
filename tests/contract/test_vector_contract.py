"""One contract for every VectorStore adapter: nearest-first cosine search, idempotent upserts, and the
scope rules of acm.domain.scope (visible / forgets) enforced inside the store.

Vectors carry their embedding model; a search only compares its query with vectors of the model it names.

Runs against qdrant-client local mode (in memory and on disk: the server adapter's code path) and
qdrant-edge (the embedded engine). No server needed.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from acm.adapters.edge_store import EdgeVectorStore
from acm.adapters.qdrant_store import QdrantVectorStore
from acm.domain.models import Layer
from acm.domain.scope import ForgetLevel, Owner, Scope, Tier, forgets, visible
from acm.ports.stores import VectorPoint, VectorStore

DIM = 8
NS = uuid.UUID("8f1d3c2e-0000-4000-8000-000000000000")
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def mid(name: str) -> str:
    """A readable name → the 32-hex memory id the store needs."""
    return uuid.uuid5(NS, name).hex


def unit(*xs: float) -> list[float]:
    v = np.zeros(DIM)
    v[: len(xs)] = xs
    return list(v / np.linalg.norm(v))


def cos(a: Sequence[float], b: Sequence[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


M = "model-a"  # the embedding model of the points and queries (searches compare only one model's vectors)


def pt(name: str, vector: Sequence[float], owner: Owner, session_id: str = "", model: str = M) -> VectorPoint:
    return VectorPoint(mid(name), vector, owner, Layer.LONG, T0, session_id, model)


# ---- adapters under test ------------------------------------------------------------------------


@dataclass
class Kind:
    name: str
    persistent: bool
    make: Callable[[Path], VectorStore]


KINDS = [
    Kind("qdrant-local-memory", False, lambda _: QdrantVectorStore.from_url("qdrant-local://:memory:")),
    Kind("qdrant-local-disk", True, lambda p: QdrantVectorStore.from_url(f"qdrant-local://{p / 'qdrant'}")),
    Kind("edge", True, lambda p: EdgeVectorStore(p / "edge")),
]


PERSISTENT = [k for k in KINDS if k.persistent]  # the persistence tests need a store on disk


@pytest.fixture(params=KINDS, ids=[k.name for k in KINDS])
def kind(request: pytest.FixtureRequest) -> Kind:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def store(kind: Kind, tmp_path: Path) -> AsyncIterator[VectorStore]:
    s = kind.make(tmp_path)
    await s.ensure(DIM)
    yield s
    await s.close()


# ---- scopes: two clients that reuse the same customer and user ids (the hardest case) -----------

A = Scope("c1", "x", "a", session_id="s1")  # the reader most tests use
B = Scope("c1", "x", "b")  # same customer, other user
Y = Scope("c1", "y", "a")  # other customer, same user id
C2 = Scope("c2", "x", "a")  # other client, same customer and user ids


def ids(results: list[tuple[str, float]]) -> list[str]:
    return [m for m, _ in results]


# ---- basics ---------------------------------------------------------------------------------------


async def test_ensure_is_idempotent(store: VectorStore) -> None:
    await store.ensure(DIM)
    await store.upsert([pt("p", unit(1), A.owner(Tier.USER))])
    await store.ensure(DIM)
    assert ids(await store.search(A, unit(1), 5, model=M)) == [mid("p")]


async def test_ensure_rejects_another_dimension(store: VectorStore) -> None:
    with pytest.raises(ValueError):
        await store.ensure(DIM * 2)


async def test_nearest_first_with_cosine_scores(store: VectorStore) -> None:
    owner = A.owner(Tier.USER)
    vectors = {"near": unit(1, 0.1), "mid": unit(1, 1), "far": unit(0, 1), "opposite": unit(-1)}
    await store.upsert([pt(n, v, owner) for n, v in vectors.items()])
    query = unit(1)
    got = await store.search(A, query, 10, model=M)
    assert ids(got) == [mid("near"), mid("mid"), mid("far"), mid("opposite")]
    for (_, score), v in zip(got, vectors.values(), strict=True):
        assert score == pytest.approx(cos(query, v), abs=1e-4)
    assert ids(await store.search(A, query, 2, model=M)) == [mid("near"), mid("mid")]


async def test_unnormalised_vectors_score_as_cosine(store: VectorStore) -> None:
    await store.upsert([pt("p", [3.0, 4.0] + [0.0] * (DIM - 2), A.owner(Tier.USER))])
    [(_, score)] = await store.search(A, [10.0] + [0.0] * (DIM - 1), 5, model=M)
    assert score == pytest.approx(0.6, abs=1e-4)


async def test_upsert_same_id_twice_keeps_one_updated_point(store: VectorStore) -> None:
    owner = A.owner(Tier.USER)
    await store.upsert([pt("p", unit(1), owner)])
    await store.upsert([pt("p", unit(0, 1), owner)])
    got = await store.search(A, unit(0, 1), 10, model=M)
    assert ids(got) == [mid("p")]
    assert got[0][1] == pytest.approx(1.0, abs=1e-4)


async def test_upsert_moves_a_point_to_its_new_owner(store: VectorStore) -> None:
    await store.upsert([pt("p", unit(1), A.owner(Tier.USER))])
    await store.upsert([pt("p", unit(1), B.owner(Tier.USER))])
    assert await store.search(A, unit(1), 10, model=M) == []
    assert ids(await store.search(B, unit(1), 10, model=M)) == [mid("p")]


async def test_malformed_memory_id_is_rejected(store: VectorStore) -> None:
    bad = VectorPoint("not-a-uuid", unit(1), A.owner(Tier.USER), Layer.LONG, T0)
    with pytest.raises(ValueError):
        await store.upsert([bad])


async def test_empty_inputs(store: VectorStore) -> None:
    await store.upsert([])
    assert await store.search(A, unit(1), 10, model=M) == []
    await store.upsert([pt("p", unit(1), A.owner(Tier.USER))])
    assert await store.search(A, unit(1), 10, tiers=(), model=M) == []
    assert await store.search(A, unit(1), 0, model=M) == []


async def test_search_among_ranks_only_those_memories(store: VectorStore) -> None:
    owner = A.owner(Tier.USER)
    vectors = {"near": unit(1, 0.1), "mid": unit(1, 1), "far": unit(0, 1)}
    await store.upsert([pt(n, v, owner) for n, v in vectors.items()])
    assert ids(await store.search(A, unit(1), 10, among=[mid("far"), mid("mid")], model=M)) == [mid("mid"), mid("far")]
    assert ids(await store.search(A, unit(1), 1, among=[mid("far"), mid("mid")], model=M)) == [mid("mid")]
    assert ids(await store.search(A, unit(1), 10, among=[mid("unknown"), mid("far")], model=M)) == [mid("far")]
    assert await store.search(A, unit(1), 10, among=[], model=M) == []


async def test_search_among_never_widens_visibility(store: VectorStore) -> None:
    q = unit(1)
    await store.upsert([pt("a-private", q, A.owner(Tier.USER)), pt("b-own", unit(0, 1), B.owner(Tier.USER))])
    assert ids(await store.search(B, q, 10, among=[mid("a-private"), mid("b-own")], model=M)) == [mid("b-own")]
    assert await store.search(C2, q, 10, among=[mid("a-private")], model=M) == []


# ---- the embedding model: a search compares only vectors of its query's model ------------------------


async def test_search_compares_only_vectors_of_the_querys_model(store: VectorStore) -> None:
    q, owner = unit(1), A.owner(Tier.USER)
    # The other model's point is the exact nearest vector: it must still never come back.
    await store.upsert(
        [pt("a", unit(1, 0.5), owner), pt("b", q, owner, model="model-b"), pt("legacy", q, owner, model="")]
    )
    assert ids(await store.search(A, q, 10, model=M)) == [mid("a")]
    assert ids(await store.search(A, q, 10, model="model-b")) == [mid("b")]
    assert await store.search(A, q, 10, model="model-c") == []
    # A point written before vectors carried their model matches no model (a re-index gives it one).
    assert mid("legacy") not in ids(await store.search(A, q, 10, model=M))
    assert ids(await store.search(A, q, 10, among=[mid("a"), mid("b")], model="model-b")) == [mid("b")]
    assert await store.search(A, q, 10, among=[mid("b")], model=M) == []


async def test_the_model_filter_never_widens_visibility(store: VectorStore) -> None:
    q = unit(1)
    await store.upsert([pt("a-private", q, A.owner(Tier.USER), model="model-b"), pt("b-own", q, B.owner(Tier.USER))])
    assert await store.search(B, q, 10, model="model-b") == []
    assert ids(await store.search(B, q, 10, model=M)) == [mid("b-own")]


async def test_reupserting_with_another_model_moves_the_point_to_it(store: VectorStore) -> None:
    owner = A.owner(Tier.USER)
    await store.upsert([pt("p", unit(1), owner), pt("q", unit(0, 1), owner)])
    await store.upsert([pt("p", unit(0, 1), owner, model="model-b")])  # what a re-index does
    assert ids(await store.search(A, unit(1), 10, model=M)) == [mid("q")]
    assert ids(await store.search(A, unit(0, 1), 10, model="model-b")) == [mid("p")]


async def test_count_and_models_of(store: VectorStore) -> None:
    owner = A.owner(Tier.USER)
    assert await store.count() == 0
    await store.upsert([pt("p", unit(1), owner), pt("q", unit(0, 1), owner, model="model-b"), pt("r", unit(1), owner)])
    assert (await store.count(), await store.count(M), await store.count("model-b"), await store.count("x")) == (
        3,
        2,
        1,
        0,
    )
    assert await store.models_of([mid("p"), mid("q"), mid("unknown")]) == {mid("p"): M, mid("q"): "model-b"}
    assert await store.models_of([]) == {}


async def test_reset_empties_the_collection_for_another_dimension(store: VectorStore) -> None:
    await store.upsert([pt("p", unit(1), A.owner(Tier.USER))])
    await store.reset(DIM * 2)
    assert await store.count() == 0
    await store.ensure(DIM * 2)  # the new dimension is now the collection's
    wide = [1.0] + [0.0] * (2 * DIM - 1)
    await store.upsert([pt("p", wide, A.owner(Tier.USER))])
    assert ids(await store.search(A, wide, 5, model=M)) == [mid("p")]
    with pytest.raises(ValueError):
        await store.ensure(DIM)


# ---- isolation: each rule on its own, with the forbidden point as the exact nearest vector ---------


async def test_other_user_never_gets_a_user_tier_point(store: VectorStore) -> None:
    q = unit(1)
    await store.upsert([pt("a-private", q, A.owner(Tier.USER)), pt("b-own", unit(0, 1), B.owner(Tier.USER))])
    got = await store.search(B, q, 10, model=M)
    assert ids(got) == [mid("b-own")]  # B gets its own point, never A's
    assert ids(await store.search(A, q, 10, model=M)) == [mid("a-private")]


async def test_other_customer_never_gets_a_customer_tier_point(store: VectorStore) -> None:
    q = unit(1)
    await store.upsert([pt("x-shared", q, A.owner(Tier.CUSTOMER)), pt("y-own", unit(0, 1), Y.owner(Tier.USER))])
    assert ids(await store.search(Y, q, 10, model=M)) == [mid("y-own")]
    # ...while every user of customer x sees it.
    assert ids(await store.search(B, q, 10, model=M)) == [mid("x-shared")]


async def test_other_client_never_gets_anything_even_client_tier(store: VectorStore) -> None:
    q = unit(1)
    await store.upsert(
        [
            pt("c1-global", q, A.owner(Tier.CLIENT)),
            pt("c1-customer", q, A.owner(Tier.CUSTOMER)),
            pt("c1-user", q, A.owner(Tier.USER)),
            pt("c2-own", unit(0, 1), C2.owner(Tier.USER)),
        ]
    )
    # C2 has the very same customer and user ids as A, in another client.
    assert ids(await store.search(C2, q, 10, model=M)) == [mid("c2-own")]


async def test_user_gets_its_customer_and_client_points(store: VectorStore) -> None:
    await store.upsert(
        [
            pt("global", unit(1), A.owner(Tier.CLIENT)),
            pt("org", unit(1, 0.2), A.owner(Tier.CUSTOMER)),
            pt("mine", unit(1, 0.4), A.owner(Tier.USER)),
        ]
    )
    assert ids(await store.search(A, unit(1), 10, model=M)) == [mid("global"), mid("org"), mid("mine")]
    # Another customer of the same client shares only the client tier.
    assert ids(await store.search(Y, unit(1), 10, model=M)) == [mid("global")]


@pytest.mark.parametrize(
    "tiers",
    [(Tier.USER,), (Tier.CUSTOMER,), (Tier.CLIENT,), (Tier.USER, Tier.CLIENT), (Tier.CUSTOMER, Tier.CLIENT)],
    ids=lambda t: "+".join(t),
)
async def test_tiers_restrict_the_search(store: VectorStore, tiers: tuple[Tier, ...]) -> None:
    by_tier = {Tier.CLIENT: "global", Tier.CUSTOMER: "org", Tier.USER: "mine"}
    await store.upsert([pt(name, unit(1, i * 0.1), A.owner(t)) for i, (t, name) in enumerate(by_tier.items())])
    got = set(ids(await store.search(A, unit(1), 10, tiers=tiers, model=M)))
    assert got == {mid(by_tier[t]) for t in tiers}


# ---- a grid of owners: search and forget checked against the domain rules themselves -------------


@dataclass(frozen=True)
class GridPoint:
    name: str
    owner: Owner
    session_id: str


def grid() -> list[GridPoint]:
    points: list[GridPoint] = []
    for client in ("c1", "c2"):
        points.append(GridPoint(f"{client}", Owner(client, Tier.CLIENT), ""))
        for customer in ("x", "y"):
            points.append(GridPoint(f"{client}/{customer}", Owner(client, Tier.CUSTOMER, customer), ""))
            for user in ("a", "b"):
                owner = Owner(client, Tier.USER, customer, user)
                for session in ("s1", "s2", ""):
                    points.append(GridPoint(f"{client}/{customer}/{user}/{session}", owner, session))
    return points


GRID = grid()
READERS = [
    Scope(client, customer, user, session_id="s1")
    for client in ("c1", "c2", "c3")
    for customer in ("x", "y", "z")
    for user in ("a", "b", "z")
]
BY_ID = {mid(g.name): g.name for g in GRID}


async def load_grid(store: VectorStore) -> None:
    rng = np.random.default_rng(7)
    await store.upsert([pt(g.name, list(rng.standard_normal(DIM)), g.owner, g.session_id) for g in GRID])


async def visible_names(store: VectorStore, reader: Scope) -> set[str]:
    return {BY_ID[m] for m in ids(await store.search(reader, unit(1), len(GRID) + 10, model=M))}


async def remaining(store: VectorStore) -> set[str]:
    """Every point still stored: each point is visible to its own owner, so the union covers them all."""
    owners = {Scope(r.client_id, r.customer_id, r.user_id) for r in READERS}
    found: set[str] = set()
    for reader in owners:
        found |= await visible_names(store, reader)
    return found


async def test_search_matches_visible_for_every_reader(store: VectorStore) -> None:
    await load_grid(store)
    for reader in READERS:
        expected = {g.name for g in GRID if visible(reader, g.owner)}
        assert await visible_names(store, reader) == expected, reader


NEIGHBOURS = {
    ForgetLevel.SESSION: {"c1/x/a/s2", "c1/x/a/", "c1/x/b/s1", "c1/x"},
    ForgetLevel.USER: {"c1/x/b/s1", "c1/x", "c1/y/a/s1", "c1"},
    ForgetLevel.CUSTOMER: {"c1/y/a/s1", "c1/y", "c1"},
    ForgetLevel.CLIENT: set[str](),
}


@pytest.mark.parametrize("level", list(ForgetLevel), ids=lambda lv: lv.value)
async def test_forget_removes_exactly_what_forgets_says(store: VectorStore, level: ForgetLevel) -> None:
    await load_grid(store)
    assert await remaining(store) == {g.name for g in GRID}
    await store.forget(A, level)
    gone = {g.name for g in GRID if forgets(A, level, g.owner, g.session_id)}
    assert gone  # the case is not vacuous
    assert await remaining(store) == {g.name for g in GRID} - gone
    # The nearest neighbours of what went (same ids one level up or elsewhere) are untouched.
    assert NEIGHBOURS[level] | {"c2", "c2/x", "c2/x/a/s1", "c2/x/a/"} <= await remaining(store)


async def test_forget_levels_spelled_out(store: VectorStore) -> None:
    await load_grid(store)
    everything = {g.name for g in GRID}
    await store.forget(A, ForgetLevel.SESSION)
    assert everything - await remaining(store) == {"c1/x/a/s1"}
    await store.forget(A, ForgetLevel.USER)
    assert everything - await remaining(store) == {"c1/x/a/s1", "c1/x/a/s2", "c1/x/a/"}
    await store.forget(A, ForgetLevel.CUSTOMER)
    assert {g for g in everything - await remaining(store)} == {"c1/x"} | {
        f"c1/x/{u}/{s}" for u in ("a", "b") for s in ("s1", "s2", "")
    }
    await store.forget(A, ForgetLevel.CLIENT)
    assert await remaining(store) == {g for g in everything if g.startswith("c2")}


async def test_delete_removes_the_scopes_own_points_and_its_shared_tiers_but_no_other_users(
    store: VectorStore,
) -> None:
    await load_grid(store)
    everything = {g.name for g in GRID}
    # Ask for A's own points, B's, the customer's, the client's, the other client's: A's user-tier points and
    # its customer's and client's (what a user's Forget erases by id) go; B's and the other client's stay.
    asked = [mid(n) for n in ("c1/x/a/s1", "c1/x/a/", "c1/x/b/s1", "c1/x", "c1/y", "c2/x/a/s1", "c1")]
    await store.delete(A, asked)
    assert everything - await remaining(store) == {"c1/x/a/s1", "c1/x/a/", "c1/x", "c1"}  # not c1/y: another customer
    await store.delete(A, [])  # nothing asked, nothing done


# ---- persistence ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PERSISTENT, ids=[k.name for k in PERSISTENT])
async def test_persists_across_close_and_reopen(kind: Kind, tmp_path: Path) -> None:
    first = kind.make(tmp_path)
    await first.ensure(DIM)
    await load_grid(first)
    await first.forget(A, ForgetLevel.USER)
    before = await remaining(first)
    top = await first.search(A, unit(1), 5, model=M)
    await first.close()

    second = kind.make(tmp_path)
    try:
        # Reads work on a reopened store before ensure (a reader process may never call it)...
        assert await remaining(second) == before
        # ...and ensure on existing data neither wipes nor duplicates it.
        await second.ensure(DIM)
        assert await remaining(second) == before
        again = await second.search(A, unit(1), 5, model=M)
        assert ids(again) == ids(top)
        assert all(math.isclose(s1, s2, abs_tol=1e-5) for (_, s1), (_, s2) in zip(again, top, strict=True))
    finally:
        await second.close()


@pytest.mark.parametrize("kind", PERSISTENT, ids=[k.name for k in PERSISTENT])
async def test_reopen_with_another_dimension_fails(kind: Kind, tmp_path: Path) -> None:
    first = kind.make(tmp_path)
    await first.ensure(DIM)
    await first.upsert([pt("p", unit(1), A.owner(Tier.USER))])
    await first.close()
    second = kind.make(tmp_path)
    try:
        with pytest.raises(ValueError):
            await second.ensure(DIM * 2)
        # The failed ensure left the data alone and the store usable.
        await second.ensure(DIM)
        assert ids(await second.search(A, unit(1), 5, model=M)) == [mid("p")]
    finally:
        await second.close()
