"""`acm bench scale`: Fetch latency and ingest cost as one client grows to 10k, 100k and 1M memories.

    set -a; source /var/tmp/acm-infra/env; set +a
    nice -n 10 acm bench scale --json results/scale.json [--sizes 10000,100000,1000000] [--modes distributed,embedded]

For each mode a fresh set of stores: distributed = Postgres (a database of the run's own, tsvector + GIN),
Neo4j (a client id of the run's own, erased afterwards), Redis, Kafka (topics of the run's own namespace);
embedded = SQLite + FTS5, SQLite graph, in-process cache, SQLite log. The vector store is qdrant-edge (Qdrant's
engine in-process) in both: no Qdrant server runs on this machine, and qdrant-client's local mode is a
brute-force scan that does not stand for a server at 1M points.

The generated client (acm_benchmarks.scale_data) is bulk-loaded in chunks, sizes cumulative: memories through
MemoryRepo.upsert, vectors through VectorStore.upsert, entities and relations through the GraphStore's batch
methods (all the real adapters' batch paths); the memory→entity links go in as batched writes of the same
nodes, edges and rows as GraphStore.link_mentions, which takes one memory per call (1M round trips). After each
load Postgres is ANALYZEd, as autovacuum would after that many inserts.

At each size: Fetch through retrieve's real use case (acm_retrieve.app.build_api over these stores), queries
drawn from the data; then a sample of signed turns through ingest's real handler (acm_ingest.app.register),
its MemoriesWritten events written to the vector store by retrieve's handler, as the two services do.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import shutil
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
MODES = ("distributed", "embedded")
CHUNK = 5_000
WARM_UP = 20  # Fetches first, not counted: pools open, first queries plan, caches fill
INGEST_WARM_UP = 3  # turns first, not counted: topics are created, the first publishes wait for leaders
TARGET_RATIO = 2.0  # Fetch p95 at the largest size ≤ 2× its value at the smallest

STORES = {
    "distributed": "Postgres 15 FTS (tsvector + GIN), Neo4j 5 graph, Redis, Kafka; vectors: qdrant-edge in-process "
    "(no Qdrant server on this machine)",
    "embedded": "SQLite FTS5, SQLite graph, in-process cache, SQLite log; vectors: qdrant-edge in-process",
}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "scale",
        help="Fetch p50/p95 and ingest cost at 10k, 100k and 1M memories of one client",
        description="Fetch latency and ingest cost as one client grows (generated data, bulk-loaded through the "
        "adapters' batch paths), in distributed mode (the test servers: ACM_TEST_POSTGRES_DSN, ACM_TEST_NEO4J_URI, "
        "ACM_TEST_REDIS_URL, ACM_TEST_KAFKA_BOOTSTRAP) and embedded mode. Run big sizes with `nice`.",
    )
    p.add_argument(
        "--sizes",
        type=_sizes,
        default=DEFAULT_SIZES,
        help="memories of the client at each measurement, ascending, comma-separated (10000,100000,1000000)",
    )
    p.add_argument("--modes", type=_modes, default=MODES, help="distributed,embedded (both)")
    p.add_argument("--queries", type=int, default=200, help="Fetches measured at each size (200)")
    p.add_argument("--ingest-turns", type=int, default=20, help="turns ingested at each size (20)")
    p.add_argument("--budget", type=int, default=1000, help="token budget of each Fetch (1000)")
    p.add_argument("--seed", type=int, default=20, help="seed of the generated client and queries (20)")
    p.add_argument(
        "--optimize-vectors",
        action="store_true",
        help="after the largest size, build the vector shard's HNSW graph and measure again",
    )
    p.add_argument("--json", dest="json_out", type=Path, help="write the result here")
    p.add_argument("--plot", dest="plot_out", type=Path, help="plot (default: the --json path with .png)")
    p.set_defaults(run=run)


def _sizes(raw: str) -> tuple[int, ...]:
    sizes = tuple(int(s) for s in raw.split(",") if s.strip())
    if not sizes or any(s <= 0 for s in sizes) or list(sizes) != sorted(set(sizes)):
        raise argparse.ArgumentTypeError(f"sizes must be positive and ascending (got {raw!r})")
    return sizes


def _modes(raw: str) -> tuple[str, ...]:
    modes = tuple(m.strip() for m in raw.split(",") if m.strip())
    unknown = [m for m in modes if m not in MODES]
    if not modes or unknown:
        raise argparse.ArgumentTypeError(f"modes: {', '.join(MODES)} (got {raw!r})")
    return modes


async def run(args: argparse.Namespace) -> None:
    from rich.console import Console

    from acm.adapters.embedders import build_embedder
    from acm.adapters.tokenizer import TiktokenCounter
    from acm.settings import DEFAULT_EMBEDDER
    from acm_benchmarks.scale_data import Corpus

    console = Console()

    def say(line: str) -> None:
        print(line, flush=True)  # progress as it happens, also when the output goes to a file

    embedder = build_embedder(os.environ.get("ACM_EMBEDDER", DEFAULT_EMBEDDER))
    started = time.perf_counter()
    corpus = Corpus("-", args.sizes[-1], args.seed, _cached(embedder), TiktokenCounter().count)
    say(f"{corpus.embedded} distinct texts embedded with {embedder.name} in {time.perf_counter() - started:.0f} s")
    result: dict[str, Any] = {}

    def save(mode: str, so_far: dict[str, Any]) -> None:
        """Written after each size too: a long run stopped midway keeps what it measured."""
        result[mode] = so_far
        if args.json_out:
            args.json_out.parent.mkdir(parents=True, exist_ok=True)
            args.json_out.write_text(json.dumps(result, indent=2) + "\n")

    for mode in args.modes:
        save(
            mode,
            await measure(
                mode,
                corpus,
                embedder,
                args.sizes,
                args.queries,
                args.ingest_turns,
                args.budget,
                say,
                args.optimize_vectors,
                functools.partial(save, mode),
            ),
        )
    print_table(console, result)
    if args.json_out:
        console.print(f"wrote {args.json_out}")
    plot_out = args.plot_out or (args.json_out.with_suffix(".png") if args.json_out else None)
    if plot_out and plot(result, plot_out):
        console.print(f"wrote {plot_out}")


def _cached(embedder: Any) -> Callable[[Sequence[str]], list[list[float]]]:
    """The embedder's vectors of these texts, kept in a file of the temporary folder by model and texts: the
    same corpus is embedded once (a few minutes on 2 cores), not by every run."""
    import hashlib

    import numpy as np

    def embed(texts: Sequence[str]) -> list[list[float]]:
        digest = hashlib.sha256("\x00".join([embedder.name, *texts]).encode()).hexdigest()[:24]
        path = Path(tempfile.gettempdir()) / f"acm-bench-scale-{digest}.npy"
        if path.exists():
            return np.load(path).tolist()  # type: ignore[no-any-return]
        vectors = embedder.embed(texts)
        np.save(path, np.asarray(vectors, dtype=np.float32))
        return vectors  # type: ignore[no-any-return]

    return embed


@dataclass
class Stack:
    """One mode's stores, how to write mentions in bulk, and how to leave nothing behind."""

    rel: Any
    vectors: Any
    graph: Any
    cache: Any
    bus: Any
    database: str
    link_mentions: Callable[[list[tuple[Any, list[str]]]], Awaitable[None]]
    analyze: Callable[[], Awaitable[None]]
    cleanups: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    async def close(self) -> list[str]:
        """Close the adapters, then run the cleanups; what could not be removed."""
        problems: list[str] = []
        for closing in (self.bus.stop, self.rel.close, self.vectors.close, self.graph.close, self.cache.close):
            try:
                await closing()
            except Exception as exc:
                problems.append(f"close: {exc!r}")
        for cleanup in reversed(self.cleanups):
            try:
                await cleanup()
            except Exception as exc:
                problems.append(f"{getattr(cleanup, '__name__', 'cleanup')}: {exc!r}")
        return problems


