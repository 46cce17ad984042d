"""The one place that turns URLs from Settings into adapters (tests wire fakes by passing their own)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlparse

from acm.ownership import REPOS, NotOwnedRepo, owns, schema_of
from acm.ports.bus import EventBus
from acm.ports.entities import EntityRegistry
from acm.ports.stores import (
    ApiKeyRepo,
    AuditLog,
    Cache,
    GraphStore,
    JobRepo,
    MemoryRepo,
    ProcessedEvents,
    SchemaRepo,
    VectorStore,
)
from acm.ports.working_memory import WorkingMemoryRepo

if TYPE_CHECKING:  # the adapters are imported when a URL asks for them (no Postgres driver for SQLite)
    from acm.adapters.sql_repos import SqlStore
    from acm.adapters.working_memory_sql import SqlWorkingMemoryRepo


class ConfigError(ValueError):
    pass


def _sqlite_path(url: str) -> Path:
    # sqlite:///relative or sqlite:////absolute, as SQLAlchemy spells it
    path = Path(url.removeprefix("sqlite:///"))
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class Relational:
    """The source-of-truth store, split into its small per-object repositories. A service's own store
    (``open_relational(url, service=...)``) has only the repositories that service owns; the others are
    acm.ownership.NotOwnedRepo guards."""

    memories: MemoryRepo
    jobs: JobRepo
    api_keys: ApiKeyRepo
    processed: ProcessedEvents
    audit: AuditLog
    schemas: SchemaRepo
    working: WorkingMemoryRepo  # sessions' working memory and compaction records (the compact issue)
    _handle: object
    entities: EntityRegistry  # ingest's entity registry (the graph itself is retrieve's: open_graph)

    async def close(self) -> None:
        await self._handle.close()  # type: ignore[attr-defined]


def _guarded(rel: Relational, service: str | None) -> Relational:
    if service is None:
        return rel
    mine = owns(service)
    guards = {repo: NotOwnedRepo(service, repo) for repo in REPOS if repo not in mine}
    return replace(rel, **guards)  # type: ignore[arg-type]


async def open_relational(
    url: str,
    timeout_s: float = 5.0,
    pool: tuple[int, int] = (1, 10),
    service: str | None = None,
    sqlite_readers: int | None = None,
) -> Relational:
    """``pool``: the least and most connections of the Postgres pool. ``sqlite_readers``: SQLite's reader
    connections (threads) for reads outside a transaction; None: the adapter's default; 0: inline on its one
    connection.

    ``service``: that service's own store (acm.ownership): in Postgres its schema ``acm_<service>`` (the
    connections' search_path; created if missing and the role may), in SQLite the file the URL names (one per
    service, e.g. ``ingest.db``); only its own tables are migrated there, and the repositories it does not
    own raise acm.ownership.NotOwned. None: every table in one store, the layout before ownership."""
    groups = None if service is None else sorted(owns(service))
    scheme = urlparse(url).scheme
    from acm.adapters.entities_sql import SqlEntityRegistry

    if scheme in ("postgresql", "postgres"):
        from acm.adapters.postgres_store import PG, PostgresStore
        from acm.adapters.working_memory_sql import PgWorkingMemoryRepo

        schema = None if service is None else schema_of(service)
        pg = await PostgresStore.open(
            url, timeout_s=timeout_s, min_size=pool[0], max_size=pool[1], schema=schema, groups=groups
        )
        return await _relational(
            pg, PgWorkingMemoryRepo(pg.executor), SqlEntityRegistry(pg.executor, PG), groups, service
        )
    if scheme == "sqlite":
        from acm.adapters.sqlite_store import DEFAULT_READERS, SQLITE, SqliteStore
        from acm.adapters.working_memory_sql import SqliteWorkingMemoryRepo

        readers = DEFAULT_READERS if sqlite_readers is None else sqlite_readers
        lite = await SqliteStore.open(_sqlite_path(url), timeout_s=timeout_s, groups=groups, readers=readers)
        return await _relational(
            lite, SqliteWorkingMemoryRepo(lite.executor), SqlEntityRegistry(lite.executor, SQLITE), groups, service
        )
    raise ConfigError(f"database url {url!r}: use postgresql://… or sqlite:///path")


async def _relational(
    store: SqlStore,
    working: SqlWorkingMemoryRepo,
    entities: EntityRegistry,
    groups: list[str] | None,
    service: str | None,
) -> Relational:
    """One store's repositories (either dialect), its working-memory tables migrated where it keeps them."""
    if groups is None or "working" in groups:
        await working.migrate()
    rel = Relational(
        store.memories,
        store.jobs,
        store.api_keys,
        store.processed,
        store.audit,
        store.schemas,
        working,
        store,
        entities,
    )
    return _guarded(rel, service)


