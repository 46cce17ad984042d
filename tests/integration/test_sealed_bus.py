"""Crypto-shredding of the bus (acm.sealing, docs/privacy.md), end to end:

- embedded: with the log kept (retention), a turn's words are in no byte of the log, yet the gateway's data
  keys open them; after the user's Forget nothing that remains opens to them, while another user's still do;
- distributed, on the real Kafka and Postgres: a raw consumer reading every topic of the run from the start
  finds the subject's words in clear 0 times, and after a user Forget cannot open a single one of the
  subject's sealed records (their data key is gone from Postgres);
- a session Forget destroys that session's key only: on the embedded log and on Kafka the session's records
  are still there and open to nothing, while the user's other session and another user still open;
- a master-key rotation (`acm keys rotate-master`), embedded and over Postgres + Kafka: records sealed before
  it open with the new master key, the old one opens none of them, and ACM goes on after it;
- the gateway's internal Keys API serves data keys to the other services (a service token), and a destroyed
  key is not served again.
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import sys
import uuid
from asyncio.subprocess import PIPE, STDOUT
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import grpc
import pytest

from acm.adapters.data_keys_sql import SqlDataKeyRepo
from acm.adapters.grpc_keys import GrpcKeyring
from acm.bootstrap import open_relational
from acm.client import AcmClient
from acm.domain.errors import Unavailable
from acm.ownership import SERVICES
from acm.sealing import MasterKeyMissing, StoreKeyring, master_id, master_key_bytes, new_master_key, readable_bytes
from acm.v1 import common_pb2, events_pb2, gateway_pb2, keys_pb2_grpc
from acm_benchmarks.fleet_stack import create_database, drop_database
from acm_benchmarks.forget_residue import bus_opener, pseudo_word
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_cli.residue import count, kafka_residue, needles_for
from acm_gateway.keys_api import KeysServicer

SECRET = f"sealing-{uuid.uuid4().hex}"


def scope(client: str, user: str, session: str = "s1") -> common_pb2.Scope:
    return common_pb2.Scope(client_id=client, customer_id="acme", user_id=user, agent_id="helpdesk", session_id=session)


async def say(acm_client: AcmClient, where: common_pb2.Scope, text: str) -> None:
    accepted = await acm_client.ingest(where, text)
    job = await acm_client.wait_job(where, accepted.job_id, timeout_s=60)
    assert job.status == gateway_pb2.JOB_STATUS_DONE, job.error


async def forget_user(acm_client: AcmClient, where: common_pb2.Scope, level: str = "user") -> None:
    job_id = await acm_client.forget(where, level)
    job = await acm_client.wait_job(where, job_id, timeout_s=60)
    assert job.status == gateway_pb2.JOB_STATUS_DONE, job.error


def acm_on_servers(database: str, kafka_bootstrap: str, tmp_path: Path) -> tuple[EmbeddedAcm, str]:
    """Every service in one process over Postgres (``database``) and Kafka (a namespace of its own); its URL."""
    bus_url = f"kafka://{kafka_bootstrap}?namespace=sealed-{uuid.uuid4().hex[:8]}."
    acm = EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0"))
    acm.urls = replace(acm.urls, databases=dict.fromkeys(SERVICES, database), bus=bus_url)
    return acm, bus_url


def log_records(bus_file: Path) -> list[tuple[str, bytes]]:
    with closing(sqlite3.connect(f"file:{bus_file}?mode=ro", uri=True)) as conn:
        return [(t, bytes(v)) for t, v in conn.execute("SELECT topic, value FROM records")]


async def opened_hits(acm: EmbeddedAcm, records: list[tuple[str, bytes]], needles: tuple[bytes, ...]) -> int:
    opened = bus_opener(acm)  # the keys the gateway's store holds now
    return sum([count(await opened(topic, value), needles) for topic, value in records])


def sealed_turns_of(records: list[tuple[str, bytes]], user: str) -> list[events_pb2.Envelope]:
    envs = [events_pb2.Envelope.FromString(v) for t, v in records if t.endswith("acm.turns.v1")]
    return [e for e in envs if e.scope.user_id == user and e.sealed]


async def test_embedded_log_holds_only_sealed_bodies_and_a_forget_shreds_them(tmp_path: Path) -> None:
    rng = random.Random()
    alice_word, bob_word = pseudo_word(rng), pseudo_word(rng)
    data_dir = tmp_path / "acm"
    acm = EmbeddedAcm(EmbeddedSettings(data_dir=data_dir, listen_addr="127.0.0.1:0"))
    # Kept an hour: the log still holds every record when it is scanned (by default consumed records go at once).
    acm.urls = replace(acm.urls, bus=f"sqlite:///{data_dir / 'bus.db'}?retention_s=3600")
    async with acm, AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as client:
        alice, bob = scope("local", "alice"), scope("local", "bob")
        await say(client, alice, f"Please ship my {alice_word} order to the office.")
        await say(client, bob, f"Please ship my {bob_word} order to my home.")
        records = log_records(data_dir / "bus.db")
        raw = b"".join(v for _, v in records)
        assert count(raw, needles_for([alice_word, bob_word])) == 0  # in clear nowhere in the log
        assert await opened_hits(acm, records, needles_for([alice_word])) > 0  # but sealed there
        assert sealed_turns_of(records, "alice")

        await forget_user(client, alice)
        records = log_records(data_dir / "bus.db")
        assert sealed_turns_of(records, "alice")  # her records are still in the log (retention) ...
        assert await opened_hits(acm, records, needles_for([alice_word])) == 0  # ... and open to nothing
        assert await opened_hits(acm, records, needles_for([bob_word])) > 0  # bob's key is untouched
        # And bob's next turn still goes through (the sealed path works after a Forget).
        await say(client, bob, "Also ship the spare parts.")


@pytest.mark.infra
async def test_kafka_after_a_user_forget_holds_nothing_that_opens(
    postgres_dsn: str, kafka_bootstrap: str, tmp_path: Path
) -> None:
    rng = random.Random()
    alice_word, bob_word = pseudo_word(rng), pseudo_word(rng)
    database = create_database(postgres_dsn)
    acm, bus_url = acm_on_servers(database, kafka_bootstrap, tmp_path)
    try:
        async with acm, AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as client:
            alice, bob = scope("local", "alice"), scope("local", "bob")
            await say(client, alice, f"Please ship my {alice_word} order to the office.")
            await say(client, bob, f"Please ship my {bob_word} order to my home.")
            both = needles_for([alice_word, bob_word])
            assert await kafka_residue(bus_url, both) == 0  # a raw consumer from the start: nothing in clear
            assert await kafka_residue(bus_url, needles_for([alice_word]), opener=bus_opener(acm)) > 0

            await forget_user(client, alice)
            assert await kafka_residue(bus_url, both) == 0
            assert await kafka_residue(bus_url, needles_for([alice_word]), opener=bus_opener(acm)) == 0
            assert await kafka_residue(bus_url, needles_for([bob_word]), opener=bus_opener(acm)) > 0
    finally:
        drop_database(database)


@pytest.fixture
async def keys_gateway(postgres_dsn: str) -> AsyncIterator[tuple[str, StoreKeyring]]:
    """The gateway's internal Keys API over its store's data keys (a service token on every call)."""
    database = create_database(postgres_dsn)
    rel = await open_relational(database, service="gateway")
    data_keys = StoreKeyring(SqlDataKeyRepo.of(rel), master_key_bytes(new_master_key()))
    server = grpc.aio.server()
    keys_pb2_grpc.add_KeysServicer_to_server(KeysServicer(rel.api_keys, SECRET, data_keys=data_keys), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}", data_keys
    finally:
        await server.stop(None)
        await rel.close()
        drop_database(database)


@pytest.mark.infra
async def test_services_get_data_keys_from_the_gateway_and_never_a_destroyed_one(
    keys_gateway: tuple[str, StoreKeyring],
) -> None:
    addr, data_keys = keys_gateway
    owner = (f"c-{uuid.uuid4().hex[:6]}", "acme", "alice", "s1")
    async with grpc.aio.insecure_channel(addr) as channel:
        ring = GrpcKeyring(channel, 2.0, ttl_s=0.0, service_token_secret=SECRET)
        made = await ring.current(owner)
        assert made == await data_keys.current(owner)  # the gateway's own key, made on first use
        assert await ring.by_id(owner, made.key_id) == made
        assert await ring.by_id((owner[0], "acme", "bob", "s1"), made.key_id) is None  # another owner's id: no key
        assert await data_keys.destroy((owner[0], "acme", "", "")) == 1  # a customer Forget
        assert await ring.by_id(owner, made.key_id) is None
        assert (await ring.current(owner)).key_id != made.key_id  # a new key from then on

        wrong = GrpcKeyring(channel, 2.0, ttl_s=0.0, service_token_secret="not-the-secret")
        with pytest.raises(Unavailable):
            await wrong.current(owner)


async def test_the_distributed_gateway_refuses_to_start_without_a_master_key() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACM_")}
    env.update(
        ACM_DATABASE_URL="postgresql://nobody@127.0.0.1:9/none",
        ACM_BUS_URL="kafka://127.0.0.1:9",
        ACM_RETRIEVE_ADDR="127.0.0.1:9",
        ACM_ARCHITECT_ADDR="127.0.0.1:9",
        ACM_CACHE_URL="memory://",
    )
    for master, said in (("", "ACM_MASTER_KEY is required"), ("c2hvcnQ=", "must be 32 bytes")):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "acm_gateway", env={**env, "ACM_MASTER_KEY": master}, stdout=PIPE, stderr=STDOUT
        )
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
        assert proc.returncode != 0 and said in out.decode(), out.decode()
        assert "c2hvcnQ" not in out.decode()  # the value is never printed


Hits = Callable[[tuple[bytes, ...], bool], Awaitable[int]]  # (needles, opened with the remaining keys?) → hits


async def session_forget_shreds_that_session_only(client: AcmClient, hits: Hits) -> None:
    """alice says one word in s1, another in s2, bob a third in s1; after the Forget of alice's s1 nothing of
    s1 opens, and her s2 and bob still do; nothing was ever in clear."""
    rng = random.Random()
    s1_word, s2_word, bob_word = pseudo_word(rng), pseudo_word(rng), pseudo_word(rng)
    s1, s2, bob = scope("local", "alice", "s1"), scope("local", "alice", "s2"), scope("local", "bob", "s1")
    await say(client, s1, f"Please ship my {s1_word} order to the office.")
    await say(client, s2, f"Please ship my {s2_word} order to the depot.")
    await say(client, bob, f"Please ship my {bob_word} order to my home.")
    every = needles_for([s1_word, s2_word, bob_word])
    assert await hits(every, False) == 0  # in clear nowhere
    assert await hits(needles_for([s1_word]), True) > 0  # but sealed there
    await forget_user(client, s1, "session")
    assert await hits(every, False) == 0
    assert await hits(needles_for([s1_word]), True) == 0
    assert await hits(needles_for([s2_word]), True) > 0  # her other session's key is untouched
    assert await hits(needles_for([bob_word]), True) > 0
    await say(client, s1, "Also ship the spare parts.")  # the session goes on, under a new key


async def test_embedded_log_after_a_session_forget_opens_nothing_of_that_session(tmp_path: Path) -> None:
    data_dir = tmp_path / "acm"
    acm = EmbeddedAcm(EmbeddedSettings(data_dir=data_dir, listen_addr="127.0.0.1:0"))
    acm.urls = replace(acm.urls, bus=f"sqlite:///{data_dir / 'bus.db'}?retention_s=3600")

    async def hits(needles: tuple[bytes, ...], opened: bool) -> int:
        records = log_records(data_dir / "bus.db")
        return await opened_hits(acm, records, needles) if opened else count(b"".join(v for _, v in records), needles)

    async with acm, AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as client:
        await session_forget_shreds_that_session_only(client, hits)
        records = log_records(data_dir / "bus.db")
        s1 = {e.data_key_id for e in sealed_turns_of(records, "alice") if e.scope.session_id == "s1"}
        s2 = {e.data_key_id for e in sealed_turns_of(records, "alice") if e.scope.session_id == "s2"}
        assert len(s1) == 2 and len(s2) == 1 and not s1 & s2  # its turns before and after the Forget: two keys


@pytest.mark.infra
async def test_kafka_after_a_session_forget_opens_nothing_of_that_session(
    postgres_dsn: str, kafka_bootstrap: str, tmp_path: Path
) -> None:
    database = create_database(postgres_dsn)
    acm, bus_url = acm_on_servers(database, kafka_bootstrap, tmp_path)

    async def hits(needles: tuple[bytes, ...], opened: bool) -> int:
        return await kafka_residue(bus_url, needles, opener=bus_opener(acm) if opened else None)

    try:
        async with acm, AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as client:
            await session_forget_shreds_that_session_only(client, hits)
    finally:
        drop_database(database)


async def rotate(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """`acm keys rotate-master ARGS` in a process of its own: exit code and output."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ACM_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "acm_cli", "keys", "rotate-master", *args,
        env={**clean, **(env or {})}, stdout=PIPE, stderr=STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode is not None
    return proc.returncode, " ".join(out.decode().split())  # one line: the console wraps long ones


