"""Forget leaves no byte behind: after a user, customer and client Forget, the forgotten words are in no byte
of any store. Embedded: every file of the data folder (SQLite files with their WAL and FTS5 shadow tables,
the vector folder, the bus log). Distributed, on the real servers: Postgres rows, Neo4j, Redis, the vectors;
what the servers keep for a while (Kafka's retention, Postgres pages before VACUUM and its WAL) is measured
and printed, as docs/privacy.md states it. The pieces each have a test of their own below."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import uuid
from asyncio.subprocess import PIPE, STDOUT
from datetime import UTC, datetime
from pathlib import Path

import pytest

from acm.adapters.edge_store import EdgeVectorStore
from acm.adapters.embedded_bus import EmbeddedBus
from acm.adapters.sqlite_graph import SqliteGraphStore
from acm.adapters.sqlite_store import SqliteStore
from acm.domain.models import Entity, Layer, Memory
from acm.domain.scope import ForgetLevel, Scope, Tier
from acm.ports.bus import Record
from acm.ports.stores import VectorPoint
from acm_benchmarks.forget_residue import (
    distributed_forget_residue,
    embedded_forget_residue,
    pseudo_word,
)
from acm_cli.residue import needles_for, scan_path

LEVELS = ("user", "customer", "client")


async def test_embedded_forget_leaves_no_byte_at_any_level(tmp_path: Path) -> None:
    result = await embedded_forget_residue(tmp_path / "acm", settle_s=20.0)
    print(json.dumps(result))
    for level in LEVELS:
        assert result["before"][level]["relational"] > 0, result  # it was stored, so 0 after means erased
        assert result["residue"][level] == {store: 0 for store in result["residue"][level]}, (level, result)
        assert result["kept"][level]["relational"] > 0, result  # the next subject's words are still there
    assert result["before"]["user"]["graph"] > 0  # alice's names were entities before her Forget
    assert all(result["before"][level]["vectors"] > 0 for level in LEVELS)  # and her ids in vector payloads
    assert result["fetch"]["bob_after_alice_forgotten"] == {"his_statement_returned": True, "hers_returned": False}


async def test_embedded_session_forget_leaves_no_byte_of_that_session(tmp_path: Path) -> None:
    """A session Forget: with the bus log kept an hour (its records of the session stay), no byte of any file of
    the data folder, nor anything the remaining data keys open of the log, holds what was said in the session;
    the user's other session is still there."""
    from dataclasses import replace

    from acm.client import AcmClient
    from acm.v1 import common_pb2, gateway_pb2
    from acm_benchmarks.forget_residue import embedded_scanner
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
    from acm_cli.residue import embedded_residue

    rng = random.Random()
    gone, kept = pseudo_word(rng), pseudo_word(rng)
    data = tmp_path / "acm"
    acm = EmbeddedAcm(EmbeddedSettings(data_dir=data, listen_addr="127.0.0.1:0"))
    acm.urls = replace(acm.urls, bus=f"sqlite:///{data / 'bus.db'}?retention_s=3600")
    s1, s2 = (common_pb2.Scope(customer_id="acme", user_id="alice", session_id=s) for s in ("s1", "s2"))
    async with acm, AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as client:
        for where, word in ((s1, gone), (s2, kept)):
            accepted = await client.ingest(where, f"Please always ship my {word} order to the depot, I prefer it.")
            assert (await client.wait_job(where, accepted.job_id)).status == gateway_pb2.JOB_STATUS_DONE
        scan = embedded_scanner(data, acm)
        before = await scan(needles_for([gone]), ())
        assert (
            before["relational"] > 0 and before["bus"] > 0 and embedded_residue(data, needles_for([gone]))["bus"] == 0
        )
        job = await client.wait_job(s1, await client.forget(s1, "session"))
        assert job.status == gateway_pb2.JOB_STATUS_DONE, job.error
        for _ in range(40):  # the checkpoints follow the job within seconds
            after = await scan(needles_for([gone]), ())
            if not any(after.values()):
                break
            await asyncio.sleep(0.5)
        assert after == dict.fromkeys(after, 0), after
        still = await scan(needles_for([kept]), ())
        assert still["relational"] > 0 and still["bus"] > 0, still  # her other session: untouched