async def open_vectors(url: str, timeout_s: float = 5.0) -> VectorStore:
    scheme = urlparse(url).scheme
    if scheme in ("http", "https", "qdrant-local"):
        from acm.adapters.qdrant_store import QdrantVectorStore

        return QdrantVectorStore.from_url(url, timeout_s=timeout_s)
    if scheme == "edge":
        from acm.adapters.edge_store import EdgeVectorStore

        path = Path(url.removeprefix("edge://"))
        return EdgeVectorStore(path)
    raise ConfigError(f"vector url {url!r}: use http(s)://qdrant:6333, qdrant-local:///path or edge:///path")


async def open_graph(url: str, timeout_s: float = 5.0) -> GraphStore:
    scheme = urlparse(url).scheme
    if scheme in ("bolt", "neo4j", "bolt+s", "neo4j+s"):
        from acm.adapters.neo4j_graph import Neo4jGraphStore

        parsed = urlparse(url)
        return await Neo4jGraphStore.open(
            url.replace(f"{parsed.username}:{parsed.password}@", "") if parsed.username else url,
            user=parsed.username or "",
            password=parsed.password or "",
            timeout_s=timeout_s,
        )
    if scheme == "sqlite":
        from acm.adapters.sqlite_graph import SqliteGraphStore

        return SqliteGraphStore(_sqlite_path(url), timeout_s=timeout_s)
    raise ConfigError(f"graph url {url!r}: use bolt://host:7687 or sqlite:///path")


async def open_cache(url: str, timeout_s: float = 5.0) -> Cache:
    scheme = urlparse(url).scheme
    if scheme in ("redis", "rediss"):
        from acm.adapters.redis_cache import RedisCache

        return RedisCache.from_url(url, timeout_s=timeout_s)
    if scheme == "memory":
        from acm.adapters.memory_cache import MemoryCache

        return MemoryCache()
    raise ConfigError(f"cache url {url!r}: use redis://host:6379/0 or memory://")


# Partitions of the topics ACM creates (ACM_KAFKA_PARTITIONS): a consumer group spreads a topic's partitions
# over its replicas, so a topic with P partitions keeps at most P replicas busy (docs/operations.md). Topics
# that exist keep their count (add partitions with kafka-topics --alter; keys then move to other partitions).
DEFAULT_KAFKA_PARTITIONS = 6


def kafka_partitions() -> int:
    raw = os.environ.get("ACM_KAFKA_PARTITIONS", str(DEFAULT_KAFKA_PARTITIONS))
    try:
        count = int(raw)
    except ValueError:
        count = 0
    if count < 1:
        raise ConfigError(f"ACM_KAFKA_PARTITIONS={raw!r}: a positive number of partitions")
    return count


def open_bus(url: str, client_id: str, timeout_s: float = 5.0) -> EventBus:
    scheme = urlparse(url).scheme
    if scheme == "kafka":
        from acm.adapters.kafka_bus import KafkaBus
        from acm.adapters.kafka_security import kafka_security, split_userinfo

        # kafka://[user:password@]host:9092[,host2:9092][?namespace=prefix.][&tls=1&ssl_cafile=...]
        # (TLS and SASL parameters: acm.adapters.kafka_security)
        parsed = urlparse(url)
        params = {name: values[0] for name, values in parse_qs(parsed.query).items()}
        user, password, hosts = split_userinfo(parsed.netloc)
        try:
            security = kafka_security(user, password, params)
        except ValueError as exc:
            raise ConfigError(f"bus url {hosts}: {exc}") from None
        return KafkaBus(
            hosts,
            client_id=client_id,
            num_partitions=kafka_partitions(),
            publish_timeout_s=timeout_s,
            namespace=params.get("namespace", ""),
            security=security,
        )
    if scheme == "sqlite":
        from acm.adapters.embedded_bus import EmbeddedBus

        # sqlite:///path/bus.db[?retention_s=N]: how long a record consumed by every group is kept (else
        # ACM_BUS_RETENTION_S, default 0: pruned as soon as it is consumed; docs/privacy.md).
        path, _, query = url.partition("?")
        retention = parse_qs(query).get("retention_s", [os.environ.get("ACM_BUS_RETENTION_S", "0")])[0]
        try:
            retention_s = float(retention)
        except ValueError:
            raise ConfigError(f"bus url {url!r}: retention_s must be a number of seconds") from None
        return EmbeddedBus(_sqlite_path(path), retention_s=max(retention_s, 0.0))
    raise ConfigError(f"bus url {url!r}: use kafka://host:9092 or sqlite:///path (embedded)")
