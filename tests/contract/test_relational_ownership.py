"""Each service its own relational store (acm.ownership): open_relational(url, service=...) migrates only the
tables that service owns, into its own Postgres schema or SQLite file, and a repository it does not own
raises NotOwned on any call."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from acm.bootstrap import Relational, open_relational
from acm.domain.scope import Scope
from acm.ownership import OWNS, REPOS, SERVICES, NotOwned

ALICE = Scope("c1", "acme", "alice", session_id="s1")
# The tables of each group (acm.adapters.sql_migrations).
TABLES = {
    "memories": {"memories", "memory_authors"},
    "jobs": {"jobs", "dead_letters"},
    "api_keys": {"api_keys", "data_keys"},
    "processed": {"processed_events"},
    "audit": {"audit_log"},
    "schemas": {"agent_schemas"},
    "working": {"working_memory", "compactions"},
    "entities": {"entities", "entity_aliases"},
}


def tables_of(service: str) -> set[str]:
    return {"schema_versions"}.union(*(TABLES[g] for g in OWNS[service]))


@pytest.fixture(scope="module")
def database(postgres_dsn: str) -> Iterator[str]:
    """A throwaway database: the services' schemas have fixed names (acm_<service>)."""
    name = f"acm_own_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    base, _, _ = postgres_dsn.rpartition("/")
    yield f"{base}/{name}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')  # type: ignore[arg-type]


@dataclass
class Backend:
    kind: str
    url_of: Callable[[str], str]  # a service's database URL

    async def tables(self, rel: Relational) -> set[str]:
        """The tables the service's connection sees as its own (Postgres: its schema; SQLite: its file)."""
        sql = (
            "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()"
            if self.kind == "postgres"
            else "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'memories_fts%' AND name NOT LIKE 'sqlite_%'"  # FTS5's and SQLite's own
        )
        return {r["name"] for r in await rel._handle.executor.fetch(sql)}  # type: ignore[attr-defined]


@pytest.fixture(params=[pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.infra)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "sqlite":
        return Backend("sqlite", lambda service: f"sqlite:///{tmp_path / f'{service}.db'}")
    dsn: str = request.getfixturevalue("database")
    return Backend("postgres", lambda service: dsn)  # one database, a schema per service


@pytest.fixture
async def stores(backend: Backend) -> AsyncIterator[dict[str, Relational]]:
    opened = {s: await open_relational(backend.url_of(s), service=s) for s in SERVICES}
    yield opened
    for rel in opened.values():
        await rel.close()


async def test_each_service_has_only_its_own_tables(backend: Backend, stores: dict[str, Relational]) -> None:
    for service, rel in stores.items():
        assert await backend.tables(rel) == tables_of(service), service


async def test_a_repository_the_service_does_not_own_raises_not_owned(stores: dict[str, Relational]) -> None:
    for service, rel in stores.items():
        for repo in set(REPOS) - OWNS[service]:
            with pytest.raises(NotOwned, match=f"^{service} touched {repo} "):
                await getattr(rel, repo).get(ALICE, ["x"])
    with pytest.raises(NotOwned, match=r"gateway touched memories \(memories.keyword_search\), owned by ingest"):
        await stores["gateway"].memories.keyword_search(ALICE, "refund", 5)


async def test_services_own_data_is_their_own(stores: dict[str, Relational]) -> None:
    # Two services' processed events and audit logs are separate tables: one's write is not the other's.
    await stores["ingest"].processed.mark("g", "e1")
    await stores["ingest"].audit.record("c1", "forget", "by ingest")
    assert await stores["ingest"].processed.seen("g", "e1")
    assert not await stores["retrieve"].processed.seen("g", "e1")
    assert [e.detail for e in await stores["ingest"].audit.list(ALICE)] == ["by ingest"]
    assert await stores["gateway"].audit.list(ALICE) == []


async def test_reopening_a_services_store_runs_nothing_again(backend: Backend) -> None:
    first = await open_relational(backend.url_of("compact"), service="compact")
    second = await open_relational(backend.url_of("compact"), service="compact")
    try:
        rows = await second._handle.executor.fetch("SELECT grp, version FROM schema_versions")  # type: ignore[attr-defined]
        assert sorted((r["grp"], r["version"]) for r in rows) == [
            ("audit", 1),
            ("processed", 1),
            ("working", 1),
            ("working", 2),
        ]
    finally:
        await first.close()
        await second.close()


async def test_an_unknown_service_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown service 'gatway'"):
        await open_relational(f"sqlite:///{tmp_path / 'x.db'}", service="gatway")
