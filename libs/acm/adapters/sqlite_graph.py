"""GraphStore on SQLite (stdlib sqlite3): the embedded default, same semantics as Neo4jGraphStore.

Tables: ``entities``, ``entity_aliases`` (lowercased alias -> entity_id), ``mentions`` (one row per
memory/entity pair, carrying the memory's owner and session) and ``relations`` (carrying their owner).
Absent owner ids are stored as "" so visibility and erase predicates are plain equality. Lists are
passed as one JSON parameter (``json_each``) so no SQL text is ever built from values.

sqlite3 blocks, so every call runs in a worker thread; one connection, serialised by a lock.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from acm.adapters.graph_rows import GraphReads, entity_row, mention_params, relation_row, scope_params
from acm.domain.models import Entity, Relation
from acm.domain.scope import ALL_TIERS, ForgetLevel, Owner, Scope, Tier, forgotten_ids, owner_columns

log = logging.getLogger(__name__)

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entities (
    entity_id   TEXT PRIMARY KEY,
    client_id   TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    tier        TEXT NOT NULL,
    name        TEXT NOT NULL,
    name_lc     TEXT NOT NULL,
    type        TEXT NOT NULL,
    aliases     TEXT NOT NULL  -- JSON array, as given
);
CREATE INDEX IF NOT EXISTS entities_name_scope ON entities (client_id, name_lc, tier, customer_id, user_id);
DROP INDEX IF EXISTS entities_name;
CREATE TABLE IF NOT EXISTS entity_aliases (
    alias_lc  TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    PRIMARY KEY (alias_lc, entity_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entity_aliases_entity ON entity_aliases (entity_id);
CREATE TABLE IF NOT EXISTS mentions (
    memory_id   TEXT NOT NULL,
    entity_id   TEXT NOT NULL,
    client_id   TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    tier        TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    PRIMARY KEY (memory_id, entity_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mentions_owner ON mentions (client_id, customer_id, user_id, session_id);
CREATE TABLE IF NOT EXISTS relations (
    src_entity_id TEXT NOT NULL,
    dst_entity_id TEXT NOT NULL,
    type          TEXT NOT NULL,
    memory_id     TEXT NOT NULL,
    client_id     TEXT NOT NULL,
    customer_id   TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    tier          TEXT NOT NULL,
    PRIMARY KEY (src_entity_id, dst_entity_id, type, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS relations_memory ON relations (memory_id);
CREATE INDEX IF NOT EXISTS relations_owner ON relations (client_id, customer_id, user_id);
-- Expansion reads an entity's visible edges and mentions from these alone (the owner columns are in the index,
-- the primary key too, memory_id ordered last): a range per tier, never a row lookup, never another user's rows
-- (acm bench scale at 100k: a hop 344 ms -> see docs/operations.md "Scale").
CREATE INDEX IF NOT EXISTS relations_src_scope ON relations (src_entity_id, client_id, tier, customer_id, user_id);
CREATE INDEX IF NOT EXISTS relations_dst_scope ON relations (dst_entity_id, client_id, tier, customer_id, user_id);
CREATE INDEX IF NOT EXISTS mentions_entity_scope ON mentions (entity_id, client_id, tier, customer_id, user_id);
DROP INDEX IF EXISTS relations_dst;
DROP INDEX IF EXISTS mentions_entity;
"""

_TIER_RANK = {Tier.USER: 0, Tier.CUSTOMER: 1, Tier.CLIENT: 2}


def _visible(t: str) -> str:
    """SQL form of ``visible()`` for table alias ``t`` (an alias, never user data)."""
    return (
        f"({t}.client_id = :client_id AND {t}.tier IN (SELECT value FROM json_each(:tiers))"
        f" AND ({t}.tier = 'client' OR ({t}.customer_id = :customer_id"
        f" AND ({t}.tier = 'customer' OR {t}.user_id = :user_id))))"
    )