@pytest.mark.infra
async def test_distributed_forget_residue(
    postgres_dsn: str, kafka_bootstrap: str, neo4j_uri: str, redis_url: str, tmp_path: Path
) -> None:
    result = await distributed_forget_residue(postgres_dsn, kafka_bootstrap, neo4j_uri, redis_url, tmp_path)
    print(json.dumps(result))
    for level in LEVELS:
        found = result["residue"][level]
        assert result["before"][level]["postgres"] > 0, result
        assert (found["postgres"], found["neo4j"], found["redis"], found["vectors"]) == (0, 0, 0, 0), (level, found)
        assert result["kept"][level]["postgres"] > 0, result
    assert result["fetch"]["bob_after_alice_forgotten"] == {"his_statement_returned": True, "hers_returned": False}


# --- the pieces ---------------------------------------------------------------------------------------------


async def test_the_bus_log_prunes_what_every_group_consumed_and_zeroes_it(tmp_path: Path) -> None:
    word = pseudo_word(random.Random())
    needles = needles_for([word])
    path = tmp_path / "bus.db"
    got: list[Record] = []

    async def handler(record: Record) -> None:
        got.append(record)

    bus = EmbeddedBus(path, poll_interval_s=0.05, prune_every_s=0.0)
    bus.subscribe("t", "g1", handler)
    bus.subscribe("t", "g2", handler)
    await bus.start()
    try:
        await bus.publish("t", "k", f"the turn says {word}".encode())
        await bus.publish("dead.letters", "k", f"nobody reads {word}".encode())  # no consumer: kept (7 days)
        async with asyncio.timeout(10):
            while len(got) < 2 or scan_path(path.parent, needles) != 1:  # noqa: ASYNC110 (polls the file)
                await asyncio.sleep(0.05)
    finally:
        await bus.stop()
    assert scan_path(path.parent, needles) == 1  # the dead letter only: bus.db, its WAL and shm hold no other copy

    kept = EmbeddedBus(path, retention_s=3600.0)
    await kept.publish("t", "k", f"kept {word}".encode())
    kept.subscribe("t", "g1", handler)  # g2 has not read it: nothing is pruned while a group is behind
    assert kept.prune() == 0
    await kept.stop()


async def test_a_group_behind_or_a_retention_keeps_records(tmp_path: Path) -> None:
    clock = [1_700_000_000.0]
    bus = EmbeddedBus(tmp_path / "bus.db", retention_s=60.0, clock=lambda: clock[0])
    bus.subscribe("t", "g", lambda r: asyncio.sleep(0))
    await bus.publish("t", "k", b"one")
    bus._commit(bus._subscriptions[0], 1)  # consumed just now
    assert bus.prune() == 0  # retention: kept for 60 s after
    clock[0] += 61
    assert bus.prune() == 1
    await bus.stop()


async def test_a_kept_topic_keeps_what_its_groups_consumed(tmp_path: Path) -> None:
    """Dead letters: the gateway's index reading one does not delete the bytes an operator replays."""
    clock = [1_700_000_000.0]
    bus = EmbeddedBus(tmp_path / "bus.db", clock=lambda: clock[0], kept=lambda topic: topic == "dlq")
    bus.subscribe("dlq", "index", lambda r: asyncio.sleep(0))
    bus.subscribe("t", "g", lambda r: asyncio.sleep(0))
    await bus.publish("dlq", "k", b"letter")
    await bus.publish("t", "k", b"turn")
    for sub in bus._subscriptions:
        bus._commit(sub, 2)
    assert bus.prune() == 1  # the turn only
    clock[0] += 7 * 86400 + 1
    assert bus.prune() == 1  # the letter, after the unconsumed retention
    await bus.stop()


