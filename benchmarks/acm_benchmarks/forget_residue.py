"""Forget residue: what of a forgotten user, customer and client is left in the bytes of every store.

One ACM (embedded stores, or the real servers with the same services in one process) gets turns from
five people whose words carry unique pseudo-words, at the user tier and, through the customer_support
archetype's product_issue category, at the customer tier:

  alice  (client A, customer acme)   a user-tier fact and a customer-tier statement only she made
  bob    (client A, customer acme)   a user-tier fact and a customer-tier statement
  carol  (client A, customer globex) a user-tier fact
  dave   (client B, customer delta)  a user-tier fact (another client: never forgotten)

Then: Forget alice (user), acme (customer), client A (client). After each, every store is scanned
(acm_cli.residue) for the forgotten words, and the vector store also for the forgotten id (user, customer
or client id: payloads carry ids, never text), until nothing is left or ``settle_s`` passed. What must stay
is checked too, so a scenario that stored nothing cannot pass: before each Forget its words are in the
relational store, and after it the next subject's words still are (bob's customer-tier statement survives
alice's Forget, and Fetch still returns it to bob but never alice's).

The bus (the embedded log, Kafka) is counted as a reader holding every data key that remains would see it:
the raw bytes of every record, plus what each sealed body opens to with the gateway's remaining keys
(acm.sealing.readable_bytes). Before a Forget the subject's words are found that way; after it, their keys
are destroyed, so the sealed records that remain count 0. ``kafka_in_clear`` counts the raw bytes alone.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acm.adapters.data_keys_sql import SqlDataKeyRepo
from acm.auth import create_api_key
from acm.client import AcmClient
from acm.ownership import SERVICES
from acm.sealing import StoreKeyring, embedded_master_key, readable_bytes
from acm.v1 import common_pb2, gateway_pb2
from acm_cli.residue import count, embedded_residue, needles_for, scan_path

if TYPE_CHECKING:
    from acm_cli.embedded import EmbeddedAcm

AGENT = "support"
LEVELS = ("user", "customer", "client")


def pseudo_word(rng: random.Random, capital: bool = False) -> str:
    """A word no store rewrites: letters ending in "o" (no stemmer suffix), never a PII pattern."""
    word = "q" + "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aiu") for _ in range(5)) + "o"
    return word.capitalize() if capital else word


@dataclass
class Subject:
    name: str
    client: str
    customer: str
    user: str
    words: list[str] = field(default_factory=list)  # what this person said that must go with them
    turns: list[str] = field(default_factory=list)

    def scope(self) -> common_pb2.Scope:
        return common_pb2.Scope(
            client_id=self.client, customer_id=self.customer, user_id=self.user, agent_id=AGENT, session_id="s1"
        )


def subjects(client_a: str, client_b: str, seed: int | None = None) -> dict[str, Subject]:
    """The four people; their words are new on every run (unless ``seed`` is given), as the servers' stores
    (Postgres WAL, Kafka topics, Redis) outlive a run."""
    rng = random.Random(seed)
    suffix = uuid.uuid4().hex[:6]
    out = {
        "alice": Subject("alice", client_a, f"acme-{suffix}", f"alice-{suffix}"),
        "bob": Subject("bob", client_a, f"acme-{suffix}", f"bob-{suffix}"),
        "carol": Subject("carol", client_a, f"globex-{suffix}", f"carol-{suffix}"),
        "dave": Subject("dave", client_b, f"delta-{suffix}", f"dave-{suffix}"),
    }
    for s in out.values():
        place, band = pseudo_word(rng, capital=True), pseudo_word(rng)
        s.words += [place, band]
        s.turns.append(f"Please always ship my {band} order to {place}, I prefer it.")
    for name in ("alice", "bob"):
        product = pseudo_word(rng)
        out[name].words.append(product)
        # A customer-tier statement ("known issue", "outage"). Not "... hits all our users": the learned injection
        # check scores such notices at a median 0.66 (threshold 0.888), so a few random words in 1,000 made it
        # an order and the statement never a fact (docs/experiments.md, "notices to all users").
        out[name].turns.append(f"Known issue: the {product} export outage started on Monday.")
    return out


@dataclass
class Deployment:
    """Where the ACM under test keeps its data, and how to scan it."""

    mode: str  # "embedded" | "distributed"
    scan: Callable[[tuple[bytes, ...], tuple[bytes, ...]], Awaitable[dict[str, int]]]
    # Stores known to keep what was erased for a while (Kafka's retention, Postgres pages before VACUUM):
    # measured, but not waited for.
    lagging: frozenset[str] = frozenset()


def remaining_keys(acm: EmbeddedAcm) -> StoreKeyring:
    """The data keys the gateway's store holds now, read afresh (no key kept from before a Forget)."""
    return StoreKeyring(SqlDataKeyRepo.of(acm.stores["gateway"]), embedded_master_key(acm.settings.data_dir))


