"""Embedded mode: every service in one process, embedded stores, the same gRPC API on 127.0.0.1.

The services' own register()/build functions are called here exactly as their processes call them;
only the adapters differ (SQLite, Qdrant edge, in-process cache, a durable SQLite log as the bus)."""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType

from opentelemetry import metrics
from pydantic import Field, field_validator

from acm.adapters.data_keys_sql import SqlDataKeyRepo
from acm.adapters.embedders import build_embedder
from acm.auth import create_api_key
from acm.bootstrap import Relational, open_bus, open_cache, open_graph, open_relational, open_vectors
from acm.domain.models import utcnow
from acm.owners import Owners
from acm.ownership import SERVICES
from acm.periodic import Periodic
from acm.ports.bus import EventBus
from acm.ports.compactor import Compactor
from acm.ports.memories import MemoryReader
from acm.ports.retriever import Retriever
from acm.ports.stores import Cache, GraphStore, VectorStore
from acm.read.prefetching import PrefetchingRetriever
from acm.reindex import warn_other_models
from acm.runtime import HealthServer, limit_compute_threads
from acm.schemas import KeptLatest
from acm.sealing import SealingBus, StoreKeyring, embedded_master_keys
from acm.settings import DEFAULT_EMBEDDER, ServiceSettings
from acm.transport import ServerTls
from acm_anticipate.app import Anticipate
from acm_anticipate.app import register as register_anticipate
from acm_anticipate.settings import AnticipateSettings
from acm_architect.app import register as register_architect
from acm_architect.settings import ArchitectSettings
from acm_cli.graph_backfill import backfill_entities
from acm_cli.main import DEV_KEY_FILE, default_data_dir  # the CLI's paths, so both agree
from acm_cli.store_split import (
    adopt_graph_file,
    backfill_marker,
    database_file,
    graph_file,
    split_shared_database,
)
from acm_compact.app import register as register_compact
from acm_compact.settings import CompactSettings
from acm_gateway.app import SERVICE_NAME as GATEWAY_SERVICE
from acm_gateway.app import build_server, build_servicer, refuse_if_in_use
from acm_gateway.http_server import HTTP_API
from acm_gateway.settings import GatewaySettings, parse_origins
from acm_ingest.app import register as register_ingest
from acm_ingest.settings import IngestSettings
from acm_retrieve.app import build_api, build_memories
from acm_retrieve.app import register as register_retrieve

log = logging.getLogger("acm.embedded")

DEV_CLIENT = "local"
LOCK_FILE = "serve.lock"


class DataDirInUse(Exception):
    """Another embedded ACM holds the data folder (its SQLite stores and log take one process at a time)."""


def lock_data_dir(data_dir: Path) -> int:
    """Hold an exclusive lock on <data_dir>/serve.lock (flock, released when the fd closes or the process
    ends, however it ends) and write our pid in it; DataDirInUse when another process holds it."""
    fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise DataDirInUse(f"data folder {data_dir.resolve()} is in use by another ACM (pid {holder})") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def default_results_dir() -> Path | None:
    """results/ of the source checkout acm runs from (where `acm bench` writes its plots), if there is one."""
    data = default_data_dir()  # a checkout's .acm, beside its results/
    results = data.parent / "results"
    return results if data.name == ".acm" and results.is_dir() else None


class EmbeddedSettings(ServiceSettings):
    data_dir: Path = Field(default_factory=default_data_dir)
    listen_addr: str = "127.0.0.1:50051"
    # The HTTP/JSON API (docs/http-api.md); empty: not served. `acm serve` serves it on 127.0.0.1:8080 unless set.
    http_addr: str = ""
    # Browser origins whose pages may call the HTTP API (CORS), comma-separated; empty: none (docs/http-api.md).
    cors_origins: str = ""
    # Benchmark results whose plots (*.png) the operator console shows: the checkout's results/ (None: none).
    results_dir: Path | None = Field(default_factory=default_results_dir)
    # ACM_EMBEDDER (acm.settings.DEFAULT_EMBEDDER); ingest and retrieve must use the same one.
    embedder: str = DEFAULT_EMBEDDER
    vector_backend: str = Field("edge", pattern="^(edge|qdrant-local)$")
    # Optional OpenAI-compatible endpoint (empty: deterministic rules everywhere).
    llm_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    # Fetch consults each session's prefetch pool first (the anticipate service warms it).
    prefetch: bool = True
    # Reader connections per service store: reads outside a transaction run on them in threads, off the event
    # loop (docs/operations.md "Fetch under concurrency"); 0: inline on the store's one connection.
    sqlite_readers: int = Field(4, ge=0, le=64)
    # ACM_REQUIRE_SEALED_TURNS: ingest refuses turns published in clear (acm_ingest.settings, docs/privacy.md).
    require_sealed_turns: bool = False

    @field_validator("cors_origins")
    @classmethod
    def _origins_valid(cls, value: str) -> str:
        return ",".join(parse_origins(value))


