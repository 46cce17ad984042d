"""GraphStore over Neo4j (async driver).

Model::

    (:Entity {entity_id, client_id, customer_id, user_id, tier, name, name_lc, type, aliases, aliases_lc})
    (:Memory {memory_id, client_id, customer_id, user_id, tier, session_id})-[:MENTIONS]->(:Entity)
    (:Entity)-[:REL {type, memory_id, client_id, customer_id, user_id, tier}]->(:Entity)

Absent owner ids are stored as "" (never null) so the visibility and erase predicates are plain equality.
REL edges carry their owner too: a relation learned from user A's private memory must not let user B
walk between two entities B can otherwise see.

Every read filters every node and edge it returns or walks through with the visibility rule of
``acm.domain.scope.visible``; every call has a deadline (a server-side transaction timeout plus a
client-side ``asyncio.timeout``) and passes user values only as parameters.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, LiteralString

from neo4j import (
    AsyncDriver,
    AsyncGraphDatabase,
    AsyncManagedTransaction,
    Query,
    RoutingControl,
    unit_of_work,
)
from neo4j.exceptions import ClientError

from acm.adapters.graph_rows import GraphReads, entity_row, mention_params, relation_row, scope_params
from acm.domain.models import Entity, Relation
from acm.domain.scope import ForgetLevel, Owner, Scope, Tier, forgotten_ids, owner_columns

log = logging.getLogger(__name__)

# Erase in bounded batches so one forget of a large client never becomes one huge transaction.
_FORGET_BATCH = 1000

_SCHEMA: tuple[LiteralString, ...] = (
    "CREATE CONSTRAINT acm_entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.entity_id IS UNIQUE",
    "CREATE CONSTRAINT acm_memory_id IF NOT EXISTS FOR (m:Memory) REQUIRE m.memory_id IS UNIQUE",
    "CREATE INDEX acm_entity_client IF NOT EXISTS FOR (e:Entity) ON (e.client_id)",
    "CREATE INDEX acm_entity_name IF NOT EXISTS FOR (e:Entity) ON (e.client_id, e.name_lc)",
    # The reader's own entities at one tier, by name or all of them (find_entities), not the client's.
    "CREATE INDEX acm_entity_owner_name IF NOT EXISTS FOR (e:Entity) ON (e.client_id, e.name_lc, e.tier, e.customer_id,"
    " e.user_id)",
    "CREATE INDEX acm_entity_owner IF NOT EXISTS FOR (e:Entity) ON (e.client_id, e.tier, e.customer_id, e.user_id)",
    "CREATE INDEX acm_memory_client IF NOT EXISTS FOR (m:Memory) ON (m.client_id)",
    "CREATE INDEX acm_rel_client IF NOT EXISTS FOR ()-[r:REL]-() ON (r.client_id)",
    "CREATE INDEX acm_rel_memory IF NOT EXISTS FOR ()-[r:REL]-() ON (r.memory_id)",
)


def _visible(var: LiteralString) -> LiteralString:
    """Cypher form of ``visible()`` for node or edge ``var`` (a variable name, never user data)."""
    return (
        f"({var}.client_id = $client_id AND {var}.tier IN $tiers AND ({var}.tier = 'client'"
        f" OR ({var}.customer_id = $customer_id AND ({var}.tier = 'customer' OR {var}.user_id = $user_id))))"
    )


def _forgotten(var: LiteralString, level: ForgetLevel) -> LiteralString:
    """Cypher form of ``forgets()``: a missing session_id (entities, edges) counts as ""."""
    return " AND ".join(
        f"coalesce({var}.{c}, '') = ${c}" if c == "session_id" else f"{var}.{c} = ${c}" for c in forgotten_ids(level)
    )


def _entity_from(node: Any) -> Entity:
    owner = Owner(node["client_id"], Tier(node["tier"]), node.get("customer_id") or "", node.get("user_id") or "")
    return Entity(node["entity_id"], owner, node["name"], node["type"], tuple(node.get("aliases") or ()))


_UPSERT_ENTITIES: LiteralString = """
UNWIND $rows AS row
MERGE (e:Entity {entity_id: row.entity_id})
ON CREATE SET e.client_id = row.client_id
WITH e, row
WHERE e.client_id = row.client_id
SET e.customer_id = row.customer_id, e.user_id = row.user_id, e.tier = row.tier,
    e.name = row.name, e.name_lc = row.name_lc, e.type = row.type,
    e.aliases = row.aliases, e.aliases_lc = row.aliases_lc
