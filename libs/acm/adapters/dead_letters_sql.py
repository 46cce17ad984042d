"""The gateway's dead letters (acm.ports.stores.DeadLetterRepo) in its relational store, Postgres or SQLite: the
same SQL, text columns only. The table is migrated with the gateway's jobs group (acm.adapters.sql_migrations)."""

from __future__ import annotations

from datetime import UTC, datetime

from acm.adapters.sql_repos import GatewayRepo, Row, forget_where
from acm.domain.scope import ForgetLevel, Scope
from acm.ports.stores import DeadLetterEntry

_NAMES = (
    "letter_id, client_id, grp, topic, record_key, reason, attempts, size_bytes, failed_at, event_id, "
    "customer_id, user_id, session_id"
).split(", ")
# Column → DeadLetterEntry field, read in both directions: the same names but two ("group" and "key" are SQL words).
_FIELD_OF = {c: {"grp": "group", "record_key": "key"}.get(c, c) for c in _NAMES}
_COLUMNS = ", ".join(_NAMES)


def _text(at: datetime) -> str:
    """Fixed-width UTC text, so that text order is time order."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _entry(row: Row) -> DeadLetterEntry:
    fields = {field: row[column] for column, field in _FIELD_OF.items()}
    return DeadLetterEntry(
        **{
            **fields,
            "attempts": int(fields["attempts"]),
            "size_bytes": int(fields["size_bytes"]),
            "failed_at": datetime.strptime(fields["failed_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC),
        }
    )


class SqlDeadLetterRepo(GatewayRepo):
    async def add(self, letter: DeadLetterEntry) -> None:
        await self._ex.execute(
            f"INSERT INTO dead_letters ({_COLUMNS}) VALUES ({', '.join(f':{c}' for c in _NAMES)}) "
            "ON CONFLICT (letter_id) DO NOTHING",
            {
                **{column: getattr(letter, field) for column, field in _FIELD_OF.items()},
                "failed_at": _text(letter.failed_at),
            },
        )

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        where, params = forget_where(scope, level)
        return await self._ex.execute(f"DELETE FROM dead_letters WHERE {where}", params)

    async def of_client(
        self, client_id: str, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[DeadLetterEntry]:
        params: dict[str, object] = {"client_id": client_id, "limit": limit}
        mark = ""
        if after is not None:
            mark = " AND (failed_at < :mark_t OR (failed_at = :mark_t AND letter_id < :mark_id))"
            params.update(mark_t=_text(after[0]), mark_id=after[1])
        rows = await self._ex.fetch(
            f"SELECT {_COLUMNS} FROM dead_letters WHERE client_id = :client_id{mark} "
            "ORDER BY failed_at DESC, letter_id DESC LIMIT :limit",
            params,
        )
        return [_entry(r) for r in rows]
