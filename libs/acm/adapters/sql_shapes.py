"""SQL that the Postgres and SQLite adapters share but for their placeholders and how they pass a list."""

from __future__ import annotations


def turn_neighbours_sql(anchors: str, columns: str, mine: str) -> str:
    """MemoryRepo.turn_neighbours: the memories said at the nearest instant before and after each anchor turn
    in its session. ``anchors`` yields (sid, t) rows; ``mine`` is the reader's own-memory filter with ``{x}``
    for the table alias (rows of one session, so the session-and-time index serves both lookups)."""
    x, m = mine.format(x="x"), mine.format(x="m")
    return f"""
        WITH anchor(sid, t) AS ({anchors}),
        around AS (
            SELECT anchor.sid AS sid,
                   (SELECT max(x.created_at) FROM memories x
                    WHERE {x} AND x.session_id = anchor.sid AND x.created_at < anchor.t) AS prev,
                   (SELECT min(x.created_at) FROM memories x
                    WHERE {x} AND x.session_id = anchor.sid AND x.created_at > anchor.t) AS next
            FROM anchor
        )
        SELECT {columns} FROM memories m
        WHERE {m} AND EXISTS (
            SELECT 1 FROM around WHERE around.sid = m.session_id AND m.created_at IN (around.prev, around.next)
        )
        ORDER BY m.session_id, m.created_at, m.memory_id
    """
