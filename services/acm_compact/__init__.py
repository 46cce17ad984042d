"""Compact: keeps each session's working context under its token budget.

Today it trims: when a session crosses its soft limit, the newest turns that fit the budget stay in
the working context and older ones leave it (they stay retrievable as memories). Summaries, the pinned
entity state and verification come with the compaction issue."""

GROUP = "compact"
