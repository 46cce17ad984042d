"""The ACM that `acm bench fleet` loads, each service in a process of its own, and how it is observed from
outside: CPU and RSS from /proc, consumer lag from the bus itself (Kafka's committed offsets, or the
embedded log's file), never from counters inside the product.

- embedded: `acm serve` in a child process (every service in it), on a fresh data folder;
- distributed: gateway, retrieve, architect, anticipate, compact and ``replicas`` ingest processes on the
  real Kafka, Postgres, Neo4j and Redis, with a Kafka namespace and a Postgres database of this run only.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from acm_benchmarks.fleet_stats import ProcSample

START_TIMEOUT_S = 300.0  # models load on a loaded machine
# The consumer groups whose lag says how far behind each part of the pipeline is (group → topic), the same
# in both modes so their figures compare.
LAGGED = {
    "ingest": "acm.turns.v1",  # turns not yet made into memories
    "architect": "acm.turns.v1",
    "retrieve": "acm.memories.v1",  # memories not yet in the vector index
    "anticipate": "acm.memories.indexed.v1",  # memories retrieve applied, not yet warmed into a pool
}
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def proc_sample(pid: int, t: float) -> ProcSample | None:
    """CPU seconds so far (user + system, all threads) and resident memory of ``pid``; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        statm = Path(f"/proc/{pid}/statm").read_text().split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # the name in parentheses may hold spaces
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5), counted from 1
    return ProcSample(t, (utime + stime) / _CLK_TCK, int(statm[1]) * _PAGE)


def free_ports(n: int) -> list[int]:
    """``n`` distinct free ports (the sockets stay bound until all are chosen, so none is handed out twice)."""
    with contextlib.ExitStack() as held:
        socks = [held.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]


class LagReader(Protocol):
    async def lag(self) -> dict[str, int]:
        """Records published but not yet done, per consumer group (summed over its topics)."""
        ...

    async def close(self) -> None: ...


@dataclass
class Stack:
    """A running ACM: where its gateway listens, a key for it, its processes (name → pid) and its lag."""

    addr: str
    api_key: str
    pids: dict[str, int]
    lag: LagReader
    logs: Path
    client_id: str
    kafka: str = ""  # bootstrap servers (distributed)
    namespace: str = ""
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def dead(self) -> list[str]:
        alive = {p.pid for p in self.procs if p.poll() is None}
        return [name for name, pid in self.pids.items() if pid not in alive]


