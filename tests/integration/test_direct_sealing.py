"""Direct Kafka publishers seal their turns too (issue 18, docs/privacy.md "Direct publishers"), end to end on the
embedded log and on the real Kafka + Postgres (every service in one process over them, as test_sealed_bus.py):

- an agent key fetches its scope's data key with the SDK (GetSealingKey: kept until its valid_until, Ingest's
  rights: another customer's agent key and another client's admin key are refused), seals and signs a turn and
  publishes it to acm.turns.v1 itself; ingest opens it and stores the memory;
- the turn's words are in clear in no record; after the user's Forget a raw consumer reading every topic from
  the start finds them 0 times, in clear or opened with the keys that remain; a turn sealed afterwards with the
  kept (destroyed) key is skipped as forgotten, never dead-lettered; the scope's next key is a new one;
- with ACM_REQUIRE_SEALED_TURNS on, a clear direct turn goes to ingest's dead-letter topic with the reason, while
  a sealed one and a turn through the gateway are stored.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from acm import topics
from acm.adapters.embedded_bus import EmbeddedBus
from acm.auth import create_api_key, key_id_of
from acm.bootstrap import open_bus
from acm.client import AcmClient
from acm.domain.scope import Grant, KeyRole, Scope
from acm.envelopes import key_hash, sign
from acm.ownership import SERVICES
from acm.ports.bus import EventBus
from acm.sealing import SealingBus, seal_for_publishing
from acm.v1 import common_pb2, events_pb2
from acm_benchmarks.fleet_stack import create_database, drop_database
from acm_benchmarks.forget_residue import bus_opener, pseudo_word
from acm_cli.embedded import DEV_CLIENT, EmbeddedAcm, EmbeddedSettings
from acm_cli.residue import count, kafka_residue, needles_for
from acm_client import AsyncClient, PermissionDenied, SealingKey
from acm_client import Scope as SdkScope
from tests.integration.test_sealed_bus import forget_user, log_records, say
from tests.support.events import collect_dead_letters, turn_envelope

MODES = ["embedded", pytest.param("servers", marks=pytest.mark.infra)]


@dataclass
class Running:
    acm: EmbeddedAcm
    mode: str
    bus_url: str
    bus_file: Path

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.acm.port}"

    async def publish(self, key: str, value: bytes) -> None:
        """On acm.turns.v1 as an agent's own producer would (embedded: the process's log, the only writer)."""
        if self.mode == "embedded":
            assert isinstance(self.acm.bus, SealingBus)  # its inner log, past the process's sealing
            await self.acm.bus.inner.publish(topics.TURNS, key, value)
            return
        producer = open_bus(self.bus_url, client_id=f"direct-agent-{uuid.uuid4().hex[:6]}")
        try:
            await producer.publish(topics.TURNS, key, value)
        finally:
            await producer.stop()

    async def hits(self, needles: tuple[bytes, ...], opened: bool) -> int:
        """Occurrences in every record of every topic from the start: in clear, or (``opened``) in what the data
        keys that remain open of them."""
        opener = bus_opener(self.acm) if opened else None
        if self.mode == "servers":
            return await kafka_residue(self.bus_url, needles, opener=opener)
        records = log_records(self.bus_file)
        if opener is None:
            return count(b"".join(value for _, value in records), needles)
        return sum([count(await opener(topic, value), needles) for topic, value in records])

    def reader(self) -> EventBus:
        if self.mode == "servers":
            return open_bus(self.bus_url, client_id=f"dead-letter-reader-{uuid.uuid4().hex[:6]}")
        return EmbeddedBus(self.bus_file, poll_interval_s=0.1)


@asynccontextmanager
async def started(
    mode: str, tmp_path: Path, request: pytest.FixtureRequest, require_sealed_turns: bool = False
) -> AsyncIterator[Running]:
    data_dir = tmp_path / "acm"
    acm = EmbeddedAcm(
        EmbeddedSettings(
            data_dir=data_dir, listen_addr="127.0.0.1:0", prefetch=False, require_sealed_turns=require_sealed_turns
        )
    )
    bus_file = data_dir / "bus.db"
    if mode == "embedded":  # kept an hour: every record is still in the log when it is scanned
        acm.urls = replace(acm.urls, bus=f"sqlite:///{bus_file}?retention_s=3600")
        async with acm:
            yield Running(acm, mode, acm.urls.bus, bus_file)
        return
    database = create_database(request.getfixturevalue("postgres_dsn"))
    bus_url = f"kafka://{request.getfixturevalue('kafka_bootstrap')}?namespace=direct-{uuid.uuid4().hex[:8]}."
    acm.urls = replace(acm.urls, databases=dict.fromkeys(SERVICES, database), bus=bus_url)
    try:
        async with acm:
            yield Running(acm, mode, bus_url, bus_file)
    finally:
        drop_database(database)


async def key_for(acm: EmbeddedAcm, grant: Grant, client: str = DEV_CLIENT) -> str:
    _, secret = await create_api_key(acm.stores["gateway"].api_keys, client, f"direct {grant.role}", grant)
    return secret


async def agent_key(acm: EmbeddedAcm, customer: str, client: str = DEV_CLIENT, role: KeyRole = KeyRole.AGENT) -> str:
    return await key_for(acm, Grant(role, (customer,) if role is KeyRole.AGENT else ()), client)


def sdk_scope(user: str) -> SdkScope:
    return SdkScope(customer_id="acme", user_id=user, agent_id="helpdesk", session_id="s1")


def domain_scope(user: str) -> Scope:
    return Scope(DEV_CLIENT, "acme", user, "helpdesk", "s1")


def pb_scope(user: str) -> common_pb2.Scope:
    return common_pb2.Scope(
        client_id=DEV_CLIENT, customer_id="acme", user_id=user, agent_id="helpdesk", session_id="s1"
    )


def direct_turn(
    user: str, text: str, agent: str, key: SealingKey | None, now: datetime | None = None
) -> events_pb2.Envelope:
    """A turn as an agent publishes it itself: sealed with ``key`` (None: left clear), then signed with its key."""
    marker = uuid.uuid4().hex[:8]
    env = turn_envelope(domain_scope(user), text, f"t-{marker}", f"j-{marker}")
    if key is not None:
        seal_for_publishing(env, key.key_id, key.secret, key.valid_until, now)
    sign(env, key_id_of(agent), key_hash(agent))
    return env


async def wait_stored(sdk: AsyncClient, user: str, word: str, timeout_s: float = 60.0) -> None:
    async with asyncio.timeout(timeout_s):
        # A memory has no event to wait on from here: it is polled.
        while word not in await memory_texts(sdk, user):  # noqa: ASYNC110
            await asyncio.sleep(0.2)


async def memory_texts(sdk: AsyncClient, user: str) -> str:
    page = await sdk.list_memories(sdk_scope(user))
    return "\n".join(m.memory.text for m in page.memories)


@pytest.mark.parametrize("mode", MODES)
async def test_a_direct_publisher_seals_its_turn_and_a_forget_shreds_it(
    mode: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    rng = random.Random()
    word, late_word, bob_word = pseudo_word(rng), pseudo_word(rng), pseudo_word(rng)
    async with started(mode, tmp_path, request) as run:
        agent = await agent_key(run.acm, "acme")
        async with AsyncClient(run.addr, agent) as sdk:
            before = datetime.now(UTC)
            key = await sdk.sealing_key(sdk_scope("alice"))
            assert before < key.valid_until <= datetime.now(UTC) + timedelta(seconds=61)
            assert await sdk.sealing_key(sdk_scope("alice")) is key  # kept until shortly before valid_until
            assert len(key.secret) == 32
            with pytest.raises(PermissionDenied):  # the agent key's grant names acme only
                await sdk.get_sealing_key(SdkScope(customer_id="globex", user_id="alice", session_id="s1"))
        async with AsyncClient(run.addr, await agent_key(run.acm, "globex")) as other_customer:
            with pytest.raises(PermissionDenied):
                await other_customer.get_sealing_key(sdk_scope("alice"))
        other_client = await agent_key(run.acm, "", f"other-{uuid.uuid4().hex[:6]}", KeyRole.ADMIN)
        async with AsyncClient(run.addr, other_client) as other_admin:
            with pytest.raises(PermissionDenied):
                await other_admin.get_sealing_key(SdkScope(client_id=DEV_CLIENT, customer_id="acme", user_id="alice"))

        env = direct_turn("alice", f"Please ship my {word} order to the office.", agent, key)
        await run.publish(domain_scope("alice").session_key, env.SerializeToString())
        async with AsyncClient(run.addr, agent) as sdk:
            await wait_stored(sdk, "alice", word)
            needles = needles_for([word])
            assert await run.hits(needles, opened=False) == 0  # sealed on the topic, and in ingest's memories event
            assert await run.hits(needles, opened=True) > 0

            async with AcmClient(run.addr, run.acm.api_key) as admin:
                await forget_user(admin, pb_scope("alice"))
            assert await run.hits(needles, opened=False) == 0
            assert await run.hits(needles, opened=True) == 0  # its key is destroyed: nothing of it opens

            # A publisher that kept the destroyed key (within its valid_until): that turn is forgotten with alice.
            late = direct_turn(
                "alice", f"Also ship the {late_word} parts.", agent, key, key.valid_until - timedelta(seconds=1)
            )
            await run.publish(domain_scope("alice").session_key, late.SerializeToString())
            # Then bob's, on the same partition: once it is stored, ingest has been past alice's late turn.
            bob = direct_turn(
                "bob", f"Please ship my {bob_word} order home.", agent, await sdk.sealing_key(sdk_scope("bob"))
            )
            await run.publish(domain_scope("alice").session_key, bob.SerializeToString())
            await wait_stored(sdk, "bob", bob_word)
            assert late_word not in await memory_texts(sdk, "alice")
            # Its event id only in the record itself: no dead letter holds a copy of it.
            assert await run.hits((late.event_id.encode(),), opened=False) == 1
            fresh = await sdk.get_sealing_key(sdk_scope("alice"))
            assert fresh.key_id != key.key_id  # the forgotten scope's next key is a new one


@pytest.mark.parametrize("mode", MODES)
async def test_with_sealed_turns_required_a_clear_direct_turn_is_dead_lettered(
    mode: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    rng = random.Random()
    clear_word, sealed_word = pseudo_word(rng), pseudo_word(rng)
    async with started(mode, tmp_path, request, require_sealed_turns=True) as run:
        agent = await agent_key(run.acm, "acme")
        clear = direct_turn("alice", f"Please ship my {clear_word} order to the office.", agent, None)
        await run.publish(domain_scope("alice").session_key, clear.SerializeToString())
        async with AsyncClient(run.addr, agent) as sdk:
            key = await sdk.sealing_key(sdk_scope("alice"))
            sealed = direct_turn("alice", f"Please ship my {sealed_word} order to the depot.", agent, key)
            await run.publish(domain_scope("alice").session_key, sealed.SerializeToString())
            await wait_stored(sdk, "alice", sealed_word)
            async with AcmClient(run.addr, run.acm.api_key) as admin:  # the gateway seals what it publishes
                await say(admin, pb_scope("alice"), "Please also send the invoice.")
            letters = await collect_dead_letters(
                run.reader(),
                topics.dead_letter("ingest"),
                f"test-{uuid.uuid4().hex}",
                lambda found: any(letter.event_id == clear.event_id for letter in found),
                30,
            )
            reasons = [letter.reason for letter in letters if letter.event_id == clear.event_id]
            assert reasons and "ACM_REQUIRE_SEALED_TURNS" in reasons[0], reasons
            assert clear_word not in await memory_texts(sdk, "alice")
