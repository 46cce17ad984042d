"""One contract for the relational ports (MemoryRepo, JobRepo, ApiKeyRepo, ProcessedEvents, AuditLog),
run against every adapter: Postgres (a real server, each test in its own fresh schema) and SQLite.

Isolation is the point of most cases: every read is checked from the owner's side (sees it) and from each
neighbour's side (another user of the customer, another customer of the client, another client that even
reuses the same customer and user ids).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Protocol

import psycopg
import pytest

from acm.adapters.postgres_store import PostgresStore
from acm.adapters.sqlite_store import SqliteStore
from acm.domain.models import Job, JobStatus, Layer, Memory, MemoryStatus
from acm.domain.schema import default_schema
from acm.domain.scope import (
    ALL_TIERS,
    ForgetLevel,
    Grant,
    KeyRole,
    Owner,
    Scope,
    ScopeError,
    Tier,
    forgets,
    visible,
)
from acm.ports.stores import (
    ApiKey,
    ApiKeyRepo,
    AuditLog,
    JobRepo,
    MemoryFilter,
    MemoryRepo,
    PageMark,
    ProcessedEvents,
    SchemaRepo,
)


class Fetcher(Protocol):
    async def fetch(self, sql: str) -> Sequence[Any]: ...


class RelationalStore(Protocol):
    @property
    def executor(self) -> Fetcher: ...

    memories: MemoryRepo
    jobs: JobRepo
    api_keys: ApiKeyRepo
    processed: ProcessedEvents
    audit: AuditLog
    schemas: SchemaRepo

    async def close(self) -> None: ...


@dataclass
class Backend:
    """Opens stores on one private database (several opens share it, like several processes would)."""

    name: str
    opener: Callable[[float], Awaitable[RelationalStore]]
    slow_sql: str  # a statement that runs for seconds
    opened: list[RelationalStore] = field(default_factory=list)

    async def open(self, timeout_s: float = 5.0) -> RelationalStore:
        store = await self.opener(timeout_s)
        self.opened.append(store)
        return store


@pytest.fixture(params=[pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.infra)])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    if request.param == "sqlite":
        db = tmp_path / "acm.db"

        async def open_sqlite(timeout_s: float) -> RelationalStore:
            return await SqliteStore.open(db, timeout_s=timeout_s)

        count_far = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
        b = Backend("sqlite", open_sqlite, count_far)
        yield b
        for s in b.opened:
            await s.close()
        return

    dsn: str = request.getfixturevalue("postgres_dsn")
    schema = f"contract_{uuid.uuid4().hex[:12]}"  # fresh tables per test: no test sees another's rows

    async def open_pg(timeout_s: float) -> RelationalStore:
        return await PostgresStore.open(dsn, schema=schema, timeout_s=timeout_s)

    b = Backend("postgres", open_pg, "SELECT pg_sleep(30)")
    try:
        yield b
    finally:
        for s in b.opened:
            await s.close()
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
async def store(backend: Backend) -> RelationalStore:
    return await backend.open()


# --- data ---------------------------------------------------------------------------------------------

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

ALICE = Scope("c1", "acme", "alice", session_id="s1")
ALICE_S2 = Scope("c1", "acme", "alice", session_id="s2")
BOB = Scope("c1", "acme", "bob", session_id="s1")  # same customer, same session id as ALICE
CAROL = Scope("c1", "globex", "carol", session_id="s1")  # another customer of the client
GLOBEX_ALICE = Scope("c1", "globex", "alice", session_id="s1")  # same user id, another customer
C2_ALICE = Scope("c2", "acme", "alice", session_id="s1")  # another client reusing every id


def mem(
    memory_id: str,
    owner: Owner,
    text: str,
    *,
    session_id: str = "",
    minutes: int = 0,
    status: MemoryStatus = MemoryStatus.ACTIVE,
) -> Memory:
    return Memory(
        memory_id=memory_id,
        owner=owner,
        text=text,
        layer=Layer.LONG,
        kind="fact",
        source_turn_ids=(f"turn-{memory_id}",),
        created_at=T0 + timedelta(minutes=minutes),
        session_id=session_id,
        status=status,
    )


# Every memory mentions "refund", so one keyword query can probe every tier of every tenant.
SEED: tuple[Memory, ...] = (
    mem("alice-s1", ALICE.owner(Tier.USER), "Alice wants a refund for invoice 42", session_id="s1", minutes=1),
    mem("alice-s2", ALICE.owner(Tier.USER), "Alice refund follow-up call", session_id="s2", minutes=2),
    mem("alice-nos", ALICE.owner(Tier.USER), "Alice prefers refund by bank transfer", minutes=3),
    mem("bob-s1", BOB.owner(Tier.USER), "Bob wants a refund for invoice 43", session_id="s1", minutes=4),
    mem("acme-cust", ALICE.owner(Tier.CUSTOMER), "Acme refund policy: thirty days", session_id="s1", minutes=5),
    mem("carol-s1", CAROL.owner(Tier.USER), "Carol asked about a refund", session_id="s1", minutes=6),
    mem("galice-s1", GLOBEX_ALICE.owner(Tier.USER), "Globex Alice refund request", session_id="s1", minutes=7),
    mem("globex-cust", CAROL.owner(Tier.CUSTOMER), "Globex refund policy: no refunds", minutes=8),
    mem("c1-client", ALICE.owner(Tier.CLIENT), "Refund requests go to the billing team", minutes=9),
    mem("c2-alice-s1", C2_ALICE.owner(Tier.USER), "Other client Alice refund", session_id="s1", minutes=10),
    mem("c2-acme-cust", C2_ALICE.owner(Tier.CUSTOMER), "Other client Acme refund policy", minutes=11),
    mem("c2-client", C2_ALICE.owner(Tier.CLIENT), "Other client refund handbook", minutes=12),
)
ALL_IDS = [m.memory_id for m in SEED]


async def seeded(store: RelationalStore) -> RelationalStore:
    await store.memories.upsert(SEED)
    return store


async def ids_seen_by_get(store: RelationalStore, scope: Scope) -> set[str]:
    return {m.memory_id for m in await store.memories.get(scope, ALL_IDS)}


async def ids_seen_by_search(
    store: RelationalStore, scope: Scope, query: str = "refund", tiers: tuple[Tier, ...] = ALL_TIERS
) -> set[str]:
    hits = [s.memory.memory_id for s in await store.memories.keyword_search(scope, query, 100, tiers)]
    # keyword_ids is the same search without the rows: same ids, same order, same isolation.
    assert await store.memories.keyword_ids(scope, query, 100, tiers) == hits
    return set(hits)


async def ids_seen_by_session(store: RelationalStore, scope: Scope) -> set[str]:
    return {m.memory_id for m in await store.memories.session_memories(scope, 100)}


def expected_visible(scope: Scope, tiers: tuple[Tier, ...] = ALL_TIERS) -> set[str]:
    return {m.memory_id for m in SEED if visible(scope, m.owner, tiers)}


async def present_ids(store: RelationalStore) -> set[str]:
    """Which seeded rows still exist, each read through a scope that owns it."""
    present = set()
    for m in SEED:
        o = m.owner
        reader = Scope(o.client_id, o.customer_id or "probe", o.user_id or "probe")
        if await store.memories.get(reader, [m.memory_id]):
            present.add(m.memory_id)
    return present


# --- memories: writes and round trips -----------------------------------------------------------------


async def test_upsert_then_get_round_trips_every_field(store: RelationalStore) -> None:
    plus2 = timezone(timedelta(hours=2))
    original = Memory(
        memory_id="m-full",
        owner=ALICE.owner(Tier.USER),
        text="Sarah Chen approved the €1,200 refund (ticket #77) — 'urgent'",
        layer=Layer.MID,
        kind="preference",
        source_turn_ids=("t1", "t2", "t3"),
        created_at=datetime(2025, 4, 2, 9, 30, 15, 123456, tzinfo=UTC),
        agent_id="billing-bot",
        session_id="s1",
        updated_at=datetime(2025, 4, 3, 10, 0, 0, 654321, tzinfo=plus2),
        valid_from=datetime(2025, 4, 1, tzinfo=UTC),
        valid_to=datetime(2025, 4, 30, 23, 59, 59, tzinfo=UTC),
        token_count=17,
        mention_count=3,
        access_count=5,
        status=MemoryStatus.STALE,
        superseded_by="m-newer",
        schema_version=4,
        role="tool",
        tool_name="kb_search",
        trust="untrusted",
    )
    await store.memories.upsert([original])
    [got] = await store.memories.get(ALICE, ["m-full"])
    assert got == original
    assert got.created_at.tzinfo is not None and got.updated_at is not None
    assert got.updated_at == original.updated_at  # same instant, whatever zone it comes back in
    assert isinstance(got.layer, Layer) and isinstance(got.status, MemoryStatus)
    assert isinstance(got.owner.tier, Tier) and isinstance(got.source_turn_ids, tuple)

    # Optional fields left empty stay empty.
    bare = mem("m-bare", ALICE.owner(Tier.CLIENT), "bare client fact")
    await store.memories.upsert([bare])
    assert await store.memories.get(ALICE, ["m-bare"]) == [bare]


async def test_get_keeps_the_callers_order_and_skips_unknown_ids(store: RelationalStore) -> None:
    await seeded(store)
    got = await store.memories.get(ALICE, ["c1-client", "nope", "alice-s1", "acme-cust", "alice-s1"])
    assert [m.memory_id for m in got] == ["c1-client", "alice-s1", "acme-cust"]
    assert await store.memories.get(ALICE, []) == []


async def test_upsert_twice_is_one_row_with_the_newer_content(store: RelationalStore) -> None:
    first = mem("m1", ALICE.owner(Tier.USER), "the parcel was lost in transit", session_id="s1")
    await store.memories.upsert([first])
    await store.memories.upsert([first])  # a redelivered event
    newer = replace(first, text="the parcel arrived damaged", mention_count=2, updated_at=T0)
    await store.memories.upsert([newer])

    assert await store.memories.get(ALICE, ["m1"]) == [newer]
    assert [m.memory_id for m in await store.memories.session_memories(ALICE, 10)] == ["m1"]
    # The keyword index follows the row: the old words are gone, the new ones are found.
    assert await store.memories.keyword_search(ALICE, "lost transit", 10) == []
    [hit] = await store.memories.keyword_search(ALICE, "damaged", 10)
    assert hit.memory == newer


async def test_upsert_cannot_take_over_another_clients_memory_id(store: RelationalStore) -> None:
    await seeded(store)
    hijack = mem("c1-client", C2_ALICE.owner(Tier.CLIENT), "overwritten by client 2")
    with pytest.raises(ScopeError):
        await store.memories.upsert([hijack])
    [kept] = await store.memories.get(ALICE, ["c1-client"])
    assert kept.text == "Refund requests go to the billing team"
    assert await store.memories.get(C2_ALICE, ["c1-client"]) == []


# --- memories: keyword search -------------------------------------------------------------------------


async def test_keyword_search_answers_a_natural_question_best_match_first(store: RelationalStore) -> None:
    owner = ALICE.owner(Tier.USER)
    await store.memories.upsert(
        [
            mem("refund", owner, "The customer asked for a refund because the charger broke", minutes=1),
            mem("customer", owner, "The customer likes the new dashboard", minutes=2),
            mem("shipping", owner, "Shipping takes three business days", minutes=3),
        ]
    )
    hits = await store.memories.keyword_search(ALICE, "What did the customer say about the refund?", 10)
    ids = [h.memory.memory_id for h in hits]
    assert ids[0] == "refund"  # matches two of the question's words
    assert "customer" in ids and "shipping" not in ids
    assert all(h.score > 0 for h in hits)
    assert hits[0].score > hits[-1].score or len(hits) == 1

    # Stemming: "refunds"/"refunded" find "refund".
    assert [h.memory.memory_id for h in await store.memories.keyword_search(ALICE, "refunded?", 10)] == ["refund"]
    assert len(await store.memories.keyword_search(ALICE, "What did the customer say?", 1)) == 1  # limit
    assert await store.memories.keyword_ids(ALICE, "What did the customer say about the refund?", 10) == ids
    assert len(await store.memories.keyword_ids(ALICE, "What did the customer say?", 1)) == 1
    assert await store.memories.keyword_ids(ALICE, "?!", 10) == []


async def test_phrase_search_finds_an_id_by_all_its_pieces_in_order(store: RelationalStore) -> None:
    owner = ALICE.owner(Tier.USER)
    rows = [mem(f"sku{i}", owner, f"tool[x]: SKU-{900000 + i} {{sku=SKU-{900000 + i}, qty={i}}}") for i in range(60)]
    rows += [
        mem("inc7", owner, "INC-7 {ticket=INC-7, status=open}", minutes=1),
        mem("inc17", owner, "INC-17 {ticket=INC-17, status=open}", minutes=2),
        mem("card", owner, "pay with credit_card_9513926 please", minutes=3),
        mem("order", owner, "order #W2378156 shipped", minutes=4),
    ]
    await store.memories.upsert(rows)
    found = await store.memories.phrase_search(ALICE, ["SKU-900042"], 5)
    assert [m.memory_id for m in found] == ["sku42"]  # every piece, not any of them ("sku" is in all 60)
    assert [m.memory_id for m in await store.memories.phrase_search(ALICE, ["INC-7"], 5)] == ["inc7"]
    both = await store.memories.phrase_search(ALICE, ["credit_card_9513926", "#W2378156"], 5)
    assert [m.memory_id for m in both] == ["order", "card"]  # newest first
    assert await store.memories.phrase_search(BOB, ["INC-7"], 5) == []  # scoped
    assert await store.memories.phrase_search(ALICE, ["?!"], 5) == []


@pytest.mark.parametrize(
    "query",
    ['refund AND "NEAR(', "refund* OR -charger:", "'); DROP TABLE memories; --", "what is the", "", "?!"],
)
async def test_keyword_search_treats_query_syntax_as_plain_words(store: RelationalStore, query: str) -> None:
    await store.memories.upsert([mem("r", ALICE.owner(Tier.USER), "refund for the charger")])
    hits = await store.memories.keyword_search(ALICE, query, 10)  # must not raise
    assert {h.memory.memory_id for h in hits} <= {"r"}
    assert await store.memories.get(ALICE, ["r"])  # and the table is still there


async def test_keyword_search_skips_stale_memories(store: RelationalStore) -> None:
    owner = ALICE.owner(Tier.USER)
    old = mem("old", owner, "Alice lives in Berlin", status=MemoryStatus.STALE)
    new = mem("new", owner, "Alice lives in Munich", minutes=1)
    await store.memories.upsert([replace(old, superseded_by="new"), new])
    assert {h.memory.memory_id for h in await store.memories.keyword_search(ALICE, "Where does Alice live?", 10)} == {
        "new"
    }
    # Stale is kept, not deleted: a direct read still returns it.
    assert [m.memory_id for m in await store.memories.get(ALICE, ["old"])] == ["old"]


async def test_keyword_search_follows_a_memorys_owner_when_it_changes(store: RelationalStore) -> None:
    # SQLite matches the words among the reader's rows inside FTS5, by an owner token of each row: the token
    # must follow an upsert that moves the memory to another tier, and ids that read alike must not collide.
    private = mem("moved", ALICE.owner(Tier.USER), "Alice found the lighthouse key")
    await store.memories.upsert([private])
    assert [h.memory.memory_id for h in await store.memories.keyword_search(BOB, "lighthouse", 5)] == []
    await store.memories.upsert([replace(private, owner=ALICE.owner(Tier.CUSTOMER))])
    assert [h.memory.memory_id for h in await store.memories.keyword_search(BOB, "lighthouse", 5)] == ["moved"]
    assert [h.memory.memory_id for h in await store.memories.keyword_search(CAROL, "lighthouse", 5)] == []
    spaced, joined = Scope("c1", "a.b", "c"), Scope("c1", "a", "b.c")
    await store.memories.upsert([mem("spaced", spaced.owner(Tier.USER), "the lighthouse keeper")])
    assert [h.memory.memory_id for h in await store.memories.keyword_search(joined, "lighthouse", 5)] == []
    assert [h.memory.memory_id for h in await store.memories.keyword_search(spaced, "lighthouse", 5)] == ["spaced"]
    assert [m.memory_id for m in await store.memories.phrase_search(spaced, ["lighthouse keeper"], 5)] == ["spaced"]


async def test_keyword_search_restricts_to_the_layers_asked_for(store: RelationalStore) -> None:
    owner = ALICE.owner(Tier.USER)
    turn = replace(mem("turn", owner, "Alice: I moved to Lisbon in May"), layer=Layer.SHORT, kind="turn")
    fact = replace(mem("fact", owner, "Alice moved to Lisbon", minutes=1), layer=Layer.MID)
    await store.memories.upsert([turn, fact])
    found = await store.memories.keyword_search(ALICE, "Lisbon", 10, layers=(Layer.MID, Layer.LONG))
    assert [h.memory.memory_id for h in found] == ["fact"]
    assert {h.memory.memory_id for h in await store.memories.keyword_search(ALICE, "Lisbon", 10)} == {"turn", "fact"}
    assert await store.memories.keyword_search(ALICE, "Lisbon", 10, layers=()) == []


async def test_active_in_slot_finds_the_current_value_only_in_scope(store: RelationalStore) -> None:
    owner = ALICE.owner(Tier.USER)
    old = replace(mem("berlin", owner, "Alice lives in Berlin"), slot="alice|lives_in", status=MemoryStatus.STALE)
    new = replace(mem("munich", owner, "Alice lives in Munich", minutes=1), slot="alice|lives_in")
    bobs = replace(mem("bobs", BOB.owner(Tier.USER), "Bob lives in Rome"), slot="alice|lives_in")
    await store.memories.upsert([replace(old, superseded_by="munich"), new, bobs])
    assert [m.memory_id for m in await store.memories.active_in_slot(ALICE, "alice|lives_in")] == ["munich"]
    assert (await store.memories.get(ALICE, ["munich"]))[0].slot == "alice|lives_in"
    assert await store.memories.active_in_slot(ALICE, "") == []


# --- memories: the Memory API's page and delete -------------------------------------------------------


async def all_pages(store: RelationalStore, scope: Scope, where: MemoryFilter, size: int) -> list[str]:
    """Every id page() yields for ``where``, page after page of ``size``."""
    seen: list[str] = []
    after: PageMark | None = None
    while True:
        page = await store.memories.page(scope, where, size, after)
        seen += [m.memory_id for m in page]
        if len(page) < size:
            return seen
        after = PageMark(page[-1].created_at, page[-1].memory_id)


@pytest.mark.parametrize("reader", [ALICE, BOB, CAROL, GLOBEX_ALICE, C2_ALICE])
async def test_page_lists_what_the_scope_sees_newest_first_across_pages(store: RelationalStore, reader: Scope) -> None:
    await seeded(store)
    newest_first = [m.memory_id for m in sorted(SEED, key=lambda m: m.created_at, reverse=True)]
    want = [i for i in newest_first if i in expected_visible(reader)]
    assert await all_pages(store, reader, MemoryFilter(), 2) == want
    assert await all_pages(store, reader, MemoryFilter(), 100) == want


async def test_page_applies_every_filter(store: RelationalStore) -> None:
    owner = ALICE.owner(Tier.USER)
    turn = replace(mem("turn", owner, "Alice: I moved to Lisbon", minutes=1), layer=Layer.SHORT, kind="turn")
    tool = replace(mem("tool", owner, "order 7 shipped", minutes=2), role="tool", tool_name="orders", trust="untrusted")
    old = replace(mem("old", owner, "Alice lives in Berlin", status=MemoryStatus.STALE), slot="alice|lives_in")
    new = replace(mem("new", owner, "Alice lives in Lisbon", minutes=3), slot="alice|lives_in", role="user")
    shared = mem("shared", ALICE.owner(Tier.CUSTOMER), "Acme ships on Mondays", minutes=4)
    await store.memories.upsert([turn, tool, replace(old, superseded_by="new"), new, shared])

    async def ids(**where: Any) -> list[str]:
        return [m.memory_id for m in await store.memories.page(ALICE, MemoryFilter(**where), 10)]

    assert await ids() == ["shared", "new", "tool", "turn"]  # active only, newest first
    assert await ids(include_stale=True) == ["shared", "new", "tool", "turn", "old"]
    assert await ids(tiers=(Tier.CUSTOMER,)) == ["shared"]
    assert await ids(layers=(Layer.SHORT,)) == ["turn"]
    assert await ids(kinds=("turn", "nothing")) == ["turn"]
    assert await ids(created_after=T0 + timedelta(minutes=2), created_before=T0 + timedelta(minutes=4)) == [
        "new",
        "tool",
    ]
    assert await ids(trust=("untrusted",)) == ["tool"]
    assert await ids(role="tool", tool_name="orders") == ["tool"]
    assert await ids(slot="alice|lives_in", include_stale=True) == ["new", "old"]
    assert await ids(superseded_by="new", include_stale=True) == ["old"]
    assert await ids(among=("turn", "shared", "bobs")) == ["shared", "turn"]
    assert await ids(among=()) == []
    # Another user of the customer: the shared memory only, whatever the filters.
    assert [m.memory_id for m in await store.memories.page(BOB, MemoryFilter(include_stale=True), 10)] == ["shared"]


async def test_delete_erases_only_what_the_scope_sees(store: RelationalStore) -> None:
    await seeded(store)
    await store.memories.add_authors(ALICE, ["acme-cust"])
    # Bob cannot delete Alice's memory, nor another customer's or client's.
    assert await store.memories.delete(BOB, ["alice-s1", "globex-cust", "c2-client"]) == []
    assert await present_ids(store) == set(ALL_IDS)
    assert sorted(await store.memories.delete(ALICE, ["alice-s1", "acme-cust", "alice-s1", "unknown"])) == [
        "acme-cust",
        "alice-s1",
    ]
    assert await present_ids(store) == set(ALL_IDS) - {"alice-s1", "acme-cust"}
    assert await store.memories.forget_authored(ALICE) == []  # its authorship row went with it
    assert await ids_seen_by_search(store, ALICE) == {"alice-s2", "alice-nos", "c1-client"}  # the keyword index too
    assert await store.memories.delete(ALICE, ["alice-s1"]) == []


# --- memories: isolation ------------------------------------------------------------------------------


async def test_a_user_sees_own_customer_and_client_tiers(store: RelationalStore) -> None:
    await seeded(store)
    want = {"alice-s1", "alice-s2", "alice-nos", "acme-cust", "c1-client"}
    assert expected_visible(ALICE) == want
    assert await ids_seen_by_get(store, ALICE) == want
    assert await ids_seen_by_search(store, ALICE) == want


async def test_another_user_of_the_same_customer_never_sees_user_tier(store: RelationalStore) -> None:
    await seeded(store)
    assert await ids_seen_by_get(store, BOB) == {"bob-s1", "acme-cust", "c1-client"}
    assert await ids_seen_by_search(store, BOB) == {"bob-s1", "acme-cust", "c1-client"}
    assert await ids_seen_by_search(store, BOB, "Alice invoice 42") == {"bob-s1"}  # "invoice"
    assert await store.memories.get(BOB, ["alice-s1", "alice-s2", "alice-nos"]) == []
    # Same session id as Alice's, yet only Bob's own rows.
    assert await ids_seen_by_session(store, BOB) == {"bob-s1"}


async def test_another_customer_never_sees_customer_tier(store: RelationalStore) -> None:
    await seeded(store)
    for reader in (CAROL, GLOBEX_ALICE):
        seen = await ids_seen_by_get(store, reader)
        assert "acme-cust" not in seen and not seen & {"alice-s1", "alice-s2", "alice-nos", "bob-s1"}
        assert seen == expected_visible(reader)
        assert await ids_seen_by_search(store, reader) == expected_visible(reader)
        assert await ids_seen_by_search(store, reader, "Acme thirty days policy") & {"acme-cust"} == set()
    # Same user id and session id, other customer: Alice@acme's session is not Alice@globex's.
    assert await ids_seen_by_session(store, GLOBEX_ALICE) == {"galice-s1"}
    assert await ids_seen_by_session(store, ALICE) == {"alice-s1"}


async def test_another_client_never_sees_anything_even_client_tier(store: RelationalStore) -> None:
    await seeded(store)
    c1_ids = [m.memory_id for m in SEED if m.owner.client_id == "c1"]
    assert await store.memories.get(C2_ALICE, c1_ids) == []
    want = {"c2-alice-s1", "c2-acme-cust", "c2-client"}
    assert await ids_seen_by_get(store, C2_ALICE) == want
    assert await ids_seen_by_search(store, C2_ALICE) == want
    assert await ids_seen_by_search(store, C2_ALICE, "billing team", (Tier.CLIENT,)) == set()
    assert await ids_seen_by_session(store, C2_ALICE) == {"c2-alice-s1"}
    # And the other way round.
    assert not await ids_seen_by_get(store, ALICE) & want


async def test_tiers_argument_restricts_the_search(store: RelationalStore) -> None:
    await seeded(store)
    for tiers in [(Tier.CLIENT,), (Tier.CUSTOMER,), (Tier.USER,), (Tier.USER, Tier.CUSTOMER), ()]:
        assert await ids_seen_by_search(store, ALICE, tiers=tiers) == expected_visible(ALICE, tiers)
    assert await ids_seen_by_search(store, ALICE, tiers=(Tier.CLIENT,)) == {"c1-client"}


async def test_session_memories_newest_first_and_limited(store: RelationalStore) -> None:
    owner = ALICE.owner(Tier.USER)
    await store.memories.upsert(
        [mem(f"t{i}", owner, f"turn {i}", session_id="s1", minutes=i) for i in (3, 1, 4, 2)]
        + [mem("other-session", owner, "elsewhere", session_id="s2", minutes=9)]
    )
    assert [m.memory_id for m in await store.memories.session_memories(ALICE, 10)] == ["t4", "t3", "t2", "t1"]
    assert [m.memory_id for m in await store.memories.session_memories(ALICE, 2)] == ["t4", "t3"]
    # Only the layers asked for (mem() makes LONG memories): a turn-preview reader skips the facts.
    short = mem("t5", owner, "turn 5", session_id="s1", minutes=5)
    short.layer = Layer.SHORT
    await store.memories.upsert([short])
    assert [m.memory_id for m in await store.memories.session_memories(ALICE, 10, (Layer.SHORT,))] == ["t5"]
    assert len(await store.memories.session_memories(ALICE, 10, (Layer.SHORT, Layer.LONG))) == 5
    with pytest.raises(ScopeError):
        await store.memories.session_memories(Scope("c1", "acme", "alice"), 10)


async def test_turn_neighbours_are_the_turns_just_before_and_after_in_the_readers_own_session(
    store: RelationalStore,
) -> None:
    alice = ALICE.owner(Tier.USER)
    turns = [mem(f"t{i}", alice, f"turn {i}", session_id="s1", minutes=i) for i in (1, 2, 3, 4, 5)]
    same_turn = mem("t2-b", alice, "second sentence of turn 2", session_id="s1", minutes=2)
    stale = mem("t4-stale", alice, "superseded", session_id="s1", minutes=4, status=MemoryStatus.STALE)
    preview = mem("t2-short", alice, "a turn preview", session_id="s1", minutes=2)
    preview.layer = Layer.SHORT
    # Said in between, but by someone else or in another session or tier: never a neighbour of Alice's turns.
    between = T0 + timedelta(minutes=2, seconds=30)
    others = [
        replace(mem("bob-between", BOB.owner(Tier.USER), "bob", session_id="s1"), created_at=between),
        replace(mem("cust-between", ALICE.owner(Tier.CUSTOMER), "customer", session_id="s1"), created_at=between),
        replace(mem("s2-between", alice, "other session", session_id="s2"), created_at=between),
        replace(mem("c2-between", C2_ALICE.owner(Tier.USER), "other client", session_id="s1"), created_at=between),
    ]
    await store.memories.upsert([*turns, same_turn, stale, preview, *others])

    def ids(memories: list[Memory]) -> list[str]:
        return sorted(m.memory_id for m in memories)

    assert ids(await store.memories.turn_neighbours(ALICE, [turns[2]], (Layer.LONG,))) == ["t2", "t2-b", "t4"]
    assert ids(await store.memories.turn_neighbours(ALICE, [turns[0], turns[4]], (Layer.LONG,))) == ["t2", "t2-b", "t4"]
    # Turns are counted within the layers asked for: the nearest turn with a preview is turn 2's.
    assert ids(await store.memories.turn_neighbours(ALICE, [turns[2]], (Layer.SHORT,))) == ["t2-short"]
    # Anchors of another owner or tier, or without a session, have no turns for this reader.
    assert await store.memories.turn_neighbours(ALICE, others[:2], (Layer.LONG,)) == []
    assert await store.memories.turn_neighbours(BOB, [turns[2]], (Layer.LONG,)) == []
    assert await store.memories.turn_neighbours(ALICE, [replace(turns[2], session_id="")], (Layer.LONG,)) == []


# --- memories: forget ---------------------------------------------------------------------------------

FORGET_CASES = [
    (ForgetLevel.SESSION, ALICE, {"alice-s1"}),
    (ForgetLevel.USER, ALICE, {"alice-s1", "alice-s2", "alice-nos"}),
    (ForgetLevel.CUSTOMER, ALICE, {"alice-s1", "alice-s2", "alice-nos", "bob-s1", "acme-cust"}),
    (ForgetLevel.CLIENT, ALICE, {m.memory_id for m in SEED if m.owner.client_id == "c1"}),
    (ForgetLevel.USER, GLOBEX_ALICE, {"galice-s1"}),
    (ForgetLevel.CLIENT, C2_ALICE, {"c2-alice-s1", "c2-acme-cust", "c2-client"}),
]


@pytest.mark.parametrize(("level", "scope", "erased"), FORGET_CASES, ids=lambda v: str(v)[:40])
async def test_forget_removes_exactly_what_forgets_covers(
    store: RelationalStore, level: ForgetLevel, scope: Scope, erased: set[str]
) -> None:
    await seeded(store)
    # The hand-written expectation is the domain rule's.
    assert erased == {m.memory_id for m in SEED if forgets(scope, level, m.owner, m.session_id)}
    assert await store.memories.forget(scope, level) == len(erased)
    assert await present_ids(store) == set(ALL_IDS) - erased
    assert await store.memories.forget(scope, level) == 0  # nothing left to erase


async def test_a_users_forget_takes_the_shared_tier_memories_that_user_alone_said(store: RelationalStore) -> None:
    await seeded(store)
    # acme-cust said by Alice and Bob, c1-client by Alice only, globex-cust by Carol (another customer).
    await store.memories.add_authors(ALICE, ["acme-cust", "c1-client"])
    await store.memories.add_authors(ALICE, ["acme-cust"])  # said again: one authorship
    await store.memories.add_authors(BOB, ["acme-cust"])
    await store.memories.add_authors(CAROL, ["globex-cust"])
    await store.memories.add_authors(C2_ALICE, ["c2-client"])  # same ids, another client

    assert await store.memories.forget_authored(ALICE) == ["c1-client"]
    assert await store.memories.forget(ALICE, ForgetLevel.USER) == 3
    assert await present_ids(store) == set(ALL_IDS) - {"alice-s1", "alice-s2", "alice-nos", "c1-client"}
    assert await store.memories.forget_authored(ALICE) == []  # replayed: nothing left of hers
    # Bob, now its only author, takes acme-cust with him; Carol's and the other client's stay.
    assert await store.memories.forget_authored(BOB) == ["acme-cust"]
    assert {"globex-cust", "c2-client"} <= await present_ids(store)
    # A customer's Forget drops its users' authorship too: nothing is left to attribute afterwards.
    await store.memories.forget(CAROL, ForgetLevel.CUSTOMER)
    assert await store.memories.forget_authored(CAROL) == []


async def test_forget_session_needs_a_session_id(store: RelationalStore) -> None:
    await seeded(store)
    with pytest.raises(ScopeError):
        await store.memories.forget(Scope("c1", "acme", "alice"), ForgetLevel.SESSION)
    assert await present_ids(store) == set(ALL_IDS)


async def test_expire_deletes_only_the_scopes_own_memories_past_their_layers_cutoff(store: RelationalStore) -> None:
    def aged(
        memory_id: str, owner: Owner, layer: Layer, days: int, agent: str = "bot", touched: int | None = None
    ) -> Memory:
        m = mem(memory_id, owner, f"{memory_id} refund", minutes=0)
        m.layer, m.agent_id = layer, agent
        m.created_at = T0 - timedelta(days=days)
        m.updated_at = None if touched is None else T0 - timedelta(days=touched)
        return m

    me = Scope("c1", "acme", "alice", "bot")
    await store.memories.upsert(
        [
            aged("short-old", me.owner(Tier.USER), Layer.SHORT, 5),
            aged("short-new", me.owner(Tier.USER), Layer.SHORT, 1),
            aged("mid-old-but-touched", me.owner(Tier.USER), Layer.MID, 40, touched=2),
            aged("mid-old", me.owner(Tier.USER), Layer.MID, 40),
            aged("long-old", me.owner(Tier.USER), Layer.LONG, 400),  # LONG has no cutoff here
            aged("other-agent", me.owner(Tier.USER), Layer.SHORT, 5, agent="other"),
            aged("bob-old", BOB.owner(Tier.USER), Layer.SHORT, 5),
            aged("customer-old", me.owner(Tier.CUSTOMER), Layer.SHORT, 5),
            aged("c2-old", Scope("c2", "acme", "alice", "bot").owner(Tier.USER), Layer.SHORT, 5),
        ]
    )
    cutoffs = {Layer.SHORT: T0 - timedelta(days=2), Layer.MID: T0 - timedelta(days=30)}
    assert sorted(await store.memories.expire(me, cutoffs, 100)) == ["mid-old", "short-old"]
    assert await store.memories.expire(me, cutoffs, 100) == []
    left = {m.memory_id for m in await store.memories.get(me, ["short-new", "mid-old-but-touched", "long-old"])}
    assert left == {"short-new", "mid-old-but-touched", "long-old"}
    assert await store.memories.expire(me, {}, 100) == []


# --- jobs ---------------------------------------------------------------------------------------------


async def test_job_create_is_insert_if_absent(store: RelationalStore) -> None:
    job = Job("job-1", ALICE, "ingest", created_at=T0, updated_at=T0)
    await store.jobs.create(job)
    assert await store.jobs.get(ALICE, "job-1") == job

    await store.jobs.finish(ALICE, "job-1", JobStatus.DONE, {"memories": 3, "dropped": 1})
    await store.jobs.create(job)  # a retried Ingest
    got = await store.jobs.get(ALICE, "job-1")
    assert got is not None
    assert (got.status, got.counts, got.kind, got.created_at) == (
        JobStatus.DONE,
        {"memories": 3, "dropped": 1},
        "ingest",
        T0,
    )
    assert got.updated_at > T0
    assert got.scope == ALICE


async def test_job_get_by_another_client_is_none(store: RelationalStore) -> None:
    await store.jobs.create(Job("job-1", ALICE, "ingest"))
    assert await store.jobs.get(C2_ALICE, "job-1") is None
    assert await store.jobs.get(BOB, "job-1") is None  # nor another user of the same client
    assert await store.jobs.get(ALICE, "missing") is None
    # Another client finishing "its" job with the same id must not touch ours.
    await store.jobs.finish(C2_ALICE, "job-1", JobStatus.FAILED, {}, "nope")
    got = await store.jobs.get(ALICE, "job-1")
    assert got is not None and got.status is JobStatus.PENDING


async def test_a_job_is_readable_only_by_the_scope_that_created_it(store: RelationalStore) -> None:
    await store.jobs.create(Job("job-1", ALICE, "ingest"))
    assert await store.jobs.get(ALICE, "job-1") is not None
    assert await store.jobs.get(ALICE_S2, "job-1") is not None  # her other session: same customer and user
    for other in (BOB, GLOBEX_ALICE, CAROL, C2_ALICE):
        assert await store.jobs.get(other, "job-1") is None, other


async def test_forgetting_a_scope_deletes_its_jobs(store: RelationalStore) -> None:
    jobs = {
        "alice-s1": ALICE,
        "alice-s2": ALICE_S2,
        "bob": BOB,
        "carol": CAROL,
        "c2-alice": C2_ALICE,
    }
    for job_id, scope in jobs.items():
        await store.jobs.create(Job(job_id, scope, "ingest"))

    async def left() -> set[str]:
        return {job_id for job_id, scope in jobs.items() if await store.jobs.get(scope, job_id) is not None}

    assert await store.jobs.forget(ALICE, ForgetLevel.SESSION) == 1
    assert await left() == {"alice-s2", "bob", "carol", "c2-alice"}
    assert await store.jobs.forget(ALICE, ForgetLevel.USER) == 1
    assert await left() == {"bob", "carol", "c2-alice"}
    assert await store.jobs.forget(BOB, ForgetLevel.CUSTOMER) == 1
    assert await left() == {"carol", "c2-alice"}
    assert await store.jobs.forget(CAROL, ForgetLevel.CLIENT) == 1
    assert await left() == {"c2-alice"}


async def test_job_finish_creates_a_lost_row(store: RelationalStore) -> None:
    await store.jobs.finish(ALICE, "job-lost", JobStatus.FAILED, {"turns": 2}, error="extractor crashed")
    got = await store.jobs.get(ALICE, "job-lost")
    assert got is not None
    assert (got.status, got.counts, got.error, got.scope) == (
        JobStatus.FAILED,
        {"turns": 2},
        "extractor crashed",
        ALICE,
    )


# --- API keys, processed events, audit ----------------------------------------------------------------


async def test_api_keys(store: RelationalStore) -> None:
    key = ApiKey("k1", "c1", "ab" * 32, "ci key", T0)
    await store.api_keys.add(key)
    assert await store.api_keys.by_hash("ab" * 32) == key
    assert await store.api_keys.by_hash("cd" * 32) is None
    assert await store.api_keys.by_id("c1", "k1") == key
    assert await store.api_keys.by_id("c2", "k1") is None
    # Re-adding revokes, but can never move the key to another client.
    await store.api_keys.add(replace(key, revoked=True))
    assert await store.api_keys.by_id("c1", "k1") == replace(key, revoked=True)
    await store.api_keys.add(replace(key, client_id="c2", key_hash="ef" * 32))
    assert await store.api_keys.by_id("c2", "k1") is None


async def test_api_keys_keep_their_role_and_grant(store: RelationalStore) -> None:
    agent = ApiKey("k2", "c1", "12" * 32, "bot", T0, grant=Grant(KeyRole.AGENT, ("acme", "globex"), ("alice",)))
    await store.api_keys.add(agent)
    assert await store.api_keys.by_hash("12" * 32) == agent
    assert await store.api_keys.by_id("c1", "k2") == agent
    narrowed = replace(agent, grant=Grant(KeyRole.AGENT, ("acme",)))
    await store.api_keys.add(narrowed)  # re-adding updates the grant
    assert await store.api_keys.by_id("c1", "k2") == narrowed
    assert (await store.api_keys.by_hash("ab" * 32)) is None


async def _raw(store: RelationalStore, sql: str) -> None:
    """A statement outside the ports (Postgres executor.execute, SQLite executor.write)."""
    run = getattr(store.executor, "execute", None) or store.executor.write  # type: ignore[attr-defined]
    await run(sql)


async def test_keys_stored_before_roles_are_admin_keys(backend: Backend) -> None:
    old = await backend.open()
    # The table as the release before roles made it, with a key in it.
    for column in ("role", "customers", "users"):
        await _raw(old, f"ALTER TABLE api_keys DROP COLUMN {column}")
    await _raw(old, "DROP TABLE schema_versions")  # that release numbered no migrations
    await _raw(
        old,
        "INSERT INTO api_keys (key_id, client_id, key_hash, name, created_at, revoked) "
        f"VALUES ('k-old', 'c1', '{'ab' * 32}', 'old key', '2025-03-01T12:00:00+00:00', false)",
    )
    upgraded = await backend.open()  # runs the migrations, as the new release starting would
    key = await upgraded.api_keys.by_hash("ab" * 32)
    assert key is not None and key.grant == Grant(KeyRole.ADMIN) and not key.revoked


async def test_memories_stored_before_provenance_read_as_trusted_of_no_known_role(backend: Backend) -> None:
    old = await backend.open()
    stored = mem("m-old", ALICE.owner(Tier.USER), "Alice wants a refund for invoice 42", session_id="s1")
    await old.memories.upsert([stored])
    # The table as the release before provenance made it, with that row in it.
    for column in ("role", "tool_name", "trust"):
        await _raw(old, f"ALTER TABLE memories DROP COLUMN {column}")
    await _raw(old, "DROP TABLE schema_versions")  # that release numbered no migrations
    upgraded = await backend.open()  # runs the migrations, as the new release starting would
    [got] = await upgraded.memories.get(ALICE, ["m-old"])
    assert got == stored and (got.role, got.tool_name, got.trust) == ("", "", "normal") and got.trusted
    # The new columns are written and read like the others, and the keyword index still finds the row.
    said = replace(stored, role="tool", tool_name="kb_search", trust="untrusted", mention_count=2)
    await upgraded.memories.upsert([said])
    assert await upgraded.memories.get(ALICE, ["m-old"]) == [said]
    assert [s.memory.memory_id for s in await upgraded.memories.keyword_search(ALICE, "refund invoice", 5)] == ["m-old"]


async def test_processed_events_are_idempotent(store: RelationalStore) -> None:
    assert not await store.processed.seen("ingest", "e1")
    await store.processed.mark("ingest", "e1")
    await store.processed.mark("ingest", "e1")  # marking twice is fine
    assert await store.processed.seen("ingest", "e1")
    assert not await store.processed.seen("anticipate", "e1")  # per consumer group
    assert not await store.processed.seen("ingest", "e2")


async def test_processed_events_in_batches(store: RelationalStore) -> None:
    """A micro-batch's events checked in one query and marked in one statement (ingest's batch path)."""
    await store.processed.mark("ingest", "b1")
    await store.processed.mark_all("ingest", ["b2", "b1", "b3", "b2"])  # marked before, repeated: fine
    await store.processed.mark_all("ingest", [])
    assert await store.processed.seen_among("ingest", ["b1", "b3", "b4", "b1"]) == {"b1", "b3"}
    assert await store.processed.seen("ingest", "b2")
    assert await store.processed.seen_among("anticipate", ["b1", "b2"]) == set()  # per consumer group
    assert await store.processed.seen_among("ingest", []) == set()


async def test_audit_is_scoped_to_the_client_newest_first(store: RelationalStore) -> None:
    await store.audit.record("c1", "denied", "first")
    await store.audit.record("c2", "denied", "other client")
    await store.audit.record("c1", "forget", "second")
    entries = await store.audit.list(ALICE)
    assert [(e.client_id, e.action, e.detail) for e in entries] == [
        ("c1", "forget", "second"),
        ("c1", "denied", "first"),
    ]
    assert entries[0].at >= entries[1].at and entries[0].at.tzinfo is not None
    assert [e.detail for e in await store.audit.list(C2_ALICE)] == ["other client"]
    assert [e.detail for e in await store.audit.list(ALICE, limit=1)] == ["second"]


async def test_agent_schemas_are_versioned_per_client(store: RelationalStore) -> None:
    v1 = default_schema("billing-bot", "SaaS billing support agent")
    v2 = replace(v1, version=2, description="billing and refunds")
    assert await store.schemas.latest(ALICE, "billing-bot") is None
    assert await store.schemas.put("c1", v1) is True
    assert await store.schemas.put("c1", v2) is True
    assert await store.schemas.latest(ALICE, "billing-bot") == v2
    # A version, once written, never changes.
    assert await store.schemas.put("c1", replace(v2, description="rewritten")) is False
    assert await store.schemas.latest(BOB, "billing-bot") == v2  # schemas are per client, not per user
    assert await store.schemas.latest(C2_ALICE, "billing-bot") is None
    assert await store.schemas.latest(ALICE, "other-agent") is None


async def test_each_schema_version_stays_readable_and_agents_lists_the_latest_per_agent(
    store: RelationalStore,
) -> None:
    billing = default_schema("billing-bot", "SaaS billing support agent")
    await store.schemas.put("c1", billing)
    await store.schemas.put("c1", replace(billing, version=2, description="billing and refunds"))
    coder = default_schema("coder", "coding agent")
    await store.schemas.put("c1", coder)
    await store.schemas.put("c2", default_schema("c2-only", "another client's agent"))

    assert await store.schemas.version(ALICE, "billing-bot", 1) == billing
    assert (await store.schemas.version(BOB, "billing-bot", 2)).description == "billing and refunds"  # type: ignore[union-attr]
    assert await store.schemas.version(ALICE, "billing-bot", 3) is None
    assert await store.schemas.version(C2_ALICE, "billing-bot", 1) is None  # another client's
    agents = await store.schemas.agents(ALICE)
    assert [(a.agent_id, a.version) for a in agents] == [("billing-bot", 2), ("coder", 1)]
    assert [a.agent_id for a in await store.schemas.agents(C2_ALICE)] == ["c2-only"]


# --- lifecycle ----------------------------------------------------------------------------------------


async def test_opening_twice_at_once_is_safe_and_shares_the_data(backend: Backend) -> None:
    # Two processes starting together both run the migrations; neither may fail or wipe the other.
    first, second = await asyncio.gather(backend.open(), backend.open())
    await first.memories.upsert([mem("shared", ALICE.owner(Tier.USER), "shared row")])
    assert [m.memory_id for m in await second.memories.get(ALICE, ["shared"])] == ["shared"]
    third = await backend.open()
    assert [m.memory_id for m in await third.memories.get(ALICE, ["shared"])] == ["shared"]


async def test_statements_run_under_a_deadline(backend: Backend) -> None:
    store = await backend.open(timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await store.executor.fetch(backend.slow_sql)
    assert time.monotonic() - started < 3
    # The store is still usable afterwards (the pool replaced or reset the cancelled connection).
    await store.memories.upsert([mem("after", ALICE.owner(Tier.USER), "after the timeout")])
    assert [m.memory_id for m in await store.memories.get(ALICE, ["after"])] == ["after"]


# --- the idle expiry sweep's reads ----------------------------------------------------------------------


def _aged(memory_id: str, owner: Owner, layer: Layer, days: int, agent: str = "bot") -> Memory:
    m = mem(memory_id, owner, f"{memory_id} refund")
    m.layer, m.agent_id = layer, agent
    m.created_at, m.updated_at = T0 - timedelta(days=days), None
    return m


SWEEP_CUTOFFS = {Layer.SHORT: T0 - timedelta(days=2), Layer.MID: T0 - timedelta(days=30)}


async def test_expiry_due_lists_exactly_the_users_expire_would_touch(store: RelationalStore) -> None:
    alice, bob, carol = (Scope("c1", "acme", u, "bot") for u in ("alice", "bob", "carol"))
    globex_alice = Scope("c1", "globex", "alice", "bot")
    await store.memories.upsert(
        [
            _aged("alice-short-old", alice.owner(Tier.USER), Layer.SHORT, 5),
            _aged("alice-mid-old", alice.owner(Tier.USER), Layer.MID, 40),
            _aged("bob-short-new", bob.owner(Tier.USER), Layer.SHORT, 1),  # fresh
            _aged("bob-long-old", bob.owner(Tier.USER), Layer.LONG, 400),  # LONG has no cutoff here
            _aged("carol-other-agent", carol.owner(Tier.USER), Layer.SHORT, 5, agent="other"),
            _aged("globex-alice-old", globex_alice.owner(Tier.USER), Layer.MID, 31),
            _aged("customer-old", alice.owner(Tier.CUSTOMER), Layer.SHORT, 5),  # not user-tier
            _aged("client-old", alice.owner(Tier.CLIENT), Layer.SHORT, 5),
            _aged("c2-alice-old", Scope("c2", "acme", "alice", "bot").owner(Tier.USER), Layer.SHORT, 5),
        ]
    )
    due = await store.memories.expiry_due(Scope("c1", "x", "x", "bot"), SWEEP_CUTOFFS, 100)
    assert due == [alice, globex_alice]  # sorted by customer, then user; never c2's alice
    assert await store.memories.expiry_due(Scope("c1", "x", "x", "bot"), SWEEP_CUTOFFS, 1) == [alice]
    assert await store.memories.expiry_due(Scope("c1", "x", "x", "other"), SWEEP_CUTOFFS, 100) == [
        Scope("c1", "acme", "carol", "other")
    ]
    assert await store.memories.expiry_due(Scope("c2", "x", "x", "bot"), SWEEP_CUTOFFS, 100) == [
        Scope("c2", "acme", "alice", "bot")
    ]
    assert await store.memories.expiry_due(Scope("c1", "x", "x", "bot"), {}, 100) == []
    # The same predicate as expire(): once each listed user is expired, nobody is due any more.
    for user in due:
        assert await store.memories.expire(user, SWEEP_CUTOFFS, 100)
    assert await store.memories.expiry_due(Scope("c1", "x", "x", "bot"), SWEEP_CUTOFFS, 100) == []
    assert await store.memories.expire(bob, SWEEP_CUTOFFS, 100) == []


async def test_clients_and_agents_with_user_memories(store: RelationalStore) -> None:
    assert await store.memories.clients_with_memories() == []
    await store.memories.upsert(
        [
            _aged("a", Scope("c1", "acme", "alice").owner(Tier.USER), Layer.SHORT, 1, agent="bot"),
            _aged("b", Scope("c1", "globex", "carol").owner(Tier.USER), Layer.MID, 1, agent="analyst"),
            _aged("c", Scope("c1", "acme", "bob").owner(Tier.USER), Layer.MID, 1, agent="bot"),
            _aged("d", Scope("c3", "acme", "alice").owner(Tier.USER), Layer.SHORT, 1, agent="helper"),
            _aged("e", Scope("c2", "acme", "alice").owner(Tier.CUSTOMER), Layer.SHORT, 1, agent="shared"),
        ]
    )
    # c2 holds no user-tier memory: nothing there can expire.
    assert await store.memories.clients_with_memories() == ["c1", "c3"]
    assert await store.memories.agents(Scope("c1", "x", "x")) == ["analyst", "bot"]
    assert await store.memories.agents(Scope("c3", "x", "x")) == ["helper"]
    assert await store.memories.agents(Scope("c2", "x", "x")) == []
