"""SQL that the Postgres and SQLite adapters share but for their placeholders and how they pass a list."""

from __future__ import annotations


def turn_neighbours_sql(anchors: str, columns: str, mine: str) -> str:
    """MemoryRepo.turn_neighbours: the memories said at the nearest instant before and after each anchor turn
    in its session. ``anchors`` yields (sid, t) rows; ``mine`` is the reader's own-memory filter with ``{x}``
    for the table alias. Every lookup is by (owner, session, time), which the session index serves: the
    instants first (one index probe each), then the rows said at them, so the cost follows the anchors,
    not the size of the session."""
    x, m = mine.format(x="x"), mine.format(x="m")
    at = (
        "SELECT {columns} FROM around JOIN memories m"
        " ON m.session_id = around.sid AND m.created_at = around.{side} WHERE {m}"
    )
    return f"""
        WITH anchor(sid, t) AS ({anchors}),
        around AS MATERIALIZED (
            SELECT anchor.sid AS sid,
                   (SELECT max(x.created_at) FROM memories x
                    WHERE {x} AND x.session_id = anchor.sid AND x.created_at < anchor.t) AS prev,
                   (SELECT min(x.created_at) FROM memories x
                    WHERE {x} AND x.session_id = anchor.sid AND x.created_at > anchor.t) AS next
            FROM anchor
        )
        {at.format(columns=columns, side="prev", m=m)}
        UNION
        {at.format(columns=columns, side="next", m=m)}
        ORDER BY session_id, created_at, memory_id
    """