async def open_stack(mode: str, client_id: str, work: Path, dim: int) -> Stack:
    from acm.adapters.edge_store import EdgeVectorStore
    from acm.bootstrap import open_bus, open_cache, open_graph, open_relational

    vectors = EdgeVectorStore(work / "vectors")
    await vectors.ensure(dim)
    if mode == "embedded":
        database = f"sqlite:///{work / 'acm.db'}"
        graph_path = work / "graph.db"
        rel = await open_relational(database, 30.0)
        graph = await open_graph(f"sqlite:///{graph_path}", 30.0)

        async def link_sqlite(links: list[tuple[Any, list[str]]]) -> None:
            await asyncio.to_thread(_sqlite_mentions, graph_path, links)

        async def no_analyze() -> None:
            return None  # SQLite: no statistics job runs in the embedded mode either

        return Stack(
            rel,
            vectors,
            graph,
            await open_cache("memory://"),
            open_bus(f"sqlite:///{work / 'bus.db'}", "acm-bench-scale"),
            database,
            link_sqlite,
            no_analyze,
        )
    from acm_benchmarks.fleet_stack import Servers, create_database, delete_topics, drop_database

    servers = Servers.from_env()
    database = create_database(servers.postgres)
    namespace = f"scale-{uuid.uuid4().hex[:8]}."
    mentions = Neo4jMentions(servers.neo4j)
    stack = Stack(
        await open_relational(database, 60.0, (1, 4)),
        vectors,
        await open_graph(servers.neo4j, 60.0),
        await open_cache(servers.redis),
        open_bus(f"kafka://{servers.kafka}?namespace={namespace}", "acm-bench-scale", 30.0),
        database,
        mentions,
        _pg_analyze(database),
    )

    async def drop_postgres() -> None:
        await asyncio.to_thread(drop_database, database)

    async def drop_topics() -> None:
        await delete_topics(servers.kafka, namespace)

    async def erase_neo4j() -> None:
        await _neo4j_erase(servers.neo4j, client_id)

    async def clear_redis() -> None:
        from acm.bootstrap import open_cache as reopen
        from acm.domain.scope import ForgetLevel, Scope

        cache = await reopen(servers.redis)
        try:
            await cache.clear(Scope(client_id, "all", "all"), ForgetLevel.CLIENT)
        finally:
            await cache.close()

    stack.cleanups += [drop_postgres, drop_topics, erase_neo4j, clear_redis, mentions.close]
    return stack