async def test_the_relational_store_forget_leaves_no_copy_in_the_file_its_wal_or_fts(tmp_path: Path) -> None:
    word = pseudo_word(random.Random())
    store = await SqliteStore.open(tmp_path / "acm.db")
    scope = Scope("c1", "acme", "alice", session_id="s1")
    other = Scope("c1", "acme", "bob", session_id="s1")
    at = datetime(2025, 1, 1, tzinfo=UTC)
    rows = [
        Memory(f"{i:032x}", s.owner(Tier.USER), f"{s.user_id} ships {word}", Layer.MID, "fact", ("t",), at)
        for i, s in enumerate((scope, other))
    ]
    await store.memories.upsert(rows)
    assert scan_path(tmp_path, needles_for([word])) > 0
    await store.memories.forget(scope, ForgetLevel.USER)
    assert [m.text for m in await store.memories.get(other, [r.memory_id for r in rows])] == [f"bob ships {word}"]
    await store.memories.forget(other, ForgetLevel.USER)
    # The text's rows, its FTS5 terms (shadow tables) and the WAL frames that held them: all gone.
    assert scan_path(tmp_path, needles_for([word])) == 0
    await store.close()


async def test_the_graph_forget_leaves_no_copy(tmp_path: Path) -> None:
    name = pseudo_word(random.Random(), capital=True)
    graph = SqliteGraphStore(tmp_path / "graph.db")
    scope = Scope("c1", "acme", "alice")
    await graph.upsert_entities([Entity(uuid.uuid4().hex, scope.owner(Tier.USER), name, "name", (name.lower(),))])
    assert scan_path(tmp_path, needles_for([name])) > 0
    await graph.forget(scope, ForgetLevel.USER)
    assert scan_path(tmp_path, needles_for([name])) == 0
    await graph.close()


async def test_the_vector_store_rewrites_its_segments_after_a_forget(tmp_path: Path) -> None:
    store = EdgeVectorStore(tmp_path / "vectors")
    await store.ensure(8)
    at = datetime(2025, 1, 1, tzinfo=UTC)
    gone, stays = Scope("c1", "acme", f"u{uuid.uuid4().hex[:10]}"), Scope("c1", "acme", "bob")

    def point(scope: Scope, i: int) -> VectorPoint:
        return VectorPoint(uuid.uuid4().hex, [float(i + 1)] * 8, scope.owner(Tier.USER), Layer.MID, at, "s1", "m")

    await store.upsert([point(gone, i) for i in range(30)] + [point(stays, i) for i in range(30)])
    await store.flush()
    assert scan_path(tmp_path / "vectors", needles_for([gone.user_id])) > 0
    await store.forget(gone, ForgetLevel.USER)
    assert scan_path(tmp_path, needles_for([gone.user_id])) == 0  # segments and WAL: the payloads are gone
    assert await store.count() == 30
    assert len(await store.search(stays, [1.0] * 8, 50, model="m")) == 30  # the rest still answers
    await store.close()
    reopened = EdgeVectorStore(tmp_path / "vectors")
    assert await reopened.count() == 30
    await reopened.close()


# --- acm forget --verify -------------------------------------------------------------------------------------


async def _acm(*args: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACM_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "acm_cli", *args, env=env, stdout=PIPE, stderr=STDOUT
    )
    out, _ = await proc.communicate()
    return int(proc.returncode or 0), out.decode(errors="replace")


async def test_acm_forget_verify_scans_the_data_folder_and_fails_on_what_is_left(tmp_path: Path) -> None:
    from acm.client import AcmClient
    from acm.v1 import common_pb2
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

    rng = random.Random()
    hers, his = pseudo_word(rng), pseudo_word(rng)
    data = tmp_path / "acm"
    async with EmbeddedAcm(EmbeddedSettings(data_dir=data, listen_addr="127.0.0.1:0")) as acm:
        addr = f"127.0.0.1:{acm.port}"
        async with AcmClient(addr, acm.api_key) as client:
            for user, word in (("alice", hers), ("bob", his)):
                scope = common_pb2.Scope(customer_id="acme", user_id=user, session_id="s1")
                accepted = await client.ingest(scope, f"Please always ship my {word} order to Lisbon, I prefer it.")
                await client.wait_job(scope, accepted.job_id)
        common = ["--addr", addr, "--data-dir", str(data), "-c", "acme", "-u", "alice", "--verify-timeout", "20"]
        code, out = await _acm("forget", *common, "--verify", hers)
        assert code == 0 and "erased" in out, out
        # bob's word is still there (alice's Forget does not touch him): --verify says so, exit 1.
        code, out = await _acm("forget", *common, "--verify", his, "--verify-timeout", "1")
        assert code == 1 and "not erased everywhere" in out, out