def _start(args: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("wb") as log:
        return subprocess.Popen([sys.executable, *args], env=env, stdout=log, stderr=subprocess.STDOUT)


def stop(procs: list[subprocess.Popen[bytes]], timeout_s: float = 20.0) -> None:
    """SIGTERM each (graceful shutdown), then SIGKILL what is still running after ``timeout_s``."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _tail(path: Path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else ""


# ---------------------------------------------------------------------------------------------------
# Embedded


class EmbeddedLag:
    """Backlog of the embedded log, read from its SQLite file (read-only, as another process may): per group
    of LAGGED, the records of its topic after the seq it committed (all of them before its first commit).
    Records are pruned once every group is past them, so what is left to count stays small."""

    def __init__(self, bus_db: Path) -> None:
        self._path = bus_db
        self._conn: sqlite3.Connection | None = None

    async def lag(self) -> dict[str, int]:
        if self._conn is None:
            if not self._path.exists():
                return {}
            self._conn = sqlite3.connect(f"file:{self._path}?mode=ro", uri=True, check_same_thread=False)
            self._conn.execute("PRAGMA busy_timeout = 1000")
        out: dict[str, int] = {}
        for group, topic in LAGGED.items():
            row = self._conn.execute(
                "SELECT COUNT(*) FROM records WHERE topic = ? AND seq > "
                "COALESCE((SELECT seq FROM offsets WHERE consumer_group = ? AND topic = ?), 0)",
                (topic, group, topic),
            ).fetchone()
            out[group] = int(row[0])
        return out

    async def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


_LISTENING = re.compile(r"gateway acm\.v1\.Gateway on (\S+),")
_KEY = re.compile(r"API key for client '[^']+': (\S+)")


async def start_embedded(work: Path, extra_env: dict[str, str] | None = None) -> Stack:
    """`acm serve` on a fresh data folder under ``work`` and a free port; returns once its banner (address and
    dev key) is printed. ``extra_env``: settings (or PYTHONPATH) for this process only."""
    data = work / "data"
    log_path = work / "embedded.log"
    env = {**os.environ, "ACM_LOG_LEVEL": os.environ.get("ACM_LOG_LEVEL", "WARNING"), **(extra_env or {})}
    proc = _start(["-m", "acm_cli", "serve", "--data-dir", str(data), "--listen", "127.0.0.1:0"], env, log_path)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"acm serve exited ({proc.returncode}):\n{_tail(log_path)}")
        text = _tail(log_path, 100_000)
        addr, key = _LISTENING.search(text), _KEY.search(text)
        if addr and key:
            return Stack(
                addr=addr.group(1),
                api_key=key.group(1),
                pids={"embedded": proc.pid},
                lag=EmbeddedLag(data / "bus.db"),
                logs=work,
                client_id="local",
                procs=[proc],
            )
        await asyncio.sleep(0.5)
    stop([proc])
    raise RuntimeError(f"acm serve did not listen within {START_TIMEOUT_S:.0f} s:\n{_tail(log_path)}")


# ---------------------------------------------------------------------------------------------------
# Distributed

SERVICES = ("gateway", "retrieve", "architect", "anticipate", "compact")
LISTENERS = ("gateway", "retrieve", "architect", "compact")  # gRPC servers; the others only serve health


@dataclass(frozen=True)
class Servers:
    kafka: str
    postgres: str
    neo4j: str
    redis: str

    @classmethod
    def from_env(cls) -> Servers:
        """The infra env's addresses (`set -a; source /var/tmp/acm-infra/env; set +a`)."""
        names = {
            "kafka": "ACM_TEST_KAFKA_BOOTSTRAP",
            "postgres": "ACM_TEST_POSTGRES_DSN",
            "neo4j": "ACM_TEST_NEO4J_URI",
            "redis": "ACM_TEST_REDIS_URL",
        }
        missing = [v for v in names.values() if not os.environ.get(v)]
        if missing:
            raise SystemExit(
                f"distributed mode needs the servers' addresses: {', '.join(missing)} unset "
                "(`set -a; source /var/tmp/acm-infra/env; set +a`)"
            )
        return cls(**{k: os.environ[v] for k, v in names.items()})


class KafkaLag:
    """Per group of LAGGED in this run's namespace: the log-end offsets of its topic's partitions minus what
    the group committed (a partition without a commit counts from 0: the group starts at the beginning)."""

    def __init__(self, bootstrap: str, namespace: str) -> None:
        self._bootstrap = bootstrap
        self._namespace = namespace
        self._admin: Any = None
        self._consumer: Any = None

    async def _open(self) -> None:
        from aiokafka import AIOKafkaConsumer
        from aiokafka.admin import AIOKafkaAdminClient

        self._admin = AIOKafkaAdminClient(bootstrap_servers=self._bootstrap, client_id="acm-bench-fleet-lag")
        await self._admin.start()
        self._consumer = AIOKafkaConsumer(bootstrap_servers=self._bootstrap, client_id="acm-bench-fleet-lag")
        await self._consumer.start()

    async def lag(self) -> dict[str, int]:
        from aiokafka import TopicPartition

        if self._admin is None:
            await self._open()
        topics = {self._namespace + t for t in LAGGED.values()}
        # Asked each time: the services create the topics when they first publish.
        described = await self._admin.describe_topics(sorted(topics))
        tps: dict[str, list[Any]] = {t: [] for t in topics}
        for d in described:
            if d.get("error_code", 0) == 0 and d["topic"] in tps:
                tps[d["topic"]] = [TopicPartition(d["topic"], p["partition"]) for p in d["partitions"]]
        # Ends are read before the commits: a record committed in between cannot make the lag negative.
        ends = await self._consumer.end_offsets([tp for group in tps.values() for tp in group])
        out: dict[str, int] = {}
        for group, topic in LAGGED.items():
            wanted = tps[self._namespace + topic]
            committed = await self._admin.list_consumer_group_offsets(self._namespace + group, partitions=wanted)
            done = {tp: (c.offset if c is not None and c.offset >= 0 else 0) for tp, c in committed.items()}
            out[group] = sum(max(0, ends[tp] - done.get(tp, 0)) for tp in wanted)
        return out

    async def close(self) -> None:
        if self._consumer is not None:
            await self._consumer.stop()
        if self._admin is not None:
            await self._admin.close()


async def _serving(addr: str) -> bool:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    async with grpc.aio.insecure_channel(addr) as channel:
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=1)
        except grpc.aio.AioRpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def create_database(dsn: str) -> str:
    """A Postgres database of this run's own (the services migrate it); its URL."""
    import psycopg

    name = f"acm_fleet_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{dsn.rpartition('/')[0]}/{name}"


