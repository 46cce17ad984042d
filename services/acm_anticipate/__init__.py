"""Anticipate: watches what ingest writes and keeps each session's hot state warm.

Today it tracks the entities each session mentioned most recently (the seed of prefetch) and drops a
session's hot state when its scope is forgotten. Prefetching bundles comes with the anticipate issue."""

GROUP = "anticipate"
