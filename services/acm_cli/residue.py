"""Forget residue: how often forgotten text still occurs in each store, by reading every byte a store keeps.

Embedded mode: every file of the data folder, grouped by store (the SQLite files with their WAL, so FTS5's
shadow tables and freed pages too; the vector folder; the bus log; logs). Distributed mode, each store
through its own client: Postgres rows (every table, as text), its raw pages (pageinspect: dead tuples
and index entries a VACUUM has not reclaimed) and its WAL segments (pg_read_binary_file); Neo4j nodes and
relationships (every property); Redis (every key and value, by SCAN); Kafka (every record of the
namespace's topics, read from the start by a consumer of no group); a qdrant-local folder's bytes.

What is searched: the needles given, as UTF-8 bytes. Pick needles that no store rewrites: a lowercase
token of letters and digits ending in a digit reaches FTS5 and tsvector unchanged, and one searched by
its last characters is found even inside FTS5's prefix-compressed term lists (see ``needles_for``).
Used by ``acm forget --verify``, ``acm bench safety`` (forget_residue) and tests/integration/test_forget_residue.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from acm.ownership import SERVICES

# Files of the embedded data folder, by store (acm_cli.embedded.Urls.under); anything else is "other".
# Relational: each service's own file (acm.ownership), and acm.db of the releases before them with the copy a
# split keeps of it (acm_cli.store_split), which a Forget does not reach.
_RELATIONAL = (*(f"{s}.db" for s in SERVICES), "acm.db", "acm.db.before-split")
EMBEDDED_STORES: dict[str, tuple[str, ...]] = {
    "relational": tuple(f"{name}{suffix}" for name in _RELATIONAL for suffix in ("", "-wal", "-shm", "-journal")),
    # retrieve.graph.db (retrieve's since issue 19), and graph.db of a data folder from before it was adopted.
    "graph": tuple(
        f"{name}{suffix}" for name in ("retrieve.graph.db", "graph.db") for suffix in ("", "-wal", "-shm", "-journal")
    ),
    "bus": ("bus.db", "bus.db-wal", "bus.db-shm", "bus.db-journal"),
    "vectors": ("vectors",),
    "logs": ("logs",),
}
# The connection's own schemas, and every service's (acm_<service>) when the URL's role may read them.
_ACM_SCHEMAS = "({column} = ANY(current_schemas(false)) OR {column} LIKE 'acm\\_%')"
TAIL = 10  # characters of a token needle searched for: FTS5 stores a term's tail whole after a shared prefix


def needles_for(texts: Sequence[str]) -> tuple[bytes, ...]:
    """The byte strings to count: each text as UTF-8; a single token (no space) by its last TAIL characters."""
    out = []
    for text in texts:
        if not text:
            continue
        piece = text[-TAIL:] if " " not in text and len(text) > TAIL else text
        out.append(piece.encode())
    return tuple(dict.fromkeys(out))


def count(data: bytes, needles: Sequence[bytes]) -> int:
    return sum(data.count(n) for n in needles)


def _files(path: Path) -> Iterable[Path]:
    if path.is_file():
        yield path
    elif path.is_dir():
        yield from (p for p in sorted(path.rglob("*")) if p.is_file())


def scan_path(path: Path, needles: Sequence[bytes]) -> int:
    """Occurrences in every byte of the file, or of every file under the folder."""
    total = 0
    for file in _files(path):
        try:
            total += count(file.read_bytes(), needles)
        except OSError:  # removed while we looked (a vector rewrite, a checkpoint)
            continue
    return total


def embedded_residue(data_dir: Path, needles: Sequence[bytes]) -> dict[str, int]:
    """{store: occurrences} over every file of an embedded data folder."""
    out: dict[str, int] = {}
    known: set[Path] = set()
    for store, names in EMBEDDED_STORES.items():
        paths = [data_dir / n for n in names]
        known.update(paths)
        out[store] = sum(scan_path(p, needles) for p in paths)
    other = [p for p in sorted(data_dir.iterdir()) if p not in known] if data_dir.is_dir() else []
    # Folders beside the stores (a vector rewrite in progress ends in .rewrite / .forgotten) count too.
    out["other"] = sum(scan_path(p, needles) for p in other)
    return out


# --- distributed stores ------------------------------------------------------------------------------------


async def postgres_residue(
    dsn: str, needles: Sequence[bytes], *, wal: bool = True, wal_since: str = ""
) -> dict[str, int]:
    """{"postgres": rows holding a needle (every table of the search path, each row as text),
    "postgres_pages": occurrences in the raw pages of every table, index and TOAST table (needs superuser
    and pageinspect, else -1), "postgres_wal": occurrences in the server's WAL segments (superuser, else -1)}.
    ``wal_since``: only the segments from this one on (``wal_segment_now``): the WAL is the whole server's, and
    text written after a moment cannot be in a segment finished before it."""
    import psycopg

    texts = [n.decode() for n in needles]
    out = {"postgres": 0, "postgres_pages": -1, "postgres_wal": -1}
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        tables = await (
            await conn.execute(
                "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables "
                f"WHERE {_ACM_SCHEMAS.format(column='table_schema')} AND table_type = 'BASE TABLE'"
            )
        ).fetchall()
        for (table,) in tables:
            for text in texts:
                row = await (
                    await conn.execute(f"SELECT count(*) FROM {table} t WHERE strpos(t::text, %s) > 0", (text,))
                ).fetchone()
                out["postgres"] += int(row[0]) if row else 0
        try:
            await conn.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
            out["postgres_pages"] = await _pg_pages(conn, needles)
        except psycopg.Error:
            pass  # pageinspect needs superuser: without it the raw pages are not scanned (no key in the report)
        if wal:
            try:
                out["postgres_wal"] = await _pg_wal(conn, needles, wal_since)
            except psycopg.Error:
                pass  # reading WAL files needs pg_read_server_files: likewise left out of the report
    return out


async def _pg_pages(conn: Any, needles: Sequence[bytes]) -> int:
    rels = await (
        await conn.execute(
            "SELECT c.oid::regclass::text, pg_relation_size(c.oid) / current_setting('block_size')::int "
            "FROM pg_class c WHERE c.relkind IN ('r', 'i', 't', 'm') AND (c.relnamespace = ANY("
            f"SELECT oid FROM pg_namespace WHERE {_ACM_SCHEMAS.format(column='nspname')}) OR c.oid IN ("
            "SELECT reltoastrelid FROM pg_class WHERE relnamespace = ANY(SELECT oid FROM pg_namespace "
            f"WHERE {_ACM_SCHEMAS.format(column='nspname')})))"
        )
    ).fetchall()
    total = 0
    for name, blocks in rels:
        for block in range(int(blocks)):
            row = await (await conn.execute("SELECT get_raw_page(%s, %s)", (name, block))).fetchone()
            total += count(bytes(row[0]), needles) if row else 0
    return total


async def wal_segment_now(dsn: str) -> str:
    """The name of the WAL segment being written now (segment names sort in write order on one timeline)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        row = await (await conn.execute("SELECT pg_walfile_name(pg_current_wal_lsn())")).fetchone()
    return str(row[0]) if row else ""


async def _pg_wal(conn: Any, needles: Sequence[bytes], since: str = "") -> int:
    names = await (
        await conn.execute("SELECT name FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$' AND name >= %s", (since,))
    ).fetchall()
    total = 0
    for (name,) in names:
        row = await (await conn.execute("SELECT pg_read_binary_file('pg_wal/' || %s)", (name,))).fetchone()
        total += count(bytes(row[0]), needles) if row else 0
    return total


async def neo4j_residue(uri: str, needles: Sequence[bytes]) -> int:
    """Nodes and relationships with a property holding a needle (every property, lists included)."""
    from neo4j import AsyncGraphDatabase

    parsed = urlparse(uri)
    auth = (parsed.username, parsed.password or "") if parsed.username else None
    bare = parsed._replace(netloc=parsed.netloc.rpartition("@")[2]).geturl()
    hits = 0
    async with AsyncGraphDatabase.driver(bare, auth=auth) as driver:
        for query in ("MATCH (n) RETURN properties(n) AS p", "MATCH ()-[r]->() RETURN properties(r) AS p"):
            records, _, _ = await driver.execute_query(query)
            for record in records:
                hits += int(count(repr(record["p"]).encode(), needles) > 0)
    return hits


async def redis_residue(url: str, needles: Sequence[bytes]) -> int:
    """Occurrences in every key and value of the database (strings, hashes, lists, sets, sorted sets)."""
    import redis.asyncio as aioredis

    client = aioredis.from_url(url)  # bytes in, bytes out (no decode_responses)
    total = 0
    try:
        async for key in client.scan_iter(count=1000):
            kind = await client.type(key)
            values: list[Any] = [key]
            if kind == b"string":
                values.append(await client.get(key) or b"")
            elif kind == b"hash":
                values += [b for kv in (await client.hgetall(key)).items() for b in kv]
            elif kind == b"list":
                values += await client.lrange(key, 0, -1)
            elif kind == b"set":
                values += list(await client.smembers(key))
            elif kind == b"zset":
                values += await client.zrange(key, 0, -1)
            total += sum(count(v if isinstance(v, bytes) else str(v).encode(), needles) for v in values)
    finally:
        await client.aclose()
    return total


async def kafka_residue(
    url: str,
    needles: Sequence[bytes],
    timeout_s: float = 30.0,
    opener: Callable[[str, bytes], Awaitable[bytes]] | None = None,
) -> int:
    """Occurrences in every record (key and value) of the topics of the URL's namespace, from the start; with
    ``opener`` (topic, value → what it reads of the value, acm.sealing.readable_bytes) also in what the data keys
    that remain open of each sealed record."""
    from aiokafka import AIOKafkaConsumer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient

    parsed = urlparse(url)
    namespace = parse_qs(parsed.query).get("namespace", [""])[0]
    admin = AIOKafkaAdminClient(bootstrap_servers=parsed.netloc)
    await admin.start()
    try:
        names = [t for t in await admin.list_topics() if t.startswith(namespace) and not t.startswith("__")]
        described = await admin.describe_topics(names) if names else []
    finally:
        await admin.close()
    parts = [TopicPartition(d["topic"], p["partition"]) for d in described for p in d["partitions"]]
    if not parts:
        return 0
    consumer = AIOKafkaConsumer(bootstrap_servers=parsed.netloc, enable_auto_commit=False, group_id=None)
    await consumer.start()
    total = 0
    try:
        consumer.assign(parts)
        await consumer.seek_to_beginning(*parts)
        ends = await consumer.end_offsets(parts)
        async with asyncio.timeout(timeout_s):
            while [tp for tp in parts if await consumer.position(tp) < ends[tp]]:
                batch = await consumer.getmany(timeout_ms=500)
                for tp, records in batch.items():
                    total += sum(count(r.value or b"", needles) + count(r.key or b"", needles) for r in records)
                    if opener is not None:
                        for r in records:
                            total += count(await opener(tp.topic, r.value or b""), needles)
    finally:
        await consumer.stop()
    return total


async def distributed_residue(
    needles: Sequence[bytes],
    *,
    database_url: str = "",
    graph_url: str = "",
    cache_url: str = "",
    bus_url: str = "",
    vector_path: Path | None = None,
    postgres_wal: bool = True,
    bus_opener: Callable[[str, bytes], Awaitable[bytes]] | None = None,
) -> dict[str, int]:
    """{store: occurrences} for each store named (an empty URL is skipped); ``bus_opener``: see kafka_residue."""
    out: dict[str, int] = {}
    if database_url.startswith("postgres"):
        out.update(await postgres_residue(database_url, needles, wal=postgres_wal))
    if graph_url.startswith(("bolt", "neo4j")):
        out["neo4j"] = await neo4j_residue(graph_url, needles)
    if cache_url.startswith("redis"):
        out["redis"] = await redis_residue(cache_url, needles)
    if bus_url.startswith("kafka"):
        out["kafka"] = await kafka_residue(bus_url, needles, opener=bus_opener)
    if vector_path is not None:
        out["vectors"] = scan_path(vector_path, needles)
    return out


# --- acm forget --verify ----------------------------------------------------------------------------------

# Stores that keep erased bytes for a while by design (docs/privacy.md): reported, not waited for.
LAGGING = frozenset({"kafka", "postgres_pages", "postgres_wal"})


async def verify_stores(
    texts: Sequence[str], data_dir: Path | None, env: dict[str, str], timeout_s: float = 30.0
) -> dict[str, int]:
    """Every store reachable from here, scanned for ``texts`` until none but the lagging ones holds them or
    ``timeout_s`` passed: the embedded data folder when it holds an ACM, and the servers named by
    ACM_DATABASE_URL, ACM_GRAPH_URL, ACM_CACHE_URL, ACM_BUS_URL and a qdrant-local ACM_VECTOR_URL."""
    needles = needles_for(texts)
    vectors = env.get("ACM_VECTOR_URL", "")
    vector_path = Path(vectors.removeprefix("qdrant-local://")) if vectors.startswith("qdrant-local://") else None
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        found: dict[str, int] = {}
        if data_dir is not None and any((data_dir / name).is_file() for name in _RELATIONAL):
            found.update({f"embedded {k}": v for k, v in embedded_residue(data_dir, needles).items()})
        found.update(
            await distributed_residue(
                needles,
                database_url=env.get("ACM_DATABASE_URL", ""),
                graph_url=env.get("ACM_GRAPH_URL", ""),
                cache_url=env.get("ACM_CACHE_URL", ""),
                bus_url=env.get("ACM_BUS_URL", ""),
                vector_path=vector_path,
                postgres_wal=False,
            )
        )
        if not any(n for k, n in found.items() if k not in LAGGING):
            return found
        if asyncio.get_running_loop().time() > deadline:
            return found
        await asyncio.sleep(0.5)
