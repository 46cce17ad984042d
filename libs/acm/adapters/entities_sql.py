"""EntityRegistry (acm.ports.entities) over ingest's relational store, one class for Postgres and SQLite: the
tables are the ``entities`` migration group (acm.adapters.sql_migrations), the queries the shared text of
acm.adapters.sql_repos with the store's Dialect. An alias is a row of its own, so an upsert adds aliases and
two turns learning two aliases of one entity at once keep both."""

from __future__ import annotations

from collections.abc import Sequence

from acm.adapters.sql_repos import Dialect, Executor, _owner, forget_where, scope_params, visible
from acm.domain.models import Entity
from acm.domain.scope import ALL_TIERS, ForgetLevel, Scope, Tier, owner_columns

_TIER_RANK = {Tier.USER: 0, Tier.CUSTOMER: 1, Tier.CLIENT: 2}

_UPSERT = """
INSERT INTO entities (entity_id, client_id, tier, customer_id, user_id, name, name_lc, type)
VALUES (:entity_id, :client_id, :tier, :customer_id, :user_id, :name, :name_lc, :type)
ON CONFLICT (entity_id) DO UPDATE SET tier = excluded.tier, customer_id = excluded.customer_id,
    user_id = excluded.user_id, name = excluded.name, name_lc = excluded.name_lc, type = excluded.type
WHERE entities.client_id = excluded.client_id
"""


class SqlEntityRegistry:
    def __init__(self, ex: Executor, dialect: Dialect) -> None:
        self._ex = ex
        self._d = dialect

    async def find(self, scope: Scope, names: Sequence[str], tiers: tuple[Tier, ...] = ALL_TIERS) -> list[Entity]:
        wanted = sorted({n.lower() for n in names if n})
        if not wanted or not tiers:
            return []
        d = self._d
        rows = await self._ex.fetch(
            "SELECT e.entity_id, e.client_id, e.tier, e.customer_id, e.user_id, e.name, e.type FROM entities e "
            f"WHERE {visible(tiers, 'e')} AND ({d.in_list('e.name_lc', 'names')} OR e.entity_id IN "
            f"(SELECT a.entity_id FROM entity_aliases a WHERE {d.in_list('a.alias_lc', 'names')}))",
            {**scope_params(scope), "names": d.array(wanted)},
        )
        if not rows:
            return []
        ids = [r["entity_id"] for r in rows]
        aliases: dict[str, list[str]] = {i: [] for i in ids}
        for a in await self._ex.fetch(
            f"SELECT entity_id, alias FROM entity_aliases WHERE {d.in_list('entity_id', 'ids')} "
            "ORDER BY entity_id, alias",
            {"ids": d.array(ids)},
        ):
            aliases[a["entity_id"]].append(a["alias"])
        found = [
            Entity(
                r["entity_id"],
                _owner(r["client_id"], r["tier"], r["customer_id"], r["user_id"]),
                r["name"],
                r["type"],
                tuple(aliases[r["entity_id"]]),
            )
            for r in rows
        ]
        # Narrowest tier first, as retrieval reads (user -> customer -> client); then a stable order.
        found.sort(key=lambda e: (_TIER_RANK[e.owner.tier], e.name.lower(), e.entity_id))
        return found

    async def upsert(self, entities: Sequence[Entity]) -> None:
        if not entities:
            return
        async with self._ex.transaction() as tx:
            aliases = []
            for e in {e.entity_id: e for e in entities}.values():
                row = {"entity_id": e.entity_id, **owner_columns(e.owner), "name": e.name, "name_lc": e.name.lower()}
                if not await tx.execute(_UPSERT, {**row, "type": e.type}):
                    continue  # the id is another client's: its aliases are not ours to add
                aliases += [{"entity_id": e.entity_id, "alias": a, "alias_lc": a.lower()} for a in set(e.aliases)]
            if aliases:
                await tx.executemany(
                    "INSERT INTO entity_aliases (entity_id, alias, alias_lc) VALUES (:entity_id, :alias, :alias_lc) "
                    "ON CONFLICT DO NOTHING",
                    aliases,
                )

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        if level is ForgetLevel.SESSION:
            return 0  # an entity belongs to a user (or a wider tier), never to one session
        where, params = forget_where(scope, level)
        async with self._ex.transaction() as tx:
            await tx.execute(
                f"DELETE FROM entity_aliases WHERE entity_id IN (SELECT entity_id FROM entities WHERE {where})", params
            )
            erased = await tx.execute(f"DELETE FROM entities WHERE {where}", params)
        await self._ex.purge()
        return erased