@dataclass
class Urls:
    databases: dict[str, str]  # each service's own relational store (acm.ownership)
    vectors: str
    graph: str
    bus: str
    cache: str = "memory://"

    @classmethod
    def under(cls, data_dir: Path, vector_backend: str) -> Urls:
        d = data_dir.resolve()
        return cls(
            databases={name: f"sqlite:///{database_file(d, name)}" for name in SERVICES},
            vectors=f"{vector_backend}://{d / 'vectors'}",
            graph=f"sqlite:///{graph_file(d)}",  # retrieve's, like retrieve.db (acm.ownership.GRAPH_OWNER)
            bus=f"sqlite:///{d / 'bus.db'}",
        )


class EmbeddedAcm:
    """`async with EmbeddedAcm(settings) as acm:` serves the gateway on acm.port until the block ends."""

    def __init__(
        self,
        settings: EmbeddedSettings,
        meter_provider: metrics.MeterProvider | None = None,
        *,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        """``meter_provider``: where the services' own metrics go (None: the global provider; a benchmark passes
        one with an in-memory reader to read the prefetch outcomes)."""
        self.settings = settings
        self.clock = clock  # what memories' TTLs count on (a test advances its own instead of sleeping)
        self.meter_provider = meter_provider
        self.urls = Urls.under(settings.data_dir, settings.vector_backend)
        self.port = 0
        self.http_port = 0  # the HTTP/JSON API's, when settings.http_addr is set
        self.api_key = ""
        self.stores: dict[str, Relational]  # each service's own relational store (acm.ownership)
        self.vectors: VectorStore
        self.graph: GraphStore
        self.cache: Cache
        self.bus: EventBus
        self.retriever: Retriever  # what the gateway's Fetch calls
        self.full_retriever: Retriever  # the full retrieval, without the prefetch pool
        self.anticipate: Anticipate
        self.memories: MemoryReader  # retrieve's Memories API, in-process
        self.compactor: Compactor  # compact's API, in-process
        self.idle_sweep: Periodic  # ingest's periodic TTL expiry for users who stopped writing
        self._server: HealthServer
        self._lock = -1

    def claim(self) -> None:
        """Take the data folder (its lock, for as long as this runs) and check the port is free and may serve
        (plaintext only on loopback), before anything loads: DataDirInUse, PortInUse (acm_gateway.app) or
        TransportRefused (acm.transport) otherwise. `async with` claims when the caller has not."""
        if self._lock >= 0:
            return
        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        self._lock = lock_data_dir(self.settings.data_dir)
        try:
            refuse_if_in_use(self.settings.listen_addr)
            ServerTls.of(self.settings).check(self.settings.listen_addr, [GATEWAY_SERVICE])
            if self.settings.http_addr:
                refuse_if_in_use(self.settings.http_addr)
                ServerTls.of(self.settings).check(self.settings.http_addr, [HTTP_API])
        except BaseException:
            self._release()
            raise

    def _release(self) -> None:
        if self._lock >= 0:
            os.close(self._lock)
            self._lock = -1

    async def __aenter__(self) -> EmbeddedAcm:
        self.claim()
        try:
            return await self._start()
        except BaseException:
            self._release()
            raise

    async def _start(self) -> EmbeddedAcm:
        s, u = self.settings, self.urls
        timeout = s.store_timeout_s
        limit_compute_threads(s.compute_threads)
        embedder = build_embedder(s.embedder, s.compute_threads, s.models_dir, s.models_source)
        await split_shared_database(s.data_dir, timeout)  # a data folder from before: one acm.db
        adopt_graph_file(s.data_dir)  # a data folder from before: graph.db, written by ingest
        self.stores = {
            name: await open_relational(u.databases[name], timeout, service=name, sqlite_readers=s.sqlite_readers)
            for name in SERVICES
        }
        self.vectors = await open_vectors(u.vectors, timeout)
        await self.vectors.ensure(embedder.dim)
        await warn_other_models(self.vectors, embedder.name, log)
        self.graph = await open_graph(u.graph, timeout)
        if backfill_marker(s.data_dir).exists():  # the graph of a data folder from before: ingest's registry
            await backfill_entities(self.graph, self.stores["ingest"].entities)
            backfill_marker(s.data_dir).unlink()
        self.cache = await open_cache(u.cache, timeout)
        # Bodies with a user's data sealed with the gateway's data keys, read in-process (acm.sealing); the master
        # key is kept in the data folder.
        data_keys = StoreKeyring(SqlDataKeyRepo.of(self.stores["gateway"]), embedded_master_keys(s.data_dir))
        self.bus = SealingBus(open_bus(u.bus, client_id="acm-embedded", timeout_s=timeout), data_keys)
        # The gateway's keys and the architect's schemas, read in-process from their owners' stores; each agent's
        # latest schema kept, forgotten on the architect's writes through the same object (acm.schemas.KeptLatest).
        self.stores["architect"].schemas = KeptLatest(self.stores["architect"].schemas)
        owners = Owners.in_process(self.stores["gateway"].api_keys, self.stores["architect"].schemas)

        ingest_settings = IngestSettings(
            database_url=u.databases["ingest"],
            bus_url=u.bus,
            cache_url=u.cache,
            embedder=s.embedder,
            llm_url=s.llm_url,
            llm_model=s.llm_model,
            llm_api_key=s.llm_api_key,
            require_sealed_turns=s.require_sealed_turns,
        )
        self.idle_sweep = register_ingest(
            self.bus, self.stores["ingest"], self.cache, embedder, ingest_settings, owners, now=self.clock
        )
        register_retrieve(
            self.bus, self.stores["retrieve"], self.vectors, self.graph, embedder, owners.keys, self.cache
        )
        self.full_retriever = build_api(self.stores["retrieve"], self.vectors, self.graph, embedder, owners.schemas)
        # Retrieve's Memories API in-process: the Memory API's reads and every session read (gateway, compact,
        # anticipate), as the other services reach it over gRPC in distributed mode.
        self.memories = build_memories(self.stores["retrieve"], self.graph)
        architect = register_architect(
            self.bus,
            self.stores["architect"],
            ArchitectSettings(database_url=u.databases["architect"], bus_url=u.bus),
            owners.keys,
            embedder,
        )
        self.anticipate = register_anticipate(
            self.bus,
            self.stores["anticipate"],
            self.cache,
            self.full_retriever,
            AnticipateSettings(
                database_url=u.databases["anticipate"], bus_url=u.bus, cache_url=u.cache, retrieve_addr="in-process"
            ),
            self.memories,
            owners,
        )
        compact_settings = CompactSettings(
            database_url=u.databases["compact"], bus_url=u.bus, cache_url=u.cache, retrieve_addr="in-process"
        )
        self.compactor = register_compact(
            self.bus, self.stores["compact"], self.cache, compact_settings, self.memories, owners
        )
        gateway_settings = GatewaySettings(
            database_url=u.databases["gateway"],
            bus_url=u.bus,
            retrieve_addr="in-process",
            architect_addr="in-process",
            compact_addr="in-process",
            cache_url=u.cache,
            listen_addr=s.listen_addr,
        )
        self.retriever = (
            PrefetchingRetriever(self.full_retriever, self.cache, meter_provider=self.meter_provider)
            if s.prefetch
            else self.full_retriever
        )
        servicer = build_servicer(
            self.stores["gateway"],
            self.bus,
            self.retriever,
            self.cache,
            gateway_settings,
            owners.schemas,
            architect,
            self.compactor,
            self.memories,
        )
        self._server = server = build_server(
            servicer,
            s.listen_addr,
            ServerTls.of(s),
            s.http_addr,
            cors_origins=parse_origins(s.cors_origins),
            results_dir=s.results_dir,
        )
        self.api_key = await self._dev_key()
        await self.bus.start()
        await self.idle_sweep.start()
        await self._server.start()
        self.port = self._server.port
        self.http_port = server.http.port if server.http is not None else 0
        return self

    async def _dev_key(self) -> str:
        """A key for the local client, made once and kept (owner-only) in the data dir."""
        path = self.settings.data_dir / DEV_KEY_FILE
        if path.exists():
            return path.read_text().strip()
        _, secret = await create_api_key(self.stores["gateway"].api_keys, DEV_CLIENT, "embedded dev key")
        path.write_text(secret + "\n")
        os.chmod(path, 0o600)
        return secret

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._server.stop()
        await self.idle_sweep.stop()
        await self.bus.stop()
        await self.cache.close()
        await self.graph.close()
        await self.vectors.close()
        for rel in self.stores.values():
            await rel.close()
        self._release()
