"""GraphStore contract: the Neo4j adapter and the embedded SQLite adapter must behave the same.

Each test works in fresh client ids (uuid), so tests never see each other's data on the shared Neo4j
server; the harness erases those clients afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from acm.adapters.neo4j_graph import Neo4jGraphStore
from acm.adapters.sqlite_graph import SqliteGraphStore
from acm.domain.models import Entity, Relation
from acm.domain.scope import ForgetLevel, Owner, Scope, Tier
from acm.ports.stores import GraphStore

AnyGraph = Neo4jGraphStore | SqliteGraphStore


@dataclass
class Stored:
    """What the backend physically holds for one client, read past the visibility rule."""

    entities: set[str]
    memories: set[str]
    relations: set[tuple[str, str, str, str]]


@dataclass
class Harness:
    store: AnyGraph
    kind: str
    clients: list[str] = field(default_factory=list)

    def client(self) -> str:
        cid = f"c{uuid.uuid4().hex[:12]}"
        self.clients.append(cid)
        return cid

    async def stored(self, client_id: str) -> Stored:
        if isinstance(self.store, Neo4jGraphStore):
            driver = self.store._driver
            ents, _, _ = await driver.execute_query(
                "MATCH (e:Entity {client_id: $c}) RETURN e.entity_id AS id", {"c": client_id}
            )
            mems, _, _ = await driver.execute_query(
                "MATCH (m:Memory {client_id: $c}) RETURN m.memory_id AS id",
                {"c": client_id},
            )
            rels, _, _ = await driver.execute_query(
                "MATCH (a)-[r:REL {client_id: $c}]->(b) RETURN a.entity_id AS a, b.entity_id AS b,"
                " r.type AS t, r.memory_id AS m",
                {"c": client_id},
            )
            return Stored(
                {r["id"] for r in ents},
                {r["id"] for r in mems},
                {(r["a"], r["b"], r["t"], r["m"]) for r in rels},
            )
        conn = self.store._conn
        with self.store._lock:
            ents2 = conn.execute("SELECT entity_id FROM entities WHERE client_id = ?", (client_id,)).fetchall()
            mems2 = conn.execute("SELECT memory_id FROM mentions WHERE client_id = ?", (client_id,)).fetchall()
            rels2 = conn.execute(
                "SELECT src_entity_id, dst_entity_id, type, memory_id FROM relations WHERE client_id = ?",
                (client_id,),
            ).fetchall()
        return Stored({r[0] for r in ents2}, {r[0] for r in mems2}, {(r[0], r[1], r[2], r[3]) for r in rels2})


def _as_port(store: AnyGraph) -> GraphStore:
    # Static check (mypy) that both adapters satisfy the port.
    return store


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.infra)])
async def graph(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Harness]:
    store: AnyGraph
    if request.param == "neo4j":
        uri: str = request.getfixturevalue("neo4j_uri")
        store = await Neo4jGraphStore.open(uri)
    else:
        store = await SqliteGraphStore.open(tmp_path / "graph.db")
    _as_port(store)
    harness = Harness(store, request.param)
    try:
        yield harness
    finally:
        for cid in harness.clients:
            await store.forget(Scope(cid, "cleanup", "cleanup"), ForgetLevel.CLIENT)
        await store.close()


def ent(eid: str, owner: Owner, name: str, *aliases: str, type_: str = "thing") -> Entity:
    return Entity(eid, owner, name, type_, tuple(aliases))


def ids(entities: list[Entity]) -> list[str]:
    return [e.entity_id for e in entities]


# --- entities -------------------------------------------------------------------------------------


async def test_upsert_entities_is_idempotent_and_replaces(graph: Harness) -> None:
    g, c = graph.store, graph.client()
    scope = Scope(c, "cu1", "u1")
    owner = scope.owner(Tier.USER)
    sarah = ent("sarah", owner, "Sarah Chen", "Sarah", "SC", type_="person")
    await g.upsert_entities([sarah])
    await g.upsert_entities([sarah])
    await g.upsert_entities([sarah, sarah])
    assert await g.find_entities(scope, ["sarah chen"]) == [sarah]
    assert (await graph.stored(c)).entities == {"sarah"}

    # An upsert replaces name, type and aliases.
    renamed = ent("sarah", owner, "Sarah C. Chen", "S. Chen", type_="employee")
    await g.upsert_entities([renamed])
    assert await g.find_entities(scope, ["s. chen"]) == [renamed]
    assert await g.find_entities(scope, ["SC"]) == []
    assert await g.find_entities(scope, ["Sarah Chen"]) == []


async def test_find_entities_by_name_and_alias_case_insensitive(graph: Harness) -> None:
    g, c = graph.store, graph.client()
    scope = Scope(c, "cu1", "u1")
    owner = scope.owner(Tier.USER)
    sarah = ent("sarah", owner, "Sarah Chen", "Sarah", "SC", type_="person")
    acme = ent("acme", owner, "Acme Corp", "ACME", type_="org")
    other = ent("other", owner, "Bob", type_="person")
    await g.upsert_entities([sarah, acme, other])

    assert await g.find_entities(scope, ["SARAH CHEN"]) == [sarah]
    assert await g.find_entities(scope, ["sc"]) == [sarah]
    assert await g.find_entities(scope, ["acme"]) == [acme]
    assert ids(await g.find_entities(scope, ["Sarah", "acme corp", "nobody"])) == ["acme", "sarah"]
    assert await g.find_entities(scope, ["nobody"]) == []
    assert await g.find_entities(scope, []) == []
    # The name is matched whole, not as a substring.
    assert await g.find_entities(scope, ["sarah ch"]) == []


# --- expand ---------------------------------------------------------------------------------------


async def _chain(g: AnyGraph, scope: Scope) -> None:
    """A -> B <- C (the second hop walks an edge backwards), one memory mentioning each."""
    owner = scope.owner(Tier.USER)
    await g.upsert_entities([ent("A", owner, "A"), ent("B", owner, "B"), ent("C", owner, "C")])
    await g.upsert_relations(
        [Relation("A", "B", "knows", "mr1", owner), Relation("C", "B", "works_with", "mr2", owner)]
    )
    await g.link_mentions(owner, "mA", ["A"])
    await g.link_mentions(owner, "mB", ["B"])
    await g.link_mentions(owner, "mC", ["C"])


async def test_expand_depth_0_1_2(graph: Harness) -> None:
    g, c = graph.store, graph.client()
    scope = Scope(c, "cu1", "u1")
    await _chain(g, scope)

    assert await g.expand(scope, ["A"], 0, 10) == [("mA", 0)]
    assert await g.expand(scope, ["A"], 1, 10) == [("mA", 0), ("mB", 1)]
    assert await g.expand(scope, ["A"], 2, 10) == [("mA", 0), ("mB", 1), ("mC", 2)]
    assert await g.expand(scope, ["A"], 5, 10) == [("mA", 0), ("mB", 1), ("mC", 2)]
    # Either direction: from C the chain is walked the other way.
    assert await g.expand(scope, ["C"], 2, 10) == [("mC", 0), ("mB", 1), ("mA", 2)]
    # Limit keeps the nearest.
    assert await g.expand(scope, ["A"], 2, 2) == [("mA", 0), ("mB", 1)]
    assert await g.expand(scope, ["A"], 2, 0) == []
    assert await g.expand(scope, [], 2, 10) == []
    assert await g.expand(scope, ["nope"], 2, 10) == []


async def test_expand_distinct_with_min_hops(graph: Harness) -> None:
    g, c = graph.store, graph.client()
    scope = Scope(c, "cu1", "u1")
    await _chain(g, scope)
    owner = scope.owner(Tier.USER)
    # mAC mentions both ends: it is returned once, at its nearest distance.
    await g.link_mentions(owner, "mAC", ["A", "C"])
    await g.link_mentions(owner, "mAC", ["A", "C"])  # idempotent
    got = await g.expand(scope, ["A"], 2, 10)
    assert got == [("mA", 0), ("mAC", 0), ("mB", 1), ("mC", 2)]
    # Several seeds: each memory at its distance from the nearest seed.
    assert await g.expand(scope, ["A", "C"], 1, 10) == [("mA", 0), ("mAC", 0), ("mC", 0), ("mB", 1)]


async def test_expand_limit_below_an_entitys_mentions_keeps_the_nearest_then_smallest_ids(graph: Harness) -> None:
    # An entity mentioned by more memories than the limit, from three tiers and by another user; a memory also
    # reached at one hop through a neighbour. The SQLite store reads at most `limit` mentions per entity.
    g, c = graph.store, graph.client()
    alice = Scope(c, "cu1", "alice")
    mine, org, bob = alice.owner(Tier.USER), alice.owner(Tier.CUSTOMER), Scope(c, "cu1", "bob").owner(Tier.USER)
    await g.upsert_entities([ent("K", alice.owner(Tier.CLIENT), "K"), ent("N", mine, "N")])
    await g.upsert_relations([Relation("K", "N", "knows", "r1", mine)])
    for memory_id, owner in (("m3", mine), ("m1", org), ("m5", mine), ("m2", bob), ("m4", org), ("m6", mine)):
        await g.link_mentions(owner, memory_id, ["K"])
    await g.link_mentions(mine, "m0", ["N"])
    await g.link_mentions(mine, "m4x", ["N", "K"])
    assert await g.expand(alice, ["K"], 1, 3) == [("m1", 0), ("m3", 0), ("m4", 0)]
    assert await g.expand(alice, ["K"], 1, 10) == [
        ("m1", 0),
        ("m3", 0),
        ("m4", 0),
        ("m4x", 0),
        ("m5", 0),
        ("m6", 0),
        ("m0", 1),
    ]
    assert await g.expand(alice, ["K"], 1, 10, tiers=(Tier.CUSTOMER, Tier.CLIENT)) == [("m1", 0), ("m4", 0)]


async def test_unlink_memories_drops_only_the_scopes_own_memories_and_their_edges(graph: Harness) -> None:
    g, c = graph.store, graph.client()
    scope = Scope(c, "cu1", "u1")
    await _chain(g, scope)
    other = Scope(c, "cu1", "u2")
    await g.link_mentions(other.owner(Tier.USER), "mOther", ["A"])
    await g.link_mentions(scope.owner(Tier.CUSTOMER), "mShared", ["A"])
    # mr1 (the A-B edge) was learned from memory mr1: unlinking that memory drops the edge as well.
    await g.link_mentions(scope.owner(Tier.USER), "mr1", ["A"])

    await g.unlink_memories(scope, ["mA", "mr1", "mOther", "mShared"])
    assert await g.expand(scope, ["A"], 0, 10) == [("mShared", 0)]
    stored = await graph.stored(c)
    assert {"mOther", "mShared", "mB", "mC"} <= stored.memories  # another user's, the customer's: untouched
    assert not {"mA", "mr1"} & stored.memories
    assert {r[3] for r in stored.relations} == {"mr2"}
    # Without the A-B edge, B is not one hop from A any more; C is still reached from B.
    assert ("mB", 1) not in await g.expand(scope, ["A"], 1, 10)
    assert await g.expand(scope, ["C"], 1, 10) == [("mC", 0), ("mB", 1)]
    await g.unlink_memories(scope, [])


async def test_a_superseded_memory_passes_its_mentions_on_and_leaves_with_its_edges(graph: Harness) -> None:
    g, c = graph.store, graph.client()
    scope = Scope(c, "cu1", "u1")
    await _chain(g, scope)
    user = scope.owner(Tier.USER)
    # mr1 stated the A-B edge and mentions A; a correction (mNew) supersedes it.
    await g.link_mentions(user, "mr1", ["A"], "s1")
    assert ("mr1", 0) in await g.expand(scope, ["A"], 0, 10)

    await g.supersede(user, "mr1", "mNew")
    assert await g.expand(scope, ["A"], 0, 10) == [("mA", 0), ("mNew", 0)]
    stored = await graph.stored(c)
    assert "mr1" not in stored.memories
    assert {r[3] for r in stored.relations} == {"mr2"}  # the edge it taught went with it
    assert ("mB", 1) not in await g.expand(scope, ["A"], 1, 10)
    await g.forget(Scope(c, "cu1", "u1", session_id="s1"), ForgetLevel.SESSION)
    assert "mNew" not in (await graph.stored(c)).memories  # the successor took the session with the mentions

    # A successor with links of its own keeps them (and its session) and gains the old one's.
    await g.link_mentions(user, "mOld", ["B"], "s2")
    await g.link_mentions(user, "mNext", ["C"], "s3")
    await g.supersede(user, "mOld", "mNext")
    await g.supersede(user, "mOld", "mNext")  # a redelivery: nothing left to pass on
    assert ("mNext", 0) in await g.expand(scope, ["B"], 0, 10)
    assert ("mNext", 0) in await g.expand(scope, ["C"], 0, 10)
    await g.forget(Scope(c, "cu1", "u1", session_id="s3"), ForgetLevel.SESSION)
    assert "mNext" not in (await graph.stored(c)).memories

    # Only the owner's memory is superseded: another user's of the same id is not.
    other = Scope(c, "cu1", "u2").owner(Tier.USER)
    await g.link_mentions(other, "mTheirs", ["A"])
    await g.supersede(user, "mTheirs", "mMine")
    assert "mTheirs" in (await graph.stored(c)).memories
    assert "mMine" not in (await graph.stored(c)).memories


async def test_expand_respects_tiers_argument(graph: Harness) -> None:
    g, c = graph.store, graph.client()
    scope = Scope(c, "cu1", "u1")
    await g.upsert_entities([ent("hub", scope.owner(Tier.CLIENT), "Hub")])
    await g.link_mentions(scope.owner(Tier.USER), "m_user", ["hub"])
    await g.link_mentions(scope.owner(Tier.CUSTOMER), "m_customer", ["hub"])
    await g.link_mentions(scope.owner(Tier.CLIENT), "m_client", ["hub"])

    assert sorted(await g.expand(scope, ["hub"], 0, 10)) == [
        ("m_client", 0),
        ("m_customer", 0),
        ("m_user", 0),
    ]
    assert await g.expand(scope, ["hub"], 0, 10, tiers=(Tier.CLIENT,)) == [("m_client", 0)]
    # The seed itself is client-tier, so restricting to user memories drops the seed: nothing.
    assert await g.expand(scope, ["hub"], 0, 10, tiers=(Tier.USER,)) == []


# --- isolation ------------------------------------------------------------------------------------


async def test_user_never_sees_another_users_user_tier_records(graph: Harness) -> None:
    g, c = graph.store, graph.client()
    alice = Scope(c, "cu1", "alice")
    bob = Scope(c, "cu1", "bob")
    await g.upsert_entities(
        [
            ent("secret", alice.owner(Tier.USER), "Project Falcon", "falcon"),
            ent("acme", alice.owner(Tier.CLIENT), "Acme"),
        ]
    )
    await g.link_mentions(alice.owner(Tier.USER), "m_alice", ["secret", "acme"])

    assert ids(await g.find_entities(alice, ["falcon"])) == ["secret"]
    assert await g.find_entities(bob, ["falcon"]) == []
    assert await g.find_entities(bob, ["Project Falcon"]) == []
    # Bob knowing the entity id does not help: an invisible seed is no seed.
    assert await g.expand(bob, ["secret"], 2, 10) == []
    # Bob sees the shared entity, but not Alice's memory that mentions it.
    assert ids(await g.find_entities(bob, ["acme"])) == ["acme"]
    assert await g.expand(bob, ["acme"], 2, 10) == []
    assert await g.expand(alice, ["acme"], 2, 10) == [("m_alice", 0)]


async def test_customer_never_sees_another_customers_customer_tier_records(graph: Harness) -> None:
    g, c = graph.store, graph.client()
    x = Scope(c, "cust-x", "u1")
    y = Scope(c, "cust-y", "u1")  # same user id, other customer
    await g.upsert_entities(
        [ent("plan_x", x.owner(Tier.CUSTOMER), "Gold Plan"), ent("hub", x.owner(Tier.CLIENT), "Hub")]
    )
    await g.link_mentions(x.owner(Tier.CUSTOMER), "m_x", ["plan_x", "hub"])
    await g.link_mentions(x.owner(Tier.USER), "m_x_user", ["hub"])

    assert ids(await g.find_entities(x, ["gold plan"])) == ["plan_x"]
    assert ids(await g.find_entities(Scope(c, "cust-x", "u2"), ["gold plan"])) == ["plan_x"]
    assert await g.find_entities(y, ["gold plan"]) == []
    assert await g.expand(y, ["plan_x"], 2, 10) == []
    assert await g.expand(y, ["hub"], 2, 10) == []
    assert await g.expand(x, ["hub"], 2, 10) == [("m_x", 0), ("m_x_user", 0)]


async def test_client_never_sees_another_clients_records(graph: Harness) -> None:
    g = graph.store
    c1, c2 = graph.client(), graph.client()
    one = Scope(c1, "cu1", "u1")
    two = Scope(c2, "cu1", "u1")  # same customer and user ids, other client
    for tier in (Tier.USER, Tier.CUSTOMER, Tier.CLIENT):
        await g.upsert_entities([ent(f"e_{tier}", one.owner(tier), f"Thing {tier}")])
        await g.link_mentions(one.owner(tier), f"m_{tier}", [f"e_{tier}"])
    await g.upsert_relations([Relation("e_user", "e_client", "rel", "m_user", one.owner(Tier.USER))])

    names = ["thing user", "thing customer", "thing client"]
    assert len(await g.find_entities(one, names)) == 3
    assert await g.find_entities(two, names) == []
    assert await g.expand(two, ["e_user", "e_customer", "e_client"], 3, 10) == []
    # Client 2 cannot graft onto client 1's entities by reusing their ids either.
    await g.upsert_entities([ent("e_client", two.owner(Tier.CLIENT), "Hijack")])
    await g.link_mentions(two.owner(Tier.CLIENT), "m_two", ["e_client"])
    await g.upsert_relations([Relation("e_client", "e_user", "rel", "m_two", two.owner(Tier.CLIENT))])
    assert await g.find_entities(two, ["hijack", "thing client"]) == []
    assert ids(await g.find_entities(one, ["thing client"])) == ["e_client"]
    assert await g.expand(two, ["e_client"], 3, 10) == []
    assert (await graph.stored(c2)) == Stored(set(), set(), set())


async def test_path_through_invisible_entity_is_not_followed(graph: Harness) -> None:
    g, c = graph.store, graph.client()
    alice = Scope(c, "cu1", "alice")
    bob = Scope(c, "cu1", "bob")
    shared = alice.owner(Tier.CLIENT)
    # P (client) - Q (alice's private) - R (client); a client-tier memory mentions R.
    await g.upsert_entities([ent("P", shared, "P"), ent("Q", alice.owner(Tier.USER), "Q"), ent("R", shared, "R")])
    await g.upsert_relations([Relation("P", "Q", "r", "m0", shared), Relation("Q", "R", "r", "m0", shared)])
    await g.link_mentions(shared, "mR", ["R"])

    assert await g.expand(alice, ["P"], 2, 10) == [("mR", 2)]
    assert await g.expand(bob, ["P"], 2, 10) == []
    assert await g.expand(bob, ["P"], 5, 10) == []


async def test_edge_learned_privately_is_not_walked_by_others(graph: Harness) -> None:
    g, c = graph.store, graph.client()
    alice = Scope(c, "cu1", "alice")
    bob = Scope(c, "cu1", "bob")
    shared = alice.owner(Tier.CLIENT)
    await g.upsert_entities([ent("P", shared, "P"), ent("R", shared, "R")])
    # Alice's private memory taught the relation: the edge is hers, though both ends are shared.
    await g.upsert_relations([Relation("P", "R", "r", "m_alice", alice.owner(Tier.USER))])
    await g.link_mentions(shared, "mR", ["R"])

    assert await g.expand(alice, ["P"], 1, 10) == [("mR", 1)]
    assert await g.expand(bob, ["P"], 1, 10) == []


async def test_user_sees_its_customer_and_client_tier_entities(graph: Harness) -> None:
    g, c = graph.store, graph.client()
    alice = Scope(c, "cu1", "alice")
    await g.upsert_entities(
        [
            ent("mine", alice.owner(Tier.USER), "Widget"),
            ent("org", alice.owner(Tier.CUSTOMER), "Widget"),
            ent("global", alice.owner(Tier.CLIENT), "Widget"),
            ent("other_user", Scope(c, "cu1", "bob").owner(Tier.USER), "Widget"),
            ent("other_org", Scope(c, "cu2", "alice").owner(Tier.CUSTOMER), "Widget"),
        ]
    )
    # Narrowest tier first.
    assert ids(await g.find_entities(alice, ["widget"])) == ["mine", "org", "global"]
    assert ids(await g.find_entities(alice, ["widget"], tiers=(Tier.CLIENT,))) == ["global"]
    assert ids(await g.find_entities(alice, ["widget"], tiers=(Tier.USER, Tier.CUSTOMER))) == ["mine", "org"]
    found = await g.find_entities(alice, ["widget"])
    assert [e.owner.tier for e in found] == [Tier.USER, Tier.CUSTOMER, Tier.CLIENT]
    assert found[0].owner == alice.owner(Tier.USER)


# --- forget ---------------------------------------------------------------------------------------


@dataclass
class World:
    c: str
    c_other: str
    who: Scope  # the scope whose levels are erased: customer X, user a1, session s1
    entities: dict[str, Owner]
    memories: dict[str, tuple[Owner, str]]  # memory_id -> owner, session


async def _world(graph: Harness) -> World:
    g = graph.store
    c, c_other = graph.client(), graph.client()
    a1 = Scope(c, "X", "a1", session_id="s1")
    a2 = Scope(c, "X", "a2")
    b1 = Scope(c, "Y", "b1")
    entities = {
        "E_client": a1.owner(Tier.CLIENT),
        "E_X": a1.owner(Tier.CUSTOMER),
        "E_a1": a1.owner(Tier.USER),
        "E_a2": a2.owner(Tier.USER),
        "E_Y": b1.owner(Tier.CUSTOMER),
        "E_b1": b1.owner(Tier.USER),
    }
    # Memories mention the shared hub H (and their own-tier entity), so the public API can find them.
    memories = {
        "M_a1_s1": (a1.owner(Tier.USER), "s1"),
        "M_a1_s2": (a1.owner(Tier.USER), "s2"),
        "M_a1_none": (a1.owner(Tier.USER), ""),
        "M_a2": (a2.owner(Tier.USER), "s1"),
        "M_X": (a1.owner(Tier.CUSTOMER), "s1"),
        "M_Y": (b1.owner(Tier.CUSTOMER), ""),
        "M_b1": (b1.owner(Tier.USER), "s1"),
        "M_client": (a1.owner(Tier.CLIENT), ""),
    }
    hub = a1.owner(Tier.CLIENT)
    await g.upsert_entities([ent("H", hub, "H")] + [ent(k, o, k) for k, o in entities.items()])
    for mid, (owner, session) in memories.items():
        await g.link_mentions(owner, mid, ["H"], session_id=session)
    await g.upsert_relations(
        [
            Relation("H", "E_client", "r", "M_a1_s1", a1.owner(Tier.USER)),  # learned in session s1
            Relation("H", "E_a1", "r", "M_a1_s2", a1.owner(Tier.USER)),
            Relation("H", "E_X", "r", "M_X", a1.owner(Tier.CUSTOMER)),
            Relation("H", "E_Y", "r", "M_Y", b1.owner(Tier.CUSTOMER)),
            Relation("H", "E_client", "r", "M_client", hub),
        ]
    )
    # The same ids in another client must survive every level.
    o2 = Scope(c_other, "X", "a1", session_id="s1")
    await g.upsert_entities([ent("H2", o2.owner(Tier.CLIENT), "Hub"), ent("E2", o2.owner(Tier.USER), "E2")])
    await g.link_mentions(o2.owner(Tier.USER), "M2", ["H2", "E2"], session_id="s1")
    await g.upsert_relations([Relation("H2", "E2", "r", "M2", o2.owner(Tier.USER))])
    return World(c, c_other, a1, {"H": hub, **entities}, memories)


_GONE: dict[ForgetLevel, tuple[set[str], set[str]]] = {
    # level -> (entities erased, memories erased)
    ForgetLevel.SESSION: (set(), {"M_a1_s1"}),
    ForgetLevel.USER: ({"E_a1"}, {"M_a1_s1", "M_a1_s2", "M_a1_none"}),
    ForgetLevel.CUSTOMER: (
        {"E_X", "E_a1", "E_a2"},
        {"M_a1_s1", "M_a1_s2", "M_a1_none", "M_a2", "M_X"},
    ),
}


@pytest.mark.parametrize("level", [ForgetLevel.SESSION, ForgetLevel.USER, ForgetLevel.CUSTOMER])
async def test_forget_removes_exactly_the_level(graph: Harness, level: ForgetLevel) -> None:
    g = graph.store
    w = await _world(graph)
    before = await graph.stored(w.c)
    assert before.entities == set(w.entities)
    assert before.memories == set(w.memories)
    other_before = await graph.stored(w.c_other)

    await g.forget(w.who, level)
    await g.forget(w.who, level)  # idempotent

    gone_entities, gone_memories = _GONE[level]
    after = await graph.stored(w.c)
    assert after.entities == set(w.entities) - gone_entities
    assert after.memories == set(w.memories) - gone_memories
    # Relations go with an erased endpoint, an erased source memory, or an erased owner.
    expected_rels = {r for r in before.relations if r[1] not in gone_entities and r[3] not in gone_memories}
    assert after.relations == expected_rels
    assert await graph.stored(w.c_other) == other_before

    # The public API agrees: each surviving memory is still reachable by a reader who may see it.
    for mid, (owner, _) in w.memories.items():
        reader = Scope(owner.client_id, owner.customer_id or "X", owner.user_id or "a1")
        found = ("H" not in gone_entities) and (mid, 0) in await g.expand(reader, ["H"], 0, 100)
        assert found == (mid not in gone_memories), mid
    for eid, owner in w.entities.items():
        reader = Scope(owner.client_id, owner.customer_id or "X", owner.user_id or "a1")
        assert bool(await g.find_entities(reader, [eid])) == (eid not in gone_entities), eid


async def test_forget_client_removes_everything_of_that_client_only(graph: Harness) -> None:
    g = graph.store
    w = await _world(graph)
    other_before = await graph.stored(w.c_other)
    assert other_before.memories == {"M2"}

    await g.forget(w.who, ForgetLevel.CLIENT)

    assert await graph.stored(w.c) == Stored(set(), set(), set())
    assert await graph.stored(w.c_other) == other_before
    other = Scope(w.c_other, "X", "a1")
    assert await g.expand(other, ["H2"], 1, 10) == [("M2", 0)]
    assert await g.find_entities(w.who, ["H", "E_client"]) == []


async def test_forget_session_without_session_id_only_touches_sessionless_records(graph: Harness) -> None:
    # forgets(): at session level the record's session must equal the scope's, "" included.
    g = graph.store
    w = await _world(graph)
    no_session = Scope(w.c, "X", "a1")
    await g.forget(no_session, ForgetLevel.SESSION)
    after = await graph.stored(w.c)
    assert after.memories == set(w.memories) - {"M_a1_none"}
    # Entities have no session, so they count as session "" and go too (as forgets() says).
    assert after.entities == set(w.entities) - {"E_a1"}