RETURN count(DISTINCT e) AS n
"""

# Like the SQLite mentions table, a memory exists only through its links: no entity, no node.
_LINK_MENTIONS: LiteralString = """
MATCH (e:Entity)
WHERE e.entity_id IN $entity_ids AND e.client_id = $client_id
WITH collect(e) AS ents
WHERE size(ents) > 0
MERGE (m:Memory {memory_id: $memory_id})
ON CREATE SET m.client_id = $client_id
WITH m, ents
WHERE m.client_id = $client_id
SET m.customer_id = $customer_id, m.user_id = $user_id, m.tier = $tier, m.session_id = $session_id
FOREACH (e IN ents | MERGE (m)-[:MENTIONS]->(e))
RETURN size(ents) AS n
"""

# The successor node is made as link_mentions makes one (a new node takes the old one's owner and session; one
# that exists keeps its own); the old node goes with the edges learned from it.
_SUPERSEDE: LiteralString = """
MATCH (m:Memory {memory_id: $old})
WHERE m.client_id = $client_id AND m.customer_id = $customer_id AND m.user_id = $user_id AND m.tier = $tier
MERGE (n:Memory {memory_id: $new})
ON CREATE SET n.client_id = m.client_id, n.customer_id = m.customer_id, n.user_id = m.user_id, n.tier = m.tier,
    n.session_id = m.session_id