def _tier_ranges(t: str, tiers: tuple[Tier, ...]) -> list[str]:
    """``visible()`` for table alias ``t`` as one predicate per tier, each an equality on all the owner columns:
    with an index (key, client_id, tier, customer_id, user_id) each is one range of the reader's rows, in
    memory_id order. Customer-tier rows carry no user id and client-tier rows neither (Owner enforces it)."""
    own = {
        Tier.USER: f"{t}.tier = 'user' AND {t}.customer_id = :customer_id AND {t}.user_id = :user_id",
        Tier.CUSTOMER: f"{t}.tier = 'customer' AND {t}.customer_id = :customer_id AND {t}.user_id = ''",
        Tier.CLIENT: f"{t}.tier = 'client' AND {t}.customer_id = '' AND {t}.user_id = ''",
    }
    return [f"{t}.client_id = :client_id AND {own[Tier(tier)]}" for tier in dict.fromkeys(tiers)]


def _forgotten(t: str, level: ForgetLevel, *, has_session: bool) -> str:
    """SQL form of ``forgets()``; rows without a session column count as session ""."""
    session = f"{t}.session_id = :session_id" if has_session else "'' = :session_id"
    return " AND ".join(session if c == "session_id" else f"{t}.{c} = :{c}" for c in forgotten_ids(level))


def _scope_params(scope: Scope, tiers: tuple[Tier, ...] = ALL_TIERS) -> dict[str, Any]:
    return _json(scope_params(scope, tiers), "tiers")


def _json(params: dict[str, Any], *lists: str) -> dict[str, Any]:
    """``params`` with the named lists as JSON text: SQLite reads them with json_each."""
    return {**params, **{k: json.dumps(params[k]) for k in lists}}


def _entity(r: sqlite3.Row) -> Entity:
    return Entity(
        r["entity_id"],
        Owner(r["client_id"], Tier(r["tier"]), r["customer_id"], r["user_id"]),
        r["name"],
        r["type"],
        tuple(json.loads(r["aliases"])),
    )


