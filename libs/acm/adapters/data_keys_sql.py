"""The gateway's data keys (acm.sealing.DataKeyRepo) in its relational store, Postgres or SQLite: the same SQL,
text columns only. The table is migrated with the gateway's api_keys group (acm.adapters.sql_migrations)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acm.adapters.sql_repos import Executor, Row
from acm.domain.models import utcnow
from acm.sealing import Owner, StoredKey

if TYPE_CHECKING:
    from acm.bootstrap import Relational

_COLUMNS = "key_id, client_id, customer_id, user_id, wrapped"


def _stored(row: Row | None) -> StoredKey | None:
    if row is None:
        return None
    return StoredKey(row["key_id"], (row["client_id"], row["customer_id"], row["user_id"]), row["wrapped"])


def _owner_params(owner: Owner) -> dict[str, str]:
    return {"client_id": owner[0], "customer_id": owner[1], "user_id": owner[2]}


class SqlDataKeyRepo:
    def __init__(self, ex: Executor) -> None:
        self._ex = ex

    @classmethod
    def of(cls, rel: Relational) -> SqlDataKeyRepo:
        """Over the gateway's store (its executor: the store's pool or connection and deadline)."""
        return cls(rel._handle.executor)  # type: ignore[attr-defined]

    async def current(self, owner: Owner) -> StoredKey | None:
        return _stored(
            await self._ex.fetchone(
                f"SELECT {_COLUMNS} FROM data_keys "
                "WHERE client_id = :client_id AND customer_id = :customer_id AND user_id = :user_id",
                _owner_params(owner),
            )
        )

    async def by_id(self, key_id: str) -> StoredKey | None:
        return _stored(
            await self._ex.fetchone(f"SELECT {_COLUMNS} FROM data_keys WHERE key_id = :key_id", {"key_id": key_id})
        )

    async def add(self, key: StoredKey) -> None:
        await self._ex.execute(
            f"INSERT INTO data_keys ({_COLUMNS}, created_at) "
            "VALUES (:key_id, :client_id, :customer_id, :user_id, :wrapped, :created_at) "
            "ON CONFLICT (client_id, customer_id, user_id) DO NOTHING",
            {
                "key_id": key.key_id,
                "wrapped": key.wrapped,
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
        destroyed = await self._ex.execute(f"DELETE FROM data_keys WHERE {' AND '.join(where)}", _owner_params(prefix))
        if destroyed:
            # SQLite: the zeroed pages into the file and the WAL emptied (its frames still held the wrapped keys).
            await self._ex.purge()
        return destroyed
