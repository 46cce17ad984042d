"""One contract for ingest's EntityRegistry (acm.ports.entities), run against Postgres (a real server, a fresh
schema per test, through open_relational as ingest opens it) and SQLite: lookup by name or alias in the reader's
scope, aliases that only grow, an id of another client left alone, forget levels."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest

from acm.bootstrap import Relational, open_relational
from acm.domain.models import Entity
from acm.domain.scope import ForgetLevel, Scope, Tier
from acm.ports.entities import EntityRegistry

ALICE = Scope("c1", "acme", "alice", session_id="s1")
BOB = Scope("c1", "acme", "bob")
OTHER_CUSTOMER = Scope("c1", "globex", "alice")
OTHER_CLIENT = Scope("c2", "acme", "alice")


def ent(eid: str, scope: Scope, name: str, *aliases: str, tier: Tier = Tier.USER) -> Entity:
    return Entity(eid, scope.owner(tier), name, "person", tuple(sorted(aliases)))


@pytest.fixture(params=[pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.infra)])
async def registry(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EntityRegistry]:
    rel: Relational
    if request.param == "sqlite":
        rel = await open_relational(f"sqlite:///{tmp_path / 'ingest.db'}", service="ingest")
        try:
            yield rel.entities
        finally:
            await rel.close()
        return
    dsn: str = request.getfixturevalue("postgres_dsn")
    # A schema of its own per test (open_relational's acm_ingest would be shared by every test), with the
    # entities group's migrations, as ingest's store runs them.
    schema = f"ent_{uuid.uuid4().hex[:12]}"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(f"CREATE SCHEMA {schema}")
    from acm.adapters.entities_sql import SqlEntityRegistry
    from acm.adapters.postgres_store import PG, PostgresStore

    pg = await PostgresStore.open(dsn, schema=schema, groups=["entities"])
    try:
        yield SqlEntityRegistry(pg.executor, PG)
    finally:
        await pg.close()
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


async def test_found_by_name_or_alias_case_insensitively(registry: EntityRegistry) -> None:
    bob = ent("e1", ALICE, "Robert Smith", "Bob", "Robert Smith", "Smith")
    await registry.upsert([bob, ent("e2", ALICE, "Lisbon")])
    assert await registry.find(ALICE, ["bob"]) == [bob]
    assert await registry.find(ALICE, ["ROBERT SMITH", "lisbon"]) == [ent("e2", ALICE, "Lisbon"), bob]
    assert await registry.find(ALICE, ["Porto"]) == []
    assert await registry.find(ALICE, []) == []
    assert await registry.find(ALICE, ["bob"], tiers=()) == []


async def test_only_visible_entities_narrowest_tier_first(registry: EntityRegistry) -> None:
    mine = ent("u1", ALICE, "Acme Corp")
    shared = ent("c1", ALICE, "Acme Corp", tier=Tier.CUSTOMER)
    everyone = ent("k1", ALICE, "Acme Corp", tier=Tier.CLIENT)
    await registry.upsert([everyone, shared, mine])
    assert await registry.find(ALICE, ["acme corp"]) == [mine, shared, everyone]
    assert await registry.find(ALICE, ["acme corp"], tiers=(Tier.CUSTOMER, Tier.CLIENT)) == [shared, everyone]
    assert await registry.find(BOB, ["acme corp"]) == [shared, everyone]
    assert await registry.find(OTHER_CUSTOMER, ["acme corp"]) == [everyone]
    assert await registry.find(OTHER_CLIENT, ["acme corp"]) == []


async def test_aliases_only_grow_and_concurrent_learners_keep_both(registry: EntityRegistry) -> None:
    await registry.upsert([ent("e1", ALICE, "Robert Smith", "Robert Smith")])
    # Two turns read the same entity and each learned another alias: both stay.
    await asyncio.gather(
        registry.upsert([ent("e1", ALICE, "Robert Smith", "Robert Smith", "Bob")]),
        registry.upsert([ent("e1", ALICE, "Robert Smith", "Robert Smith", "Rob")]),
    )
    [found] = await registry.find(ALICE, ["rob"])
    assert found.aliases == ("Bob", "Rob", "Robert Smith")
    await registry.upsert([ent("e1", ALICE, "Robert Smith")])  # an upsert without them drops none
    assert (await registry.find(ALICE, ["bob"]))[0].aliases == ("Bob", "Rob", "Robert Smith")


async def test_an_id_of_another_client_is_left_alone(registry: EntityRegistry) -> None:
    await registry.upsert([ent("e1", ALICE, "Robert Smith")])
    await registry.upsert([ent("e1", OTHER_CLIENT, "Mallory", "Bob")])
    assert await registry.find(OTHER_CLIENT, ["mallory", "bob"]) == []
    assert await registry.find(ALICE, ["bob"]) == []
    assert await registry.find(ALICE, ["robert smith"]) == [ent("e1", ALICE, "Robert Smith")]


async def test_forget_levels(registry: EntityRegistry) -> None:
    alice = ent("a", ALICE, "Ann", "Annie")
    bob = ent("b", BOB, "Ann")
    shared = ent("s", ALICE, "Ann", tier=Tier.CUSTOMER)
    other = ent("o", OTHER_CUSTOMER, "Ann")
    await registry.upsert([alice, bob, shared, other])
    assert await registry.forget(ALICE, ForgetLevel.SESSION) == 0  # a session owns no entity
    assert await registry.forget(ALICE, ForgetLevel.USER) == 1
    assert await registry.find(ALICE, ["ann", "annie"]) == [shared]
    assert await registry.find(BOB, ["ann"]) == [bob, shared]
    assert await registry.forget(ALICE, ForgetLevel.CUSTOMER) == 2
    assert await registry.find(BOB, ["ann"]) == []
    assert await registry.find(OTHER_CUSTOMER, ["ann"]) == [other]
    await registry.upsert([alice])  # learned again after the Forget: its old aliases did not survive
    assert (await registry.find(ALICE, ["ann"]))[0].aliases == ("Annie",)
    assert await registry.forget(ALICE, ForgetLevel.CLIENT) == 2
    assert await registry.find(OTHER_CUSTOMER, ["ann"]) == []