WITH m, n
WHERE n.client_id = $client_id
OPTIONAL MATCH (m)-[:MENTIONS]->(e:Entity)
WITH m, n, collect(e) AS ents
FOREACH (e IN ents | MERGE (n)-[:MENTIONS]->(e))
WITH m
OPTIONAL MATCH ()-[r:REL]->() WHERE r.memory_id = m.memory_id AND r.client_id = $client_id
WITH m, collect(r) AS rels
FOREACH (x IN rels | DELETE x)
DETACH DELETE m
"""

_UPSERT_RELATIONS: LiteralString = """
UNWIND $rows AS row
MATCH (a:Entity {entity_id: row.src}), (b:Entity {entity_id: row.dst})
WHERE a.client_id = row.client_id AND b.client_id = row.client_id
MERGE (a)-[r:REL {type: row.type, memory_id: row.memory_id}]->(b)
SET r.client_id = row.client_id, r.customer_id = row.customer_id, r.user_id = row.user_id, r.tier = row.tier
RETURN count(r) AS n
"""

# By name or by alias among the reader's own entities at each tier, one index seek each (acm_entity_owner_name,
# acm_entity_owner): one predicate with the OR of name and alias made the planner walk every entity of the
# client (PROFILE: 7,608 rows, twice, for one name at 100k memories; docs/operations.md "Scale").
_OWNERS: tuple[LiteralString, ...] = (
    "e.tier = 'user' AND e.customer_id = $customer_id AND e.user_id = $user_id",
    "e.tier = 'customer' AND e.customer_id = $customer_id AND e.user_id = ''",
    "e.tier = 'client' AND e.customer_id = '' AND e.user_id = ''",
)
_FIND_ENTITIES: LiteralString = (
    "CALL () { "
    + " UNION ".join(
        "MATCH (e:Entity) WHERE e.client_id = $client_id AND " + found + " AND " + owner + " RETURN e"
        for owner in _OWNERS
        for found in ("e.name_lc IN $names", "any(a IN e.aliases_lc WHERE a IN $names)")
    )
    + " } WITH e WHERE "
    + _visible("e")
    + " RETURN e ORDER BY CASE e.tier WHEN 'user' THEN 0 WHEN 'customer' THEN 1 ELSE 2 END, e.name_lc, e.entity_id"
)

_SEEDS: LiteralString = "MATCH (e:Entity) WHERE e.entity_id IN $ids AND " + _visible("e") + " RETURN e.entity_id AS id"

# One BFS hop, either direction; both the edge and the entity it leads to must be visible.
_HOP: LiteralString = (
    "MATCH (a:Entity)-[r:REL]-(b:Entity) WHERE a.entity_id IN $frontier AND "
    + _visible("r")
    + " AND "
    + _visible("b")
    + " RETURN DISTINCT b.entity_id AS id"
)

_MENTIONING: LiteralString = (
    "UNWIND $reached AS p MATCH (m:Memory)-[:MENTIONS]->(:Entity {entity_id: p.id}) WHERE "
    + _visible("m")
    + " WITH m.memory_id AS memory_id, min(p.hops) AS hops"
    " RETURN memory_id, hops ORDER BY hops, memory_id LIMIT $limit"
)


class Neo4jGraphStore(GraphReads):
    """GraphStore on Neo4j. Build it with ``await Neo4jGraphStore.open(uri)``."""

    def __init__(self, driver: AsyncDriver, *, database: str = "neo4j", timeout_s: float = 5.0) -> None:
        self._driver = driver
        self._database = database
        self._timeout_s = timeout_s

    @classmethod
    async def open(
        cls,
        uri: str,
        *,
        user: str = "",
        password: str = "",
        database: str = "neo4j",
        timeout_s: float = 5.0,
    ) -> Neo4jGraphStore:
        """Connect, check the server answers, and create constraints / indexes if missing."""
        driver = AsyncGraphDatabase.driver(
            uri,
            auth=(user, password) if user else None,
            connection_timeout=timeout_s,
            connection_acquisition_timeout=timeout_s,
            max_transaction_retry_time=timeout_s,
        )
        store = cls(driver, database=database, timeout_s=timeout_s)
        try:
            async with asyncio.timeout(timeout_s * 2):
                await driver.verify_connectivity()
            await store._ensure_schema()
        except BaseException:
            await driver.close()
            raise
        return store

    async def _ensure_schema(self) -> None:
        for stmt in _SCHEMA:
            try:
                await self._run(stmt, {}, write=True)
            except ClientError as exc:
                # Two processes opening at once may race on IF NOT EXISTS; the rule exists either way.
                if "AlreadyExists" not in (exc.code or ""):
                    raise

    async def _run(self, text: LiteralString, params: dict[str, Any], *, write: bool) -> list[dict[str, Any]]:
        """One managed transaction with a server-side timeout and a client-side deadline."""
        # The client deadline is a little longer than the server's, so the server usually reports first.
        async with asyncio.timeout(self._timeout_s + 1.0):
            records, _, _ = await self._driver.execute_query(
                Query(text, timeout=self._timeout_s),
                params,
                routing_=RoutingControl.WRITE if write else RoutingControl.READ,
                database_=self._database,
            )
        return [r.data() for r in records]

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        if not entities:
            return
        rows = [entity_row(e) for e in entities]
        out = await self._run(_UPSERT_ENTITIES, {"rows": rows}, write=True)
        if out and out[0]["n"] != len({r["entity_id"] for r in rows}):
            # An entity_id already owned by another client is never moved across clients.
            log.warning("upsert_entities: some entity ids belong to another client; skipped")

    async def link_mentions(
        self, owner: Owner, memory_id: str, entity_ids: Sequence[str], session_id: str = ""
    ) -> None:
        await self._run(_LINK_MENTIONS, mention_params(owner, memory_id, entity_ids, session_id), write=True)

    async def upsert_relations(self, relations: Sequence[Relation]) -> None:
        if not relations:
            return
        await self._run(_UPSERT_RELATIONS, {"rows": [relation_row(r) for r in relations]}, write=True)

    async def _find(self, scope: Scope, wanted: list[str], tiers: tuple[Tier, ...]) -> list[Entity]:
        out = await self._run(_FIND_ENTITIES, {**scope_params(scope, tiers), "names": wanted}, write=False)
        return [_entity_from(r["e"]) for r in out]

    async def _walk(
        self, scope: Scope, seeds: list[str], max_depth: int, limit: int, tiers: tuple[Tier, ...]
    ) -> list[tuple[str, int]]:
        params = scope_params(scope, tiers)
        timeout_s = self._timeout_s

        # A hop-by-hop BFS with a visited set: linear in the edges walked, unlike enumerating all
        # variable-length paths, which explodes around hub entities. One read transaction for all hops,
        # which the server aborts after timeout_s.
        @unit_of_work(timeout=timeout_s)
        async def work(tx: AsyncManagedTransaction) -> list[tuple[str, int]]:
            res = await tx.run(_SEEDS, {**params, "ids": seeds})
            frontier = [r["id"] async for r in res]
            hops = dict.fromkeys(frontier, 0)
            for hop in range(1, max_depth + 1):
                if not frontier:
                    break
                res = await tx.run(_HOP, {**params, "frontier": frontier})
                frontier = [r["id"] async for r in res if r["id"] not in hops]
                hops.update(dict.fromkeys(frontier, hop))
            if not hops:
                return []
            reached = [{"id": k, "hops": v} for k, v in hops.items()]
            res = await tx.run(_MENTIONING, {**params, "reached": reached, "limit": limit})
            return [(r["memory_id"], r["hops"]) async for r in res]

        async with asyncio.timeout(timeout_s + 1.0):
            async with self._driver.session(database=self._database) as session:
                return await session.execute_read(work)

    async def forget(self, scope: Scope, level: ForgetLevel) -> None:
        params = scope_params(scope)
        # Memories first, with the edges learned from them (their provenance is erased too).
        mem_batch: LiteralString = (
            "MATCH (m:Memory) WHERE " + _forgotten("m", level) + " WITH m LIMIT $batch"
            " OPTIONAL MATCH ()-[r:REL]->() WHERE r.memory_id = m.memory_id AND r.client_id = $client_id"
            " WITH m, collect(r) AS rels"
            " FOREACH (x IN rels | DELETE x)"
            " DETACH DELETE m RETURN count(*) AS n"
        )
        rel_batch: LiteralString = (
            "MATCH ()-[r:REL]->() WHERE " + _forgotten("r", level) + " WITH r LIMIT $batch"
            " DELETE r RETURN count(*) AS n"
        )
        ent_batch: LiteralString = (
            "MATCH (e:Entity) WHERE " + _forgotten("e", level) + " WITH e LIMIT $batch"
            " DETACH DELETE e RETURN count(*) AS n"
        )
        for stmt in (mem_batch, rel_batch, ent_batch):
            while True:
                out = await self._run(stmt, {**params, "batch": _FORGET_BATCH}, write=True)
                if not out or out[0]["n"] < _FORGET_BATCH:
                    break

    async def unlink_memories(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        stmt: LiteralString = (
            "MATCH (m:Memory) WHERE m.memory_id IN $ids AND m.client_id = $client_id"
            " AND m.customer_id = $customer_id AND m.user_id = $user_id AND m.tier = 'user'"
            " OPTIONAL MATCH ()-[r:REL]->() WHERE r.memory_id = m.memory_id AND r.client_id = $client_id"
            " WITH m, collect(r) AS rels"
            " FOREACH (x IN rels | DELETE x)"
            " DETACH DELETE m"
        )
        await self._run(stmt, {**scope_params(scope), "ids": list(memory_ids)}, write=True)

    async def supersede(self, owner: Owner, memory_id: str, successor_id: str) -> None:
        await self._run(_SUPERSEDE, {**owner_columns(owner), "old": memory_id, "new": successor_id}, write=True)

    async def entities_after(self, after: str, limit: int) -> list[Entity]:
        out = await self._run(
            "MATCH (e:Entity) WHERE e.entity_id > $after RETURN e ORDER BY e.entity_id LIMIT $limit",
            {"after": after, "limit": max(limit, 0)},
            write=False,
        )
        return [_entity_from(r["e"]) for r in out]

    async def close(self) -> None:
        await self._driver.close()
