"""A distributed ACM stack for benchmarks: every service its own OS process against the real servers.

The same approach as tests/e2e/test_distributed.py (copied, not imported: benchmarks do not depend on the
test tree): a fresh Postgres database, a Kafka topic namespace of its own (`?namespace=prefix.`), a vector
store in a scratch folder, Neo4j and Redis shared. No Qdrant server can run here (../shared/INFRA-FACTS.md);
the vector store stands in for it: by default qdrant-edge, Qdrant's own Rust engine in the retrieve process
(the only service that opens the vector store), or the qdrant-client adapter in local mode, whose pure-Python
search is meant for tests, not for speed. `Stack.stop()` always leaves nothing running and drops the
database, whatever state `start()` got to.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc
import psycopg
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from grpc_health.v1 import health_pb2, health_pb2_grpc

from acm import topics
from acm.auth import create_api_key
from acm.bootstrap import open_cache, open_graph, open_relational
from acm.domain.scope import ForgetLevel, Scope
from acm.sealing import new_master_key

ROOT = Path(__file__).resolve().parents[2]
INFRA_DIR = Path(os.environ.get("ACM_INFRA_DIR", "/var/tmp/acm-infra"))
INFRA_VARS = {
    "kafka": "ACM_TEST_KAFKA_BOOTSTRAP",
    "postgres": "ACM_TEST_POSTGRES_DSN",
    "neo4j": "ACM_TEST_NEO4J_URI",
    "redis": "ACM_TEST_REDIS_URL",
}
# Besides ingest (started `replicas` times), in start order; retrieve before the gateway that calls it.
OTHER_SERVICES = ("retrieve", "gateway", "architect", "anticipate", "compact")
# Ingest logs each turn at DEBUG only; raising just that logger (before the service configures logging
# at INFO) gives one line per turn to count per replica without DEBUG noise from every library.
INGEST_MARKER = "ingested turn"
_INGEST_CMD = (
    "import logging, runpy; logging.getLogger('acm.ingest').setLevel(logging.DEBUG); "
    "runpy.run_module('acm_ingest', run_name='__main__')"
)


# The consumer groups whose lag says how far behind each part of the pipeline is.
LAGGED = {
    "ingest": topics.TURNS,  # turns not yet made into memories
    "retrieve": topics.MEMORIES,  # memories not yet in the vector index
    "anticipate": topics.MEMORIES_INDEXED,  # memories retrieve applied, not yet warmed into a pool
    "architect": topics.TURNS,
}


@dataclass(frozen=True)
class Infra:
    kafka: str
    postgres: str
    neo4j: str
    redis: str


class ServiceDied(RuntimeError):
    """A service process exited while the stack was meant to be running."""


def infra_addresses() -> Infra:
    """Server addresses from ACM_TEST_* variables, else from scripts/infra/up.sh (idempotent: servers
    already up are left alone; it starts the missing ones and writes their addresses)."""
    given = {name: os.environ.get(var, "") for name, var in INFRA_VARS.items()}
    if not all(given.values()):
        subprocess.run(["bash", str(ROOT / "scripts/infra/up.sh")], check=True, stdout=subprocess.DEVNULL)
        lines = (INFRA_DIR / "env").read_text().splitlines()
        written = dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
        given = {name: given[name] or written[var] for name, var in INFRA_VARS.items()}
    return Infra(**given)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def serving(addr: str) -> bool:
    async with grpc.aio.insecure_channel(addr) as channel:
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=1)
        except grpc.aio.AioRpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


@dataclass
class Stack:
    """One configuration: its own database, topic namespace, Qdrant folder, ports and processes."""

    infra: Infra
    label: str
    ingest_replicas: int = 1
    log_level: str = "INFO"
    extra_env: dict[str, str] = field(default_factory=dict)  # ACM_* settings for every service
    vector_store: str = "edge"  # "edge" (qdrant-edge) or "qdrant-local" (qdrant-client local mode)
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    work: Path = field(init=False)
    database: str = field(init=False)
    dsn: str = field(init=False)
    namespace: str = field(init=False)
    client_id: str = ""  # default: bench-<tag>, this stack's alone (graph and cache data are per client)
    api_key: str = ""
    _db_created: bool = False

    def __post_init__(self) -> None:
        self.work = Path(tempfile.gettempdir()) / f"acm-bench-{self.label}-{self.tag}"
        self.database = f"acm_bench_{self.tag}"
        base, _, _ = self.infra.postgres.rpartition("/")
        self.dsn = f"{base}/{self.database}"
        self.namespace = f"bench-{self.label}-{self.tag}."  # this configuration's topics and groups only
        self.client_id = self.client_id or f"bench-{self.tag}"

    @property
    def names(self) -> list[str]:
        return [*(f"ingest-{i + 1}" for i in range(self.ingest_replicas)), *OTHER_SERVICES]

    @property
    def gateway_addr(self) -> str:
        return f"127.0.0.1:{self.ports['gateway']}"

    def log_path(self, name: str) -> Path:
        return self.work / f"{name}.log"

    def log_tail(self, name: str, chars: int = 3000) -> str:
        """The end of a service's log, without ingest's one line per turn (what matters is around them)."""
        try:
            lines = self.log_path(name).read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(line for line in lines if INGEST_MARKER not in line)[-chars:]

    async def start(self, timeout_s: float = 120.0) -> None:
        """Create the database, launch every process, wait until all report SERVING, make an API key."""
        self._launch()
        deadline = time.monotonic() + timeout_s
        while True:
            self.check_alive()
            states = await asyncio.gather(*(serving(f"127.0.0.1:{self.ports[n]}") for n in self.names))
            if all(states):
                break
            if time.monotonic() > deadline:
                waiting = [n for n, ok in zip(self.names, states, strict=True) if not ok]
                raise TimeoutError(f"{self.label}: {waiting} not healthy after {timeout_s:.0f}s")
            await asyncio.sleep(0.5)
        rel = await open_relational(self.dsn, service="gateway")  # the keys are the gateway's (its schema)
        try:
            _, self.api_key = await create_api_key(rel.api_keys, self.client_id, "bench")
        finally:
            await rel.close()

    def _launch(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        with psycopg.connect(self.infra.postgres, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.database}"')
        self._db_created = True
        self.ports = {name: free_port() for name in self.names}
        common = {
            "ACM_DATABASE_URL": self.dsn,
            "ACM_BUS_URL": f"kafka://{self.infra.kafka}?namespace={self.namespace}",
            "ACM_GRAPH_URL": self.infra.neo4j,
            "ACM_CACHE_URL": self.infra.redis,
            "ACM_VECTOR_URL": f"{self.vector_store}://{self.work / 'vectors'}",
            "ACM_RETRIEVE_ADDR": f"127.0.0.1:{self.ports['retrieve']}",
            "ACM_ARCHITECT_ADDR": f"127.0.0.1:{self.ports['architect']}",
            "ACM_GATEWAY_ADDR": self.gateway_addr,  # the consumers verify envelope signatures with its keys
            "ACM_COMPACT_ADDR": f"127.0.0.1:{self.ports['compact']}",
            "ACM_SERVICE_TOKEN_SECRET": secrets.token_hex(32),  # signs gateway/anticipate → retrieve/architect
            "ACM_MASTER_KEY": new_master_key(),  # the gateway's: wraps the bus's data keys
            "ACM_LOG_LEVEL": self.log_level,
            **self.extra_env,
        }
        for name in self.names:
            service = name.split("-")[0]
            addr_var = (
                "ACM_LISTEN_ADDR" if service in ("gateway", "retrieve", "architect", "compact") else "ACM_HEALTH_ADDR"
            )
            env = {**os.environ, **common, addr_var: f"127.0.0.1:{self.ports[name]}"}
            cmd = [sys.executable, "-c", _INGEST_CMD] if service == "ingest" else [sys.executable, "-m", f"acm_{name}"]
            with self.log_path(name).open("wb") as log:
                # A session of its own: Ctrl-C reaches only the benchmark, which then stops the services in
                # order (instead of every process racing to shut down at once).
                self.procs[name] = subprocess.Popen(
                    cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                )

    async def _clear_shared_servers(self) -> list[str]:
        """What this stack left on the servers it shares with others: its topics (a cluster would collect
        ~10 per run), its client's graph and its cache keys. Returns what could not be removed."""
        problems = []
        everything = Scope(self.client_id, "all", "all")  # a client-level erase reads only the client id
        try:
            await delete_topics(self.infra.kafka, self.namespace)
        except Exception as exc:
            problems.append(f"topics {self.namespace}*: {exc!r}")
        try:
            graph = await open_graph(self.infra.neo4j)
            try:
                await graph.forget(everything, ForgetLevel.CLIENT)
            finally:
                await graph.close()
        except Exception as exc:
            problems.append(f"graph of {self.client_id}: {exc!r}")
        try:
            cache = await open_cache(self.infra.redis)
            try:
                await cache.clear(everything, ForgetLevel.CLIENT)
            finally:
                await cache.close()
        except Exception as exc:
            problems.append(f"cache of {self.client_id}: {exc!r}")
        return problems

    def check_alive(self) -> None:
        """Raise ServiceDied (with the end of its log) if any service process has exited."""
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise ServiceDied(
                    f"{self.label}: {name} exited with code {proc.returncode}; end of {self.log_path(name)}:\n"
                    + self.log_tail(name)
                )

    def ingest_counts(self) -> dict[str, int]:
        """Turns each ingest replica has handled so far, from its log."""
        counts = {}
        for name in self.names:
            if name.startswith("ingest-"):
                try:
                    text = self.log_path(name).read_text(errors="replace")
                except OSError:
                    text = ""
                counts[name] = text.count(INGEST_MARKER)
        return counts

    def stop(self, keep_work: bool = False, grace_s: float = 20.0) -> None:
        """SIGTERM every process (they finish the record in hand and commit), kill what is still running
        after `grace_s`, then drop the database. Safe to call more than once, and after a failed start."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if self._db_created:
            with psycopg.connect(self.infra.postgres, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            self._db_created = False
            # Called from sync code or a worker thread, never from a running event loop.
            for problem in asyncio.run(self._clear_shared_servers()):
                print(f"warning: {self.label} cleanup: {problem}", file=sys.stderr, flush=True)
        if not keep_work:
            shutil.rmtree(self.work, ignore_errors=True)


async def delete_topics(bootstrap: str, prefix: str, timeout_s: float = 15.0) -> list[str]:
    """Delete every topic whose name starts with `prefix` (a stack's namespace); returns their names."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="acm-bench-cleanup")
    async with asyncio.timeout(timeout_s):
        await admin.start()
        try:
            names = [t for t in await admin.list_topics() if t.startswith(prefix)]
            if names:
                await admin.delete_topics(names, timeout_ms=int(timeout_s * 1000))
            return names
        finally:
            await admin.close()


class KafkaLag:
    """Records each consumer group has yet to handle (end offset − committed offset, over both partitions),
    read with an admin client and a group-less consumer of the stack's own namespace."""

    def __init__(self, bootstrap: str, namespace: str, partitions: int = 2) -> None:
        self._bootstrap = bootstrap
        self._namespace = namespace
        self._partitions = partitions
        self._admin: Any = None
        self._consumer: Any = None

    async def __aenter__(self) -> KafkaLag:
        self._admin = AIOKafkaAdminClient(bootstrap_servers=self._bootstrap, client_id="acm-bench-lag")
        self._consumer = AIOKafkaConsumer(bootstrap_servers=self._bootstrap, client_id="acm-bench-lag")
        await self._admin.start()
        await self._consumer.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._consumer.stop()
        await self._admin.close()

    async def measure(self) -> dict[str, int]:
        """{group: lag} for the groups in LAGGED."""
        wanted = {
            group: [TopicPartition(self._namespace + topic, p) for p in range(self._partitions)]
            for group, topic in LAGGED.items()
        }
        ends = await self._consumer.end_offsets([tp for tps in wanted.values() for tp in tps])
        lags = {}
        for group, tps in wanted.items():
            committed = await self._admin.list_consumer_group_offsets(self._namespace + group, partitions=tps)
            # No commit yet on a partition: the group starts from its beginning (auto_offset_reset=earliest).
            done = {tp: (c.offset if c is not None and c.offset >= 0 else 0) for tp, c in committed.items()}
            # Ends are read first: a record committed in between would read as -1, hence the floor.
            lags[group] = sum(max(0, ends[tp] - done.get(tp, 0)) for tp in tps)
        return lags
