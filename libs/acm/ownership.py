"""Who owns which relational repository (docs/ARCHITECTURE.md, "Who owns which data"), and the guard that
stands in for a repository a service does not own.

Each service has its own store: a Postgres schema ``acm_<service>`` (with per-service roles, rights on that
schema alone) or, embedded, a SQLite file ``<service>.db``. Only the groups a service owns are migrated
there; the others are a ``NotOwnedRepo`` whose every call raises ``NotOwned``, so a read of another
service's data fails loudly in tests instead of quietly reading an empty table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

# The repositories of acm.bootstrap.Relational, which are also the migration groups
# (acm.adapters.sql_migrations): memories (+ FTS, memory_authors), jobs, api_keys, processed (processed_events),
# audit (audit_log), schemas (agent_schemas), working (working_memory, compactions), entities (entities,
# entity_aliases: ingest's entity registry).
REPOS = ("memories", "jobs", "api_keys", "processed", "audit", "schemas", "working", "entities")

# Every service keeps its own processed events and audit log; the rest has one owner (retrieve's memories
# are its read model, a projection of acm.memories.v1; ingest's are the write model).
OWNS: dict[str, frozenset[str]] = {
    "gateway": frozenset({"api_keys", "jobs", "audit"}),
    "ingest": frozenset({"memories", "entities", "processed", "audit"}),
    "retrieve": frozenset({"memories", "processed", "audit"}),
    "architect": frozenset({"schemas", "processed", "audit"}),
    "compact": frozenset({"working", "processed", "audit"}),
    "anticipate": frozenset({"processed", "audit"}),
}
SERVICES = tuple(OWNS)

# Who to ask instead, named in the error (memories: ingest writes them; retrieve serves them).
OWNER = {
    "memories": "ingest (write model) / retrieve (read model)",
    "jobs": "gateway",
    "api_keys": "gateway",
    "schemas": "architect",
    "working": "compact",
    "processed": "each service (its own)",
    "audit": "each service (its own)",
    "entities": "ingest (its entity registry; the graph is retrieve's)",
}

# The entity graph (entities, aliases, mentions, relations: one Neo4j database or, embedded, graph.db) has one
# owner too, its only reader and writer; Neo4j Community has no per-label rights, so this holds by design: only
# that service's Settings has a graph URL and only its register() takes a GraphStore (tests/unit/test_graph_owner.py).
GRAPH_OWNER = "retrieve"


class NotOwned(RuntimeError):
    """A service used a repository another service owns."""


def owns(service: str) -> frozenset[str]:
    """The repository groups ``service`` owns; ValueError for a name that is not a service."""
    try:
        return OWNS[service]
    except KeyError:
        raise ValueError(f"unknown service {service!r}: one of {', '.join(SERVICES)}") from None


def schema_of(service: str) -> str:
    """The Postgres schema (and role) of a service's tables."""
    owns(service)
    return f"acm_{service}"


class NotOwnedRepo:
    """Stands in for a repository ``service`` does not own: any method call raises NotOwned."""

    def __init__(self, service: str, repo: str) -> None:
        self._service = service
        self._repo = repo

    def __getattr__(self, name: str) -> Callable[..., NoReturn]:
        if name.startswith("__"):
            raise AttributeError(name)

        def refuse(*_: Any, **__: Any) -> NoReturn:
            raise NotOwned(f"{self._service} touched {self._repo} ({self._repo}.{name}), owned by {OWNER[self._repo]}")

        return refuse

    def __repr__(self) -> str:
        return f"NotOwnedRepo({self._service!r}, {self._repo!r})"