def drop_database(url: str) -> None:
    import psycopg

    base, _, name = url.rpartition("/")
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def start_distributed(work: Path, servers: Servers, replicas: int, database: str) -> Stack:
    """Every service a process of its own (``replicas`` ingest processes), on ``database``; returns once all
    report SERVING, with an admin key of a fresh client."""
    from acm.auth import create_api_key
    from acm.bootstrap import open_relational
    from acm.sealing import new_master_key

    names = [*SERVICES, *(f"ingest-{i}" for i in range(replicas))]
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    namespace = f"fleet-{uuid.uuid4().hex[:8]}."  # this run's topics and groups only
    common = {
        "ACM_DATABASE_URL": database,
        "ACM_BUS_URL": f"kafka://{servers.kafka}?namespace={namespace}",
        "ACM_GRAPH_URL": servers.neo4j,
        "ACM_CACHE_URL": servers.redis,
        # qdrant-edge (Qdrant's engine in the retrieve process) stands in for a Qdrant server, none runs here.
        "ACM_VECTOR_URL": f"edge://{work / 'vectors'}",
        "ACM_RETRIEVE_ADDR": f"127.0.0.1:{ports['retrieve']}",
        "ACM_ARCHITECT_ADDR": f"127.0.0.1:{ports['architect']}",
        "ACM_GATEWAY_ADDR": f"127.0.0.1:{ports['gateway']}",  # the consumers verify signatures with its keys
        "ACM_COMPACT_ADDR": f"127.0.0.1:{ports['compact']}",
        "ACM_SERVICE_TOKEN_SECRET": f"fleet-{uuid.uuid4().hex}",  # signs gateway/anticipate → retrieve/architect
        "ACM_MASTER_KEY": new_master_key(),  # the gateway's: wraps the bus's data keys (it refuses to start without)
        "ACM_LOG_LEVEL": os.environ.get("ACM_LOG_LEVEL", "WARNING"),
    }
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name in names:
            module = "acm_ingest" if name.startswith("ingest") else f"acm_{name}"
            addr_var = "ACM_LISTEN_ADDR" if name in LISTENERS else "ACM_HEALTH_ADDR"
            env = {**os.environ, **common, addr_var: f"127.0.0.1:{ports[name]}"}
            procs[name] = _start(["-m", module], env, work / f"{name}.log")
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            dead = [n for n, p in procs.items() if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{dead} exited:\n{_tail(work / f'{dead[0]}.log')}")
            if all([await _serving(f"127.0.0.1:{ports[n]}") for n in names]):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"services not SERVING within {START_TIMEOUT_S:.0f} s (logs in {work})")
            await asyncio.sleep(0.5)
        client_id = f"fleet-{uuid.uuid4().hex[:6]}"
        rel = await open_relational(database, service="gateway")  # the keys are the gateway's (its schema)
        try:
            _, secret = await create_api_key(rel.api_keys, client_id, "acm bench fleet")
        finally:
            await rel.close()
    except BaseException:
        stop(list(procs.values()))
        with contextlib.suppress(Exception):  # best effort: the start's own error is the one to see
            await delete_topics(servers.kafka, namespace)
        raise
    return Stack(
        addr=f"127.0.0.1:{ports['gateway']}",
        api_key=secret,
        pids={n: p.pid for n, p in procs.items()},
        lag=KafkaLag(servers.kafka, namespace),
        logs=work,
        client_id=client_id,
        kafka=servers.kafka,
        namespace=namespace,
        procs=list(procs.values()),
    )


async def delete_topics(bootstrap: str, namespace: str) -> None:
    """Delete the topics of a run's namespace (the services create them as they start)."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="acm-bench-fleet-cleanup")
    await admin.start()
    try:
        names = [t for t in await admin.list_topics() if t.startswith(namespace)]
        if names:
            await admin.delete_topics(names)
    finally:
        await admin.close()


async def clear_shared(servers: Servers, stack: Stack) -> list[str]:
    """Remove what a distributed run left on the servers it shares with others: its topics, its client's
    graph and cache keys (its database is dropped apart). Returns what could not be removed."""
    from acm.bootstrap import open_cache, open_graph
    from acm.domain.scope import ForgetLevel, Scope

    everything = Scope(stack.client_id, "all", "all")  # a client-level erase reads only the client id
    problems: list[str] = []
    try:
        await delete_topics(servers.kafka, stack.namespace)
    except Exception as exc:
        problems.append(f"topics {stack.namespace}*: {exc!r}")
    try:
        graph = await open_graph(servers.neo4j)
        try:
            await graph.forget(everything, ForgetLevel.CLIENT)
        finally:
            await graph.close()
        cache = await open_cache(servers.redis)
        try:
            await cache.clear(everything, ForgetLevel.CLIENT)
        finally:
            await cache.close()
    except Exception as exc:
        problems.append(f"graph or cache of {stack.client_id}: {exc!r}")
    return problems