async def opened_with(
    keys: StoreKeyring, records: list[tuple[str, bytes]], needles: tuple[bytes, ...]
) -> tuple[int, int]:
    """(hits of ``needles`` in what ``keys`` open of the sealed records, records whose data key they cannot unwrap)."""
    found = refused = 0
    for topic, value in records:
        try:
            found += count(await readable_bytes(value, keys, topic), needles)
        except MasterKeyMissing:
            refused += 1
    return found, refused


async def test_embedded_master_key_rotation_end_to_end(tmp_path: Path) -> None:
    word = pseudo_word(random.Random())
    data_dir = tmp_path / "acm"
    acm = EmbeddedAcm(EmbeddedSettings(data_dir=data_dir, listen_addr="127.0.0.1:0"))
    acm.urls = replace(acm.urls, bus=f"sqlite:///{data_dir / 'bus.db'}?retention_s=3600")
    async with acm, AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as client:
        for user in ("alice", "bob"):
            await say(client, scope("local", user), f"Please ship my {word} order to the office.")
        code, out = await rotate("--data-dir", str(data_dir))
        assert code == 2 and "in use" in out, out  # never under a running process: it holds the old key
    old = master_key_bytes((data_dir / "master.key").read_text())

    code, out = await rotate("--data-dir", str(data_dir), "--batch", "1")
    assert code == 0 and "re-wrapped 2 data keys; 0 left" in out and "re-wrapped 1 of 2" in out, out
    new = master_key_bytes((data_dir / "master.key").read_text())
    assert new != old and not (data_dir / "master.key.next").exists()

    records = log_records(data_dir / "bus.db")
    rel = await open_relational(f"sqlite:///{data_dir / 'gateway.db'}", service="gateway")
    try:
        repo = SqlDataKeyRepo.of(rel)
        found, refused = await opened_with(StoreKeyring(repo, new), records, needles_for([word]))
        assert found > 0 and refused == 0
        found, refused = await opened_with(StoreKeyring(repo, old), records, needles_for([word]))
        assert found == 0 and refused == len([v for _, v in records if events_pb2.Envelope.FromString(v).sealed])
    finally:
        await rel.close()
    again = EmbeddedAcm(EmbeddedSettings(data_dir=data_dir, listen_addr="127.0.0.1:0"))
    async with again, AcmClient(f"127.0.0.1:{again.port}", again.api_key) as client:  # goes on with the new key
        await say(client, scope("local", "alice"), "Also ship the spare parts.")
        await say(client, scope("local", "carol"), "Please ship my parcel.")