class SqliteGraphStore(GraphReads):
    """GraphStore in one SQLite file (WAL). ``path`` may be ":memory:" for throwaway use."""

    def __init__(self, path: str | Path, *, timeout_s: float = 5.0) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN / COMMIT ourselves; timeout = busy wait on a locked file.
        self._conn = sqlite3.connect(str(path), timeout=timeout_s, isolation_level=None, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.Lock()
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA secure_delete=ON")  # erased rows are zeroed in the file, not only unlinked
        self._conn.executescript(_SCHEMA)

    @classmethod
    async def open(cls, path: str | Path, *, timeout_s: float = 5.0) -> SqliteGraphStore:
        return await asyncio.to_thread(cls, path, timeout_s=timeout_s)

    async def _call(self, fn: Callable[[sqlite3.Connection], _T], *, write: bool = False) -> _T:
        def run() -> _T:
            with self._lock:
                if not write:
                    return fn(self._conn)
                # IMMEDIATE takes the write lock up front, so a busy file fails within the busy timeout
                # instead of deadlocking on a lock upgrade.
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    out = fn(self._conn)
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
                return out

        return await asyncio.to_thread(run)

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        if not entities:
            return
        rows = [_json(entity_row(e), "aliases", "aliases_lc") for e in entities]

        def write(conn: sqlite3.Connection) -> None:
            for row in rows:
                # The WHERE keeps an entity_id owned by another client from moving across clients.
                cur = conn.execute(
                    "INSERT INTO entities (entity_id, client_id, customer_id, user_id, tier, name, name_lc,"
                    " type, aliases) VALUES (:entity_id, :client_id, :customer_id, :user_id, :tier, :name,"
                    " :name_lc, :type, :aliases)"
                    " ON CONFLICT (entity_id) DO UPDATE SET customer_id = excluded.customer_id,"
                    " user_id = excluded.user_id, tier = excluded.tier, name = excluded.name,"
                    " name_lc = excluded.name_lc, type = excluded.type, aliases = excluded.aliases"
                    " WHERE entities.client_id = excluded.client_id",
                    row,
                )
                if cur.rowcount == 0:
                    log.warning("upsert_entities: entity id belongs to another client; skipped")
                    continue
                conn.execute("DELETE FROM entity_aliases WHERE entity_id = :entity_id", row)
                conn.execute(
                    "INSERT OR IGNORE INTO entity_aliases (alias_lc, entity_id)"
                    " SELECT value, :entity_id FROM json_each(:aliases_lc)",
                    row,
                )

        await self._call(write, write=True)

    async def link_mentions(
        self, owner: Owner, memory_id: str, entity_ids: Sequence[str], session_id: str = ""
    ) -> None:
        params = _json(mention_params(owner, memory_id, entity_ids, session_id), "entity_ids")

        def write(conn: sqlite3.Connection) -> None:
            foreign = conn.execute(
                "SELECT 1 FROM mentions WHERE memory_id = :memory_id AND client_id != :client_id LIMIT 1",
                params,
            ).fetchone()
            if foreign:
                log.warning("link_mentions: memory id belongs to another client; skipped")
                return
            # Re-linking restates the memory's owner on all its rows, as the Neo4j node would.
            conn.execute(
                "UPDATE mentions SET customer_id = :customer_id, user_id = :user_id, tier = :tier,"
                " session_id = :session_id WHERE memory_id = :memory_id",
                params,
            )
            conn.execute(
                "INSERT OR IGNORE INTO mentions (memory_id, entity_id, client_id, customer_id, user_id, tier,"
                " session_id) SELECT :memory_id, e.entity_id, :client_id, :customer_id, :user_id, :tier,"
                " :session_id FROM entities e WHERE e.client_id = :client_id"
                " AND e.entity_id IN (SELECT value FROM json_each(:entity_ids))",
                params,
            )

        await self._call(write, write=True)

    async def upsert_relations(self, relations: Sequence[Relation]) -> None:
        if not relations:
            return
        rows = [relation_row(r) for r in relations]

        def write(conn: sqlite3.Connection) -> None:
            # Only between existing entities of the relation's own client (as the Neo4j MATCH does).
            conn.executemany(
                "INSERT INTO relations (src_entity_id, dst_entity_id, type, memory_id, client_id,"
                " customer_id, user_id, tier)"
                " SELECT :src, :dst, :type, :memory_id, :client_id, :customer_id, :user_id, :tier"
                " WHERE (SELECT count(*) FROM entities"
                "        WHERE entity_id IN (:src, :dst) AND client_id = :client_id) = 2 - (:src = :dst)"
                " ON CONFLICT (src_entity_id, dst_entity_id, type, memory_id) DO UPDATE SET"
                " client_id = excluded.client_id, customer_id = excluded.customer_id,"
                " user_id = excluded.user_id, tier = excluded.tier",
                rows,
            )

        await self._call(write, write=True)

    async def _find(self, scope: Scope, wanted: list[str], tiers: tuple[Tier, ...]) -> list[Entity]:
        params = {**_scope_params(scope, tiers), "names": json.dumps(wanted)}
        # Names: one range of entities_name_scope per name and tier (the reader's entities of that name only);
        # aliases: by alias, then each entity by its key. The CROSS JOIN keeps SQLite from walking the client.
        by_name = " UNION ".join(
            f"SELECT e.entity_id FROM entities e WHERE e.name_lc IN (SELECT value FROM json_each(:names)) AND {tier}"
            for tier in _tier_ranges("e", tiers)
        )
        sql = (
            f"SELECT e.* FROM ({by_name} UNION SELECT a.entity_id FROM entity_aliases a"
            " WHERE a.alias_lc IN (SELECT value FROM json_each(:names))) AS found"
            " CROSS JOIN entities e ON e.entity_id = found.entity_id WHERE " + _visible("e")
        )
        rows = await self._call(lambda conn: conn.execute(sql, params).fetchall())
        found = [_entity(r) for r in rows]
        # Narrowest tier first, like retrieval (user -> customer -> client); then a stable order.
        found.sort(key=lambda e: (_TIER_RANK[e.owner.tier], e.name.lower(), e.entity_id))
        return found

    async def _walk(
        self, scope: Scope, seeds: list[str], max_depth: int, limit: int, tiers: tuple[Tier, ...]
    ) -> list[tuple[str, int]]:
        params = _scope_params(scope, tiers)
        seeds_sql = (
            "SELECT e.entity_id FROM entities e"
            " WHERE e.entity_id IN (SELECT value FROM json_each(:ids)) AND " + _visible("e")
        )
        ranges = _tier_ranges("r", tiers)
        # One BFS hop from one entity, either direction; both the edge and the entity it leads to visible. Each
        # branch is a range of relations_src_scope / relations_dst_scope: the reader's edges of that entity only.
        hop_sql = (
            "SELECT DISTINCT e.entity_id FROM ("
            + " UNION ALL ".join(
                f"SELECT r.{other} AS other FROM relations r WHERE r.{this} = :entity_id AND {tier}"
                for this, other in (("src_entity_id", "dst_entity_id"), ("dst_entity_id", "src_entity_id"))
                for tier in ranges
            )
            + ") AS edge CROSS JOIN entities e ON e.entity_id = edge.other WHERE "
            + _visible("e")
        )
        # The first `limit` visible mentions of one entity by memory_id, merged from one index range per tier:
        # bounded by the limit, not by the entity's degree. Keeping each entity's first `limit` loses nothing:
        # a memory cut from one entity's list has `limit` others before it at the same or fewer hops.
        mentions_sql = (
            " UNION ALL ".join(
                f"SELECT m.memory_id AS memory_id FROM mentions m WHERE m.entity_id = :entity_id AND {tier}"
                for tier in _tier_ranges("m", tiers)
            )
            + " ORDER BY 1 LIMIT :limit"
        )

        # A BFS with a visited set, in one read snapshot: linear in the reader's edges walked.
        def read(conn: sqlite3.Connection) -> list[tuple[str, int]]:
            conn.execute("BEGIN")
            try:
                ids = json.dumps(seeds)
                frontier = [r[0] for r in conn.execute(seeds_sql, {**params, "ids": ids})]
                hops = dict.fromkeys(frontier, 0)
                for hop in range(1, max_depth + 1):
                    reached: dict[str, int] = {}
                    for entity_id in frontier:
                        for (other,) in conn.execute(hop_sql, {**params, "entity_id": entity_id}):
                            if other not in hops:
                                reached[other] = hop
                    hops.update(reached)
                    frontier = list(reached)
                    if not frontier:
                        break
                best: dict[str, int] = {}
                for entity_id, hop in hops.items():
                    for (memory_id,) in conn.execute(mentions_sql, {**params, "entity_id": entity_id, "limit": limit}):
                        best[memory_id] = min(hop, best.get(memory_id, hop))
                return sorted(best.items(), key=lambda item: (item[1], item[0]))[:limit]
            finally:
                conn.execute("COMMIT")

        return await self._call(read)

    async def unlink_memories(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        params = {**_scope_params(scope), "ids": json.dumps(list(memory_ids))}
        own = (
            "m.client_id = :client_id AND m.customer_id = :customer_id AND m.user_id = :user_id AND m.tier = 'user'"
            " AND m.memory_id IN (SELECT value FROM json_each(:ids))"
        )

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "DELETE FROM relations AS r WHERE r.client_id = :client_id"
                f" AND r.memory_id IN (SELECT m.memory_id FROM mentions m WHERE {own})",
                params,
            )
            conn.execute(f"DELETE FROM mentions AS m WHERE {own}", params)

        await self._call(write, write=True)

    async def supersede(self, owner: Owner, memory_id: str, successor_id: str) -> None:
        params = {**owner_columns(owner), "old": memory_id, "new": successor_id}
        own = (
            "m.memory_id = :old AND m.client_id = :client_id AND m.customer_id = :customer_id"
            " AND m.user_id = :user_id AND m.tier = :tier"
        )

        def write(conn: sqlite3.Connection) -> None:
            if conn.execute(f"SELECT 1 FROM mentions m WHERE {own} LIMIT 1", params).fetchone() is None:
                return  # no links, or passed on already (a redelivery)
            # The successor's rows keep one session, its own when it has links already (as link_mentions does).
            conn.execute(
                "INSERT OR IGNORE INTO mentions (memory_id, entity_id, client_id, customer_id, user_id, tier,"
                " session_id) SELECT :new, m.entity_id, m.client_id, m.customer_id, m.user_id, m.tier,"
                " COALESCE((SELECT s.session_id FROM mentions s WHERE s.memory_id = :new LIMIT 1), m.session_id)"
                f" FROM mentions m WHERE {own}",
                params,
            )
            conn.execute("DELETE FROM relations WHERE client_id = :client_id AND memory_id = :old", params)
            conn.execute(f"DELETE FROM mentions AS m WHERE {own}", params)

        await self._call(write, write=True)

    async def forget(self, scope: Scope, level: ForgetLevel) -> None:
        params = _scope_params(scope)
        mem = _forgotten("m", level, has_session=True)
        rel = _forgotten("r", level, has_session=False)
        ent = _forgotten("e", level, has_session=False)

        def write(conn: sqlite3.Connection) -> None:
            # Edges learned from an erased memory go with it, as well as edges the level owns.
            conn.execute(
                "DELETE FROM relations AS r WHERE r.client_id = :client_id AND ("
                + rel
                + " OR r.memory_id IN (SELECT m.memory_id FROM mentions m WHERE "
                + mem
                + "))",
                params,
            )
            conn.execute("DELETE FROM mentions AS m WHERE " + mem, params)
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS doomed_entities (entity_id TEXT PRIMARY KEY) WITHOUT ROWID")
            conn.execute("DELETE FROM temp.doomed_entities")
            conn.execute("INSERT INTO temp.doomed_entities SELECT e.entity_id FROM entities e WHERE " + ent, params)
            # DETACH semantics: whatever touched an erased entity goes too.
            conn.execute("DELETE FROM mentions WHERE entity_id IN (SELECT entity_id FROM temp.doomed_entities)")
            conn.execute(
                "DELETE FROM relations WHERE src_entity_id IN (SELECT entity_id FROM temp.doomed_entities)"
                " OR dst_entity_id IN (SELECT entity_id FROM temp.doomed_entities)"
            )
            conn.execute("DELETE FROM entity_aliases WHERE entity_id IN (SELECT entity_id FROM temp.doomed_entities)")
            conn.execute("DELETE FROM entities WHERE entity_id IN (SELECT entity_id FROM temp.doomed_entities)")
            conn.execute("DELETE FROM temp.doomed_entities")

        await self._call(write, write=True)

        def checkpoint(conn: sqlite3.Connection) -> None:
            # The zeroed pages into the file, and the WAL (whose frames still hold the old rows) emptied.
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

        await self._call(checkpoint)

    async def entities_after(self, after: str, limit: int) -> list[Entity]:
        rows = await self._call(
            lambda conn: conn.execute(
                "SELECT * FROM entities WHERE entity_id > :after ORDER BY entity_id LIMIT :limit",
                {"after": after, "limit": max(limit, 0)},
            ).fetchall()
        )
        return [_entity(r) for r in rows]

    async def close(self) -> None:
        def close() -> None:
            with self._lock:
                self._conn.close()

        await asyncio.to_thread(close)