def _sqlite_mentions(path: Path, links: list[tuple[Any, list[str]]]) -> None:
    """The rows SqliteGraphStore.link_mentions writes, many memories per transaction."""
    rows = [
        (m.memory_id, e, m.owner.client_id, m.owner.customer_id, m.owner.user_id, str(m.owner.tier), m.session_id)
        for m, entity_ids in links
        for e in entity_ids
    ]
    conn = sqlite3.connect(str(path), timeout=30.0)
    try:
        conn.execute("PRAGMA cache_size = -262144")  # the loader's connection only: 256 MB, random-key inserts
        with conn:
            conn.executemany("INSERT OR IGNORE INTO mentions VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    finally:
        conn.close()


# The nodes and edges Neo4jGraphStore.link_mentions writes (same MERGE keys and properties), a batch at a time.
_NEO4J_MENTIONS = """
UNWIND $rows AS row
MERGE (m:Memory {memory_id: row.memory_id})
ON CREATE SET m.client_id = row.client_id
SET m.customer_id = row.customer_id, m.user_id = row.user_id, m.tier = row.tier, m.session_id = row.session_id
WITH m, row
UNWIND row.entity_ids AS entity_id
MATCH (e:Entity {entity_id: entity_id}) WHERE e.client_id = row.client_id
MERGE (m)-[:MENTIONS]->(e)
"""


class Neo4jMentions:
    """Writes mentions in batches over a driver of its own (the adapter's is private to it)."""

    def __init__(self, uri: str) -> None:
        from neo4j import AsyncGraphDatabase

        self._driver = AsyncGraphDatabase.driver(uri)

    async def __call__(self, links: list[tuple[Any, list[str]]]) -> None:
        rows = [
            {
                "memory_id": m.memory_id,
                "client_id": m.owner.client_id,
                "customer_id": m.owner.customer_id,
                "user_id": m.owner.user_id,
                "tier": str(m.owner.tier),
                "session_id": m.session_id,
                "entity_ids": entity_ids,
            }
            for m, entity_ids in links
        ]
        async with asyncio.timeout(300):
            await self._driver.execute_query(_NEO4J_MENTIONS, {"rows": rows})

    async def close(self) -> None:
        await self._driver.close()


async def _neo4j_erase(uri: str, client_id: str) -> None:
    """Delete this run's client's nodes (and their edges) only: the server is shared with the tests."""
    from neo4j import AsyncGraphDatabase
    from neo4j.exceptions import TransientError

    transient = 0
    async with AsyncGraphDatabase.driver(uri) as driver:
        for label in ("Memory", "Entity"):
            while True:
                try:
                    async with asyncio.timeout(300):
                        records, _, _ = await driver.execute_query(
                            f"MATCH (n:{label}) WHERE n.client_id = $client_id WITH n LIMIT 2000 "
                            "DETACH DELETE n RETURN count(*) AS n",
                            {"client_id": client_id},
                        )
                except TransientError:
                    # The 1M run's erase met one (a lock or memory limit while the tests write): wait, go on.
                    transient += 1
                    if transient > 20:
                        raise
                    await asyncio.sleep(1.0)
                    continue
                if not records or records[0]["n"] == 0:
                    break


def _pg_analyze(database: str) -> Callable[[], Awaitable[None]]:
    async def analyze() -> None:
        import psycopg

        async with await psycopg.AsyncConnection.connect(database, autocommit=True) as conn:
            async with asyncio.timeout(600):
                await conn.execute("ANALYZE memories")

    return analyze


async def measure(
    mode: str,
    corpus: Any,
    embedder: Any,
    sizes: tuple[int, ...],
    queries: int,
    ingest_turns: int,
    budget: int,
    progress: Callable[[str], None] = print,
    optimize_vectors: bool = False,
    checkpoint: Callable[[dict[str, Any]], None] = lambda _: None,
) -> dict[str, Any]:
    """One mode's curve, on stores of its own, for a client id of its own (what the cleanup erases)."""
    client_id = f"scale-{uuid.uuid4().hex[:8]}"
    corpus.restart(client_id)
    seed = corpus.seed
    work = Path(tempfile.mkdtemp(prefix=f"acm-scale-{mode}-"))
    stack = await open_stack(mode, client_id, work, corpus.dim)
    out: dict[str, Any] = {
        "mode": mode,
        "stores": STORES[mode],
        "client_id": client_id,  # what the cleanup erased from the shared servers
        "database": stack.database.rpartition("/")[2] if mode == "distributed" else "",
        "embedder": embedder.name,
        "fetch_p50_ms": {},
        "fetch_p95_ms": {},
        "ingest_ms_per_turn": {},
        "load_s": {},
        "channels_ms": {},  # each store alone, the same queries
        "load_average": {},
    }
    try:
        ingest = await _ingest_handler(stack, client_id, embedder)
        for size in sizes:
            out["load_s"][str(size)] = await _load(stack, corpus, size, embedder.name, mode, progress)
            await stack.analyze()
            fetch = await _fetch(stack, corpus, size, queries, budget, embedder)
            out["fetch_p50_ms"][str(size)] = fetch["p50"]
            out["fetch_p95_ms"][str(size)] = fetch["p95"]
            out["channels_ms"][str(size)] = fetch["channels"]
            out["ingest_ms_per_turn"][str(size)] = await ingest(size, ingest_turns, seed)
            out["load_average"][str(size)] = round(os.getloadavg()[0], 2)
            progress(
                f"[{mode}] {size:>9,} memories: Fetch p50 {fetch['p50']} ms, p95 {fetch['p95']} ms; "
                f"ingest {out['ingest_ms_per_turn'][str(size)]} ms/turn"
            )
            checkpoint(out)
        if optimize_vectors:
            # The shard never builds its HNSW graph by itself (EdgeVectorStore.optimize is not on any path): what
            # would building it change at the largest size?
            t = time.perf_counter()
            await stack.vectors.optimize()
            spent = round(time.perf_counter() - t, 1)
            # Other queries than before the build: the same ones again would find the stores' caches warm.
            fetch = await _fetch(stack, corpus, sizes[-1], queries, budget, embedder, seed=sizes[-1] + 1)
            out["vectors_optimized"] = {"size": sizes[-1], "optimize_s": spent, **fetch}
            progress(f"[{mode}] HNSW built in {spent} s: Fetch p50 {fetch['p50']} ms, p95 {fetch['p95']} ms")
    finally:
        problems = await stack.close()
        shutil.rmtree(work, ignore_errors=True)
        for problem in problems:
            progress(f"[{mode}] cleanup: {problem}")
    first, last = str(sizes[0]), str(sizes[-1])
    p95_first, p95_last = out["fetch_p95_ms"][first], out["fetch_p95_ms"][last]
    out["target"] = {
        "rule": f"Fetch p95 at {last} ≤ {TARGET_RATIO:g}× its value at {first}",
        "ratio": round(p95_last / p95_first, 2) if p95_first else None,
        "met": bool(p95_first) and p95_last <= TARGET_RATIO * p95_first,
    }
    out["generated"] = {
        "seed": seed,
        "users_at_largest": int(corpus.users.max()) + 1,
        "distinct_texts": corpus.embedded,
        "queries_per_size": queries,
        "ingest_turns_per_size": ingest_turns,
        "budget_tokens": budget,
        "vectors": "each distinct text embedded with the real model, plus a per-memory Gaussian jitter "
        "(cosine ~0.95), normalised; queries embedded by the retrieve use case",
        "bulk_load": "MemoryRepo.upsert, VectorStore.upsert, GraphStore.upsert_entities/upsert_relations in "
        f"chunks of {CHUNK}; mentions as batched writes of link_mentions' nodes/rows",
    }
    return out


async def _load(
    stack: Stack, corpus: Any, size: int, model: str, mode: str, progress: Callable[[str], None]
) -> dict[str, float]:
    """Bulk-load the corpus up to ``size`` memories; seconds spent per store."""
    from acm.ports.stores import VectorPoint

    spent = {"relational": 0.0, "vectors": 0.0, "graph": 0.0}
    started, begun = time.perf_counter(), corpus.next
    report_every = max(CHUNK, (size - begun) // 10)
    last_report = begun
    while corpus.next < size:
        chunk = corpus.chunk(min(size, corpus.next + CHUNK))

        async def timed(store: str, *writes: Awaitable[None]) -> None:
            t = time.perf_counter()
            for write in writes:  # in order: mentions after their entities
                await write
            spent[store] += time.perf_counter() - t

        points = [
            VectorPoint(m.memory_id, v, m.owner, m.layer, m.created_at, m.session_id, model)
            for m, v in zip(chunk.memories, chunk.vectors.tolist(), strict=True)
        ]
        # The three stores load at once (the servers work while the shard indexes): their times overlap.
        await asyncio.gather(
            timed("relational", stack.rel.memories.upsert(chunk.memories)),
            timed(
                "graph",
                stack.graph.upsert_entities(chunk.entities),
                stack.link_mentions(chunk.mentions),
                stack.graph.upsert_relations(chunk.relations),
            ),
            timed("vectors", stack.vectors.upsert(points)),
        )
        if corpus.next - last_report >= report_every or corpus.next == size:
            last_report = corpus.next
            progress(
                f"[{mode}] loaded {corpus.next:>9,} / {size:,} memories "
                f"({(corpus.next - begun) / (time.perf_counter() - started):,.0f}/s; time in each store: relational "
                f"{spent['relational']:.0f} s, vectors {spent['vectors']:.0f} s, graph {spent['graph']:.0f} s)"
            )
    spent["wall"] = time.perf_counter() - started
    return {k: round(v, 1) for k, v in spent.items()}


async def _fetch(
    stack: Stack, corpus: Any, size: int, count: int, budget: int, embedder: Any, seed: int | None = None
) -> dict[str, Any]:
    """Fetch latencies through retrieve's use case; a fresh one per size (its query-vector cache empty)."""
    from acm.domain.retrieved import RetrievalQuery
    from acm.schemas import RepoSchemaSource
    from acm_benchmarks.fleet_stats import pcts
    from acm_retrieve.app import build_api

    api = build_api(stack.rel, stack.vectors, stack.graph, embedder, RepoSchemaSource(stack.rel.schemas))
    asked = corpus.queries(size, count + WARM_UP, seed=size if seed is None else seed)
    ms: list[float] = []
    for i, (scope, text) in enumerate(asked):
        t = time.perf_counter()
        await api.retrieve(RetrievalQuery(scope, text, budget))
        if i >= WARM_UP:
            ms.append((time.perf_counter() - t) * 1000)
    return {**pcts(ms), "channels": await _channels(stack, asked[WARM_UP:], embedder)}


async def _channels(stack: Stack, asked: list[tuple[Any, str]], embedder: Any) -> dict[str, dict[str, Any]]:
    """The same queries against each store alone (what each index costs): keyword search, filtered vector search
    (query vectors computed beforehand, not timed), entity lookup + one-hop expansion."""
    from acm_benchmarks.fleet_stats import pcts
    from acm_retrieve.usecases import query_names

    vectors = embedder.embed_query([text for _, text in asked])
    ms: dict[str, list[float]] = {"keyword": [], "vector": [], "graph": []}
    for (scope, text), vector in zip(asked, vectors, strict=True):
        t = time.perf_counter()
        await stack.rel.memories.keyword_search(scope, text, 60)
        t1 = time.perf_counter()
        await stack.vectors.search(scope, vector, 60, model=embedder.name)
        t2 = time.perf_counter()
        entities = await stack.graph.find_entities(scope, query_names(text))
        if entities:
            await stack.graph.expand(scope, [e.entity_id for e in entities], 1, 60)
        t3 = time.perf_counter()
        for name, spent in (("keyword", t1 - t), ("vector", t2 - t1), ("graph", t3 - t2)):
            ms[name].append(spent * 1000)
    return {name: pcts(values) for name, values in ms.items()}


async def _ingest_handler(stack: Stack, client_id: str, embedder: Any) -> Callable[[int, int, int], Awaitable[float]]:
    """ingest's turns handler as its process wires it; what it publishes on acm.memories.v1 is also written to the
    vector store by retrieve's handler, in the same call, so a turn's cost includes its vectors."""
    from acm import topics
    from acm.auth import create_api_key, key_id_of
    from acm.job_events import JobEvents
    from acm.ports.bus import Record
    from acm_benchmarks.fleet_turns import agent_turns
    from acm_benchmarks.ingest_stages import Timings, _envelopes, _wired_handler
    from acm_ingest.app import register
    from acm_ingest.settings import IngestSettings
    from acm_retrieve.handlers.memories import MemoriesHandler
    from acm_retrieve.projection import MemoryProjection

    _, secret = await create_api_key(stack.rel.api_keys, client_id, "acm bench scale")
    # Retrieve's projection (here the same store as ingest's: the second write of each memory is in the cost).
    vectors_written = MemoriesHandler(
        MemoryProjection(stack.rel.memories, stack.vectors, stack.graph), JobEvents(stack.bus), embedder.dim
    )

    class Tee:
        async def publish(self, topic: str, key: str, value: bytes) -> None:
            await stack.bus.publish(topic, key, value)
            if topic == topics.MEMORIES:
                await vectors_written(Record(topic, key, value))

    handler = _wired_handler(
        register, IngestSettings, Tee(), stack.rel, stack.cache, embedder, Timings(), stack.database
    )

    async def ingest(size: int, turns: int, seed: int) -> float:
        envelopes = _envelopes(
            client_id, secret, key_id_of(secret), turns + INGEST_WARM_UP, 4, seed + size, agent_turns
        )
        for key, value in envelopes[:INGEST_WARM_UP]:
            await handler(Record(topics.TURNS, key, value))
        timed = envelopes[INGEST_WARM_UP:]
        started = time.perf_counter()
        for key, value in timed:
            await handler(Record(topics.TURNS, key, value))
        return round((time.perf_counter() - started) * 1000 / max(1, len(timed)), 2)

    return ingest


def print_table(console: Any, result: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title="Fetch and ingest as one client grows")
    columns = (
        "mode",
        "memories",
        "Fetch p50 ms",
        "Fetch p95 ms",
        "p95 alone: kw/vec/graph",
        "ingest ms/turn",
        "load s",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "mode" else "right")
    for mode, r in result.items():
        for size, p95 in r["fetch_p95_ms"].items():
            alone = r["channels_ms"][size]
            table.add_row(
                mode,
                f"{int(size):,}",
                str(r["fetch_p50_ms"][size]),
                str(p95),
                "/".join(str(alone[c]["p95"]) for c in ("keyword", "vector", "graph")),
                str(r["ingest_ms_per_turn"][size]),
                f"{r['load_s'][size]['wall']:.0f}",
            )
    console.print(table)
    for mode, r in result.items():
        t = r.get("target")  # absent from a run stopped before its last size
        if t is not None:
            console.print(f"{mode}: {t['rule']}: ratio {t['ratio']} → {'met' if t['met'] else 'NOT met'}")


def plot(result: dict[str, Any], path: Path) -> bool:
    from acm_benchmarks.plotting import pyplot

    plt = pyplot()
    if plt is None:
        return False
    fig, (fetch_ax, ingest_ax) = plt.subplots(1, 2, figsize=(11, 4.2))
    for mode, r in result.items():
        sizes = [int(s) for s in r["fetch_p95_ms"]]
        fetch_ax.plot(sizes, list(r["fetch_p95_ms"].values()), marker="o", label=f"{mode} p95")
        fetch_ax.plot(sizes, list(r["fetch_p50_ms"].values()), marker=".", linestyle="--", label=f"{mode} p50")
        ingest_ax.plot(sizes, list(r["ingest_ms_per_turn"].values()), marker="o", label=mode)
    for ax, title, label in (
        (fetch_ax, "Fetch latency (retrieve use case)", "ms"),
        (ingest_ax, "ingest, one turn at a time", "ms / turn"),
    ):
        ax.set_xscale("log")
        ax.set_xlabel("memories of the client")
        ax.set_ylabel(label)
        ax.set_title(title)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