@pytest.mark.infra
async def test_master_key_rotation_over_postgres_and_kafka(
    postgres_dsn: str, kafka_bootstrap: str, tmp_path: Path
) -> None:
    word = pseudo_word(random.Random())
    database = create_database(postgres_dsn)
    acm, bus_url = acm_on_servers(database, kafka_bootstrap, tmp_path)
    try:
        async with acm, AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as client:
            for user in ("alice", "bob", "carol"):
                await say(client, scope("local", user), f"Please ship my {word} order to the office.")
        old_text = (tmp_path / "acm" / "master.key").read_text().strip()
        new_text = new_master_key()
        rotating = {"ACM_MASTER_KEY": new_text, "ACM_MASTER_KEY_PREVIOUS": old_text}
        code, out = await rotate("--database-url", database, env={"ACM_MASTER_KEY": new_text})
        assert code == 1 and "not configured" in out, out  # without the old key it cannot unwrap: says so
        code, out = await rotate("--database-url", database, env=rotating)
        assert code == 0 and "re-wrapped 3 data keys; 0 left" in out, out
        assert "ACM_MASTER_KEY_PREVIOUS" in out  # what to do next
        code, out = await rotate("--database-url", database, env=rotating)
        assert code == 0 and "re-wrapped 0 data keys; 0 left" in out, out  # run again: nothing to do

        rel = await open_relational(database, service="gateway")
        try:
            repo = SqlDataKeyRepo.of(rel)
            new, old = StoreKeyring(repo, master_key_bytes(new_text)), StoreKeyring(repo, master_key_bytes(old_text))
            needles = needles_for([word])

            async def with_old(topic: str, value: bytes) -> bytes:
                try:
                    return await readable_bytes(value, old, topic)
                except MasterKeyMissing:
                    return b""

            async def with_new(topic: str, value: bytes) -> bytes:
                return await readable_bytes(value, new, topic)

            assert await kafka_residue(bus_url, needles, opener=with_new) > 0  # sealed before: opens
            assert await kafka_residue(bus_url, needles, opener=with_old) == 0  # the old master: nothing
            wrapped_by = {r["master_id"] for r in await rel._handle.executor.fetch("SELECT master_id FROM data_keys")}  # type: ignore[attr-defined]
            assert wrapped_by == {master_id(master_key_bytes(new_text))}
        finally:
            await rel.close()
    finally:
        drop_database(database)
