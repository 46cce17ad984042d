"""Crypto-shredding of the bus (acm.sealing, docs/privacy.md), end to end:

- embedded: with the log kept (retention), a turn's words are in no byte of the log, yet the gateway's data
  keys open them; after the user's Forget nothing that remains opens to them, while another user's still do;
- distributed, on the real Kafka and Postgres: a raw consumer reading every topic of the run from the start
  finds the subject's words in clear 0 times, and after a user Forget cannot open a single one of the
  subject's sealed records (their data key is gone from Postgres);
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
from collections.abc import AsyncIterator
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
from acm.sealing import StoreKeyring, master_key_bytes, new_master_key
from acm.v1 import common_pb2, events_pb2, gateway_pb2, keys_pb2_grpc
from acm_benchmarks.fleet_stack import create_database, drop_database
from acm_benchmarks.forget_residue import bus_opener, pseudo_word
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_cli.residue import count, kafka_residue, needles_for
from acm_gateway.keys_api import KeysServicer

SECRET = f"sealing-{uuid.uuid4().hex}"


def scope(client: str, user: str) -> common_pb2.Scope:
    return common_pb2.Scope(client_id=client, customer_id="acme", user_id=user, agent_id="helpdesk", session_id="s1")


async def say(acm_client: AcmClient, where: common_pb2.Scope, text: str) -> None:
    accepted = await acm_client.ingest(where, text)
    job = await acm_client.wait_job(where, accepted.job_id, timeout_s=60)
    assert job.status == gateway_pb2.JOB_STATUS_DONE, job.error


async def forget_user(acm_client: AcmClient, where: common_pb2.Scope) -> None:
    job_id = await acm_client.forget(where, "user")
    job = await acm_client.wait_job(where, job_id, timeout_s=60)
    assert job.status == gateway_pb2.JOB_STATUS_DONE, job.error


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
    bus_url = f"kafka://{kafka_bootstrap}?namespace=sealed-{uuid.uuid4().hex[:8]}."
    acm = EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0"))
    acm.urls = replace(acm.urls, databases=dict.fromkeys(SERVICES, database), bus=bus_url)
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
