"""sqlite_store.DecodedRows (issue 20, CPU per Fetch, second round): a memory is kept by its id with the row
it came from, so a row that changed in any column is decoded again, the kept one is replaced (one entry an
id), and rows of a query whose leading columns are not the memory's are never kept."""

from __future__ import annotations

import sqlite3
from typing import Any

from acm.adapters.sqlite_store import MEMORY_NAMES, DecodedRows


def _row(conn: sqlite3.Connection, memory_id: str, **changed: object) -> sqlite3.Row:
    values = {name: f"{name}-v" for name in MEMORY_NAMES} | {"memory_id": memory_id} | changed
    cols = ", ".join(f":{name} AS {name}" for name in MEMORY_NAMES)
    row: sqlite3.Row = conn.execute(f"SELECT {cols}, 1.5 AS score", values).fetchone()
    return row


def test_a_changed_row_is_decoded_again_and_replaces_the_kept_one() -> None:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    decoded = DecodedRows(8)
    calls: list[tuple[Any, ...]] = []

    def decode(row: Any) -> Any:
        calls.append(tuple(row))
        return object()

    a, b = _row(conn, "m1"), _row(conn, "m2")
    first = decoded.many([a, b], decode)
    assert decoded.many([_row(conn, "m1"), _row(conn, "m2")], decode) == first and len(calls) == 2  # equal rows
    for column in ("text", "status", "metadata", "updated_at", "access_count"):  # any column, the last one too
        changed = _row(conn, "m1", **{column: f"{column}-new"})
        again = decoded.many([changed], decode)[0]
        assert again is not first[0] and calls[-1] == tuple(changed)
        assert decoded.get(changed, decode) is again and len(decoded) == 2  # kept in place of the old one
    assert decoded.get(b, decode) is first[1]
    assert len(calls) == 7


def test_rows_of_other_columns_are_decoded_every_time() -> None:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    decoded = DecodedRows(8)
    calls: list[object] = []

    def decode(row: Any) -> Any:
        calls.append(row)
        return object()

    row = conn.execute("SELECT 1.5 AS score, 'm1' AS memory_id").fetchone()
    decoded.many([row, row], decode)
    assert len(calls) == 2 and len(decoded) == 0
    assert decoded.many([], decode) == []
