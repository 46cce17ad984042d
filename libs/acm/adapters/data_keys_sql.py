"""The gateway's data keys (acm.sealing.DataKeyRepo) in its relational store, Postgres or SQLite: the same SQL,
text columns only. The table is migrated with the gateway's api_keys group (acm.adapters.sql_migrations): one
key per (client, customer, user, session), "" below the owner's level; ``master_id`` names the master key that
wrapped it (acm.sealing.rotate_master re-wraps)."""

from __future__ import annotations

from collections.abc import Sequence

from acm.adapters.sql_repos import GatewayRepo, Row
from acm.domain.models import utcnow
from acm.sealing import Owner, StoredKey

_COLUMNS = "key_id, client_id, customer_id, user_id, session_id, wrapped, master_id"
_OWNER = "client_id = :client_id AND customer_id = :customer_id AND user_id = :user_id AND session_id = :session_id"


def _row(row: Row) -> StoredKey:
    owner = (row["client_id"], row["customer_id"], row["user_id"], row["session_id"])
    return StoredKey(row["key_id"], owner, row["wrapped"], row["master_id"])


def _stored(row: Row | None) -> StoredKey | None:
    return None if row is None else _row(row)


def _owner_params(owner: Owner) -> dict[str, str]:
    return {"client_id": owner[0], "customer_id": owner[1], "user_id": owner[2], "session_id": owner[3]}


class SqlDataKeyRepo(GatewayRepo):
    async def current(self, owner: Owner) -> StoredKey | None:
        return _stored(
            await self._ex.fetchone(f"SELECT {_COLUMNS} FROM data_keys WHERE {_OWNER}", _owner_params(owner))
        )

    async def by_id(self, key_id: str) -> StoredKey | None:
        return _stored(
            await self._ex.fetchone(f"SELECT {_COLUMNS} FROM data_keys WHERE key_id = :key_id", {"key_id": key_id})
        )

    async def add(self, key: StoredKey) -> None:
        await self._ex.execute(
            f"INSERT INTO data_keys ({_COLUMNS}, created_at) "
            "VALUES (:key_id, :client_id, :customer_id, :user_id, :session_id, :wrapped, :master_id, :created_at) "
            "ON CONFLICT (client_id, customer_id, user_id, session_id) DO NOTHING",
            {
                "key_id": key.key_id,
                "wrapped": key.wrapped,
                "master_id": key.master_id,
                "created_at": utcnow().isoformat(),
                **_owner_params(key.owner),
            },
        )

    async def destroy(self, prefix: Owner) -> int:
        where = ["client_id = :client_id"]
        if prefix[1]:
            where.append("customer_id = :customer_id")
        if prefix[2]:
            where.append("user_id = :user_id")
        if prefix[3]:
            where.append("session_id = :session_id")
        destroyed = await self._ex.execute(f"DELETE FROM data_keys WHERE {' AND '.join(where)}", _owner_params(prefix))
        if destroyed:
            # SQLite: the zeroed pages into the file and the WAL emptied (its frames still held the wrapped keys).
            await self._ex.purge()
        return destroyed

    async def not_wrapped_by(self, master_id: str, after: str, limit: int) -> list[StoredKey]:
        rows = await self._ex.fetch(
            f"SELECT {_COLUMNS} FROM data_keys WHERE master_id <> :master_id AND key_id > :after "
            "ORDER BY key_id LIMIT :limit",
            {"master_id": master_id, "after": after, "limit": limit},
        )
        return [_row(r) for r in rows]

    async def count_not_wrapped_by(self, master_id: str) -> int:
        row = await self._ex.fetchone(
            "SELECT count(*) AS n FROM data_keys WHERE master_id <> :master_id", {"master_id": master_id}
        )
        return int(row["n"]) if row is not None else 0

    async def rewrap(self, pairs: Sequence[tuple[StoredKey, StoredKey]]) -> int:
        changed = 0
        async with self._ex.transaction() as tx:  # one commit a batch, not one a key
            for old, new in pairs:
                changed += await tx.execute(
                    "UPDATE data_keys SET wrapped = :new, master_id = :master_id "
                    "WHERE key_id = :key_id AND wrapped = :old",
                    {"new": new.wrapped, "master_id": new.master_id, "key_id": old.key_id, "old": old.wrapped},
                )
        return changed

    async def purge(self) -> None:
        await self._ex.purge()