def bus_opener(acm: EmbeddedAcm) -> Callable[[str, bytes], Awaitable[bytes]]:
    """topic, value → what the remaining keys read of the record (a scan's keys: one fresh keyring per call)."""
    keys = remaining_keys(acm)

    async def opened(topic: str, value: bytes) -> bytes:
        return await readable_bytes(value, keys, topic)

    return opened


def _log_records(bus_file: Path) -> list[tuple[str, bytes]]:
    if not bus_file.exists():
        return []
    with closing(sqlite3.connect(f"file:{bus_file}?mode=ro", uri=True, timeout=5.0)) as conn:
        return [(topic, bytes(value)) for topic, value in conn.execute("SELECT topic, value FROM records")]


async def embedded_bus_opened(bus_file: Path, needles: tuple[bytes, ...], acm: EmbeddedAcm) -> int:
    """Occurrences in what the remaining data keys open of the embedded log's records."""
    opened = bus_opener(acm)
    return sum([count(await opened(topic, value), needles) for topic, value in _log_records(bus_file)])


def embedded_scanner(
    data_dir: Path, acm: EmbeddedAcm
) -> Callable[[tuple[bytes, ...], tuple[bytes, ...]], Awaitable[dict[str, int]]]:
    async def scan(words: tuple[bytes, ...], ids: tuple[bytes, ...]) -> dict[str, int]:
        out = embedded_residue(data_dir, words)
        out["vectors"] += scan_path(data_dir / "vectors", ids)
        out["bus"] += await embedded_bus_opened(data_dir / "bus.db", words, acm)
        return out

    return scan


async def run_scenario(
    addr: str,
    admin_key: str,
    client_a: str,
    other_key: str,
    client_b: str,
    deployment: Deployment,
    *,
    settle_s: float = 30.0,
    seed: int | None = None,
    after_level: Callable[[tuple[bytes, ...]], Awaitable[dict[str, int]]] | None = None,
) -> dict[str, Any]:
    """{"residue": {level: {store: hits}}, "kept": {level: {store: hits}}, "fetch": {...}, "seconds": {...}}.

    ``after_level`` may add measurements per level, given the level's needles (the distributed run: Postgres
    pages after a VACUUM, and its WAL)."""
    people = subjects(client_a, client_b, seed)
    async with AcmClient(addr, admin_key) as a_client, AcmClient(addr, other_key) as b_client:
        for client, key_client in ((a_client, client_a), (b_client, client_b)):
            scope = common_pb2.Scope(client_id=key_client, customer_id="setup", user_id="setup", agent_id=AGENT)
            await client.define_agent(scope, "", archetype="customer_support")
        for s in people.values():
            client = a_client if s.client == client_a else b_client
            for text in s.turns:
                accepted = await client.ingest(s.scope(), text)
                job = await client.wait_job(s.scope(), accepted.job_id, timeout_s=60)
                if job.status != gateway_pb2.JOB_STATUS_DONE:
                    raise RuntimeError(f"ingest of {s.name}'s turn failed: {job.error}")
        await asyncio.sleep(1.0)  # the vector index follows the memories topic

        plan = [
            ("user", people["alice"], [people["alice"]], people["alice"].user, people["bob"]),
            ("customer", people["bob"], [people["bob"]], people["bob"].customer, people["carol"]),
            ("client", people["carol"], [people["carol"]], client_a, people["dave"]),
        ]
        residue: dict[str, dict[str, int]] = {}
        kept: dict[str, dict[str, int]] = {}
        before: dict[str, dict[str, int]] = {}
        seconds: dict[str, float] = {}
        fetch: dict[str, Any] = {}
        for level, via, gone, gone_id, survivor in plan:
            words = needles_for([w for s in gone for w in s.words])
            ids = needles_for([gone_id])
            before[level] = await deployment.scan(words, ids)
            t0 = time.perf_counter()
            job_id = await a_client.forget(via.scope(), level)
            job = await a_client.wait_job(via.scope(), job_id, timeout_s=60)
            if job.status != gateway_pb2.JOB_STATUS_DONE:
                raise RuntimeError(f"forget {level} failed: {job.error}")
            deadline = time.monotonic() + settle_s
            while True:
                found = await deployment.scan(words, ids)
                waited = [n for store, n in found.items() if store not in deployment.lagging]
                if not any(waited) or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.5)
            seconds[level] = round(time.perf_counter() - t0, 2)
            residue[level] = found
            if after_level is not None:
                residue[level].update(await after_level(words))
            kept[level] = await deployment.scan(needles_for(survivor.words), ())
            if level == "user":
                bob = people["bob"]
                got = await a_client.fetch(bob.scope(), "known issue export outage users", 2000)
                texts = [m.text for m in got.memories]
                fetch["bob_after_alice_forgotten"] = {
                    "his_statement_returned": any(bob.words[-1] in t for t in texts),
                    "hers_returned": any(people["alice"].words[-1] in t for t in texts),
                }
    return {"residue": residue, "before": before, "kept": kept, "fetch": fetch, "seconds": seconds}


async def embedded_forget_residue(data_dir: Path, settle_s: float = 30.0) -> dict[str, Any]:
    """The scenario against an embedded ACM of its own in ``data_dir``."""
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

    async with EmbeddedAcm(EmbeddedSettings(data_dir=data_dir, listen_addr="127.0.0.1:0")) as acm:
        return await _run_in(acm, Deployment("embedded", embedded_scanner(data_dir, acm)), settle_s)


async def _run_in(
    acm: EmbeddedAcm,
    deployment: Deployment,
    settle_s: float,
    after_level: Callable[[tuple[bytes, ...]], Awaitable[dict[str, int]]] | None = None,
) -> dict[str, Any]:
    """The scenario against a running ACM with two new clients, A (forgotten level by level) and B. Neither is
    the dev client "local": in distributed mode Neo4j and Redis are shared servers, and a client-level Forget of
    "local" would reach whatever else uses that client there."""
    keys = acm.stores["gateway"].api_keys
    client_a, client_b = f"forget-{uuid.uuid4().hex[:6]}", f"other-{uuid.uuid4().hex[:6]}"
    _, key_a = await create_api_key(keys, client_a, "forget residue: forgotten client")
    _, key_b = await create_api_key(keys, client_b, "forget residue: other client")
    addr = f"127.0.0.1:{acm.port}"
    return await run_scenario(
        addr, key_a, client_a, key_b, client_b, deployment, settle_s=settle_s, after_level=after_level
    )


async def distributed_forget_residue(
    postgres_dsn: str, kafka_bootstrap: str, neo4j_uri: str, redis_url: str, work: Path, settle_s: float = 20.0
) -> dict[str, Any]:
    """The scenario with every service in one process over the real servers: Postgres (a database of its own,
    dropped after), Kafka (topics of a namespace of its own), Neo4j, Redis, and Qdrant's local mode (no
    Qdrant server here). After each level Postgres is also measured after a VACUUM of every table, and its
    WAL segments are scanned (pg_read_binary_file)."""
    import psycopg

    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings, Urls
    from acm_cli.residue import distributed_residue, kafka_residue, postgres_residue, wal_segment_now

    name = f"acm_forget_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    dsn = f"{postgres_dsn.rpartition('/')[0]}/{name}"
    wal_since = await wal_segment_now(dsn)  # the subject's words are written after this: later segments only
    bus_url = f"kafka://{kafka_bootstrap}?namespace=forget-{uuid.uuid4().hex[:8]}."
    vector_path = work / "qdrant"
    acm = EmbeddedAcm(EmbeddedSettings(data_dir=work / "acm", listen_addr="127.0.0.1:0"))

    async def scan(words: tuple[bytes, ...], ids: tuple[bytes, ...]) -> dict[str, int]:
        out = await distributed_residue(
            words,
            database_url=dsn,
            graph_url=neo4j_uri,
            cache_url=redis_url,
            bus_url=bus_url,
            vector_path=vector_path,
            postgres_wal=False,
            bus_opener=bus_opener(acm),
        )
        out["vectors"] += scan_path(vector_path, ids)
        out["kafka_in_clear"] = await kafka_residue(bus_url, words)  # the raw bytes alone, no key
        return out

    async def after_level(words: tuple[bytes, ...]) -> dict[str, int]:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute("VACUUM")
        vacuumed = await postgres_residue(dsn, words, wal=False)
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute("VACUUM FULL")  # rewrites every table and index (an exclusive lock while it runs)
        full = await postgres_residue(dsn, words, wal=True, wal_since=wal_since)
        return {
            "postgres_pages_after_vacuum": vacuumed["postgres_pages"],
            "postgres_pages_after_vacuum_full": full["postgres_pages"],
            "postgres_wal": full["postgres_wal"],
        }

    try:
        acm.urls = Urls(
            databases=dict.fromkeys(SERVICES, dsn),
            vectors=f"qdrant-local://{vector_path}",
            graph=neo4j_uri,
            bus=bus_url,
            cache=redis_url,
        )
        lagging = frozenset({"kafka", "postgres_pages", "postgres_wal"})
        async with acm:
            return await _run_in(acm, Deployment("distributed", scan, lagging), settle_s, after_level)
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
