"""A direct publisher's key acts only within its rights (issue 18 item 4, docs/security.md "Direct publishers"), on
the embedded log and on the real Kafka + Postgres (every service in one process over them, as
test_direct_sealing.py):

- an agent key of customer acme publishing a turn for customer globex straight to acm.turns.v1: ingest's dead-letter
  topic gets it with a reason naming the key and the customer, ingest's audit log a `request.denied`, and globex
  has no memory of it;
- an agent key naming only user alice, publishing for bob of its own customer: the same, naming the user;
- the same agent key publishing for its own customer, and an admin key publishing for any customer: stored;
- the agent key's turn through the gateway (signed with that key, already checked there): stored, not denied again;
- Forget events published straight to acm.forget.v1 by an agent key: for another customer, or for its whole
  customer, dead-lettered with the reason and nothing erased; the same key's Forget of its own user through the
  gateway erases that user;
- memory edits published straight to acm.memory.edits.v1: an agent key's update of a customer-tier memory, and an
  import of a customer-tier memory, dead-lettered with the reason and nothing changed; the agent key's delete of
  its user's own memory and the admin key's of the shared one applied;
- distributed wiring: a consumer learns the key's rights over the gateway's Keys API and applies the same rule.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from pathlib import Path

import grpc
import pytest

from acm import topics
from acm.adapters.grpc_keys import CachedKeySource, GrpcKeySource
from acm.auth import create_api_key, key_id_of, verify_envelope
from acm.bootstrap import open_bus, open_relational
from acm.client import AcmClient
from acm.convert import scope_from_pb
from acm.domain.models import Layer, Memory, MemoryStatus, utcnow
from acm.domain.scope import Action, Grant, KeyRole, Scope, Tier
from acm.envelopes import envelope, key_hash, sign
from acm.memory_wire import stored_to_pb
from acm.ports.bus import PermanentError
from acm.sealing import SealingBus
from acm.v1 import common_pb2, events_pb2
from acm_benchmarks.forget_residue import pseudo_word
from acm_cli.embedded import DEV_CLIENT
from acm_client import AsyncClient
from acm_client import Scope as SdkScope
from tests.integration import test_owner_apis
from tests.integration.test_direct_sealing import MODES, Running, key_for, started
from tests.integration.test_owner_apis import SECRET, Gateway
from tests.integration.test_sealed_bus import forget_user, say
from tests.support.events import collect_dead_letters, turn_envelope

# The gateway serving its Keys API over real gRPC and Postgres, as in test_owner_apis.
database = test_owner_apis.database
gateway = test_owner_apis.gateway


def scope(customer: str, user: str) -> Scope:
    return Scope(DEV_CLIENT, customer, user, "helpdesk", "s1")


async def publish_turn(run: Running, secret: str, where: Scope, text: str) -> events_pb2.Envelope:
    """A clear turn signed with ``secret`` and published to acm.turns.v1 as an agent's own producer would."""
    marker = uuid.uuid4().hex[:8]
    return await publish_direct(run, topics.TURNS, turn_envelope(where, text, f"t-{marker}", f"j-{marker}"), secret)


async def publish_direct(run: Running, topic: str, env: events_pb2.Envelope, secret: str) -> events_pb2.Envelope:
    """``env`` signed with ``secret`` and published to ``topic`` by the agent itself, past the gateway."""
    sign(env, key_id_of(secret), key_hash(secret))
    where = scope_from_pb(env.scope)
    if run.mode == "embedded":
        assert isinstance(run.acm.bus, SealingBus)  # its inner log, as the process's only writer
        await run.acm.bus.inner.publish(topic, where.session_key, env.SerializeToString())
        return env
    producer = open_bus(run.bus_url, client_id=f"direct-agent-{uuid.uuid4().hex[:6]}")
    try:
        await producer.publish(topic, where.session_key, env.SerializeToString())
    finally:
        await producer.stop()
    return env


async def publish_forget(
    run: Running, secret: str, where: Scope, level: events_pb2.ForgetLevel.ValueType
) -> events_pb2.Envelope:
    env = envelope(where)
    env.forget_requested.job_id = f"j-{uuid.uuid4().hex[:8]}"
    env.forget_requested.level = level
    return await publish_direct(run, topics.FORGET, env, secret)


def memory_edit(where: Scope) -> events_pb2.Envelope:
    """An envelope with an empty memory edit: set one of update, delete or imported on it."""
    env = envelope(where)
    env.memory_edit_requested.job_id = f"j-{uuid.uuid4().hex[:8]}"
    return env


async def memory_texts(admin: AsyncClient, where: Scope) -> str:
    sdk_scope = SdkScope(customer_id=where.customer_id, user_id=where.user_id, agent_id="helpdesk", session_id="s1")
    page = await admin.list_memories(sdk_scope)
    return "\n".join(m.memory.text for m in page.memories)


async def wait_stored(admin: AsyncClient, where: Scope, word: str, timeout_s: float = 60.0) -> None:
    async with asyncio.timeout(timeout_s):
        # A memory has no event to wait on from here: it is polled.
        while word not in await memory_texts(admin, where):  # noqa: ASYNC110
            await asyncio.sleep(0.2)


async def dead_letter_reasons(run: Running, events: list[events_pb2.Envelope]) -> dict[str, str]:
    """The reasons ingest's dead-letter topic gives for ``events``, by event id (waits until each has one)."""
    wanted = {env.event_id for env in events}
    letters = await collect_dead_letters(
        run.reader(),
        topics.dead_letter("ingest"),
        f"test-{uuid.uuid4().hex}",
        lambda found: wanted <= {letter.event_id for letter in found},
        60,
    )
    return {letter.event_id: letter.reason for letter in letters if letter.event_id in wanted}


@pytest.mark.parametrize("mode", MODES)
async def test_a_direct_publishers_key_writes_only_where_its_grant_allows(
    mode: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    rng = random.Random()
    words = {name: pseudo_word(rng) for name in ("other_customer", "other_user", "own", "admin", "gateway")}
    async with started(mode, tmp_path, request) as run:
        agent = await key_for(run.acm, Grant(KeyRole.AGENT, ("acme",)))
        alice_only = await key_for(run.acm, Grant(KeyRole.AGENT, ("acme",), ("alice",)))
        admin = await key_for(run.acm, Grant(KeyRole.ADMIN))

        denied_customer = await publish_turn(
            run, agent, scope("globex", "bob"), f"Please ship my {words['other_customer']} order to the office."
        )
        denied_user = await publish_turn(
            run, alice_only, scope("acme", "bob"), f"Please ship my {words['other_user']} order to the depot."
        )
        reasons = await dead_letter_reasons(run, [denied_customer, denied_user])
        assert f"key {key_id_of(agent)} may not ingest for customer 'globex'" in reasons[denied_customer.event_id]
        assert "acts only for customer 'acme'" in reasons[denied_customer.event_id]
        assert (
            f"key {key_id_of(alice_only)} may not ingest for customer 'acme', user 'bob'"
            in reasons[denied_user.event_id]
        )
        assert "acts only for user 'alice'" in reasons[denied_user.event_id]

        await publish_turn(run, agent, scope("acme", "alice"), f"Please ship my {words['own']} order home.")
        await publish_turn(run, admin, scope("globex", "bob"), f"Please ship my {words['admin']} order home.")
        async with AsyncClient(run.addr, admin) as reader:
            await wait_stored(reader, scope("acme", "alice"), words["own"])
            await wait_stored(reader, scope("globex", "bob"), words["admin"])
            assert words["other_customer"] not in await memory_texts(reader, scope("globex", "bob"))
            assert words["other_user"] not in await memory_texts(reader, scope("acme", "bob"))

            # Through the gateway the turn is signed with the caller's key, checked there: ingest stores it too.
            pb = common_pb2.Scope(customer_id="acme", user_id="alice", agent_id="helpdesk", session_id="s1")
            async with AcmClient(run.addr, agent) as through_gateway:
                await say(through_gateway, pb, f"Please ship my {words['gateway']} order to the shop.")
            await wait_stored(reader, scope("acme", "alice"), words["gateway"])

        audit = await run.acm.stores["ingest"].audit.list(scope("acme", "alice"), 100)
        denied = [e.detail for e in audit if e.action == "request.denied"]
        assert any(key_id_of(agent) in d and denied_customer.event_id in d for d in denied), denied
        assert any(key_id_of(alice_only) in d and denied_user.event_id in d for d in denied), denied
        assert not any(e.action == "event.rejected" for e in audit)  # every signature verified


@pytest.mark.parametrize("mode", MODES)
async def test_a_direct_forget_erases_only_where_its_key_may_forget(
    mode: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    rng = random.Random()
    globex_word, alice_word = pseudo_word(rng), pseudo_word(rng)
    async with started(mode, tmp_path, request) as run:
        agent = await key_for(run.acm, Grant(KeyRole.AGENT, ("acme",)))
        admin = await key_for(run.acm, Grant(KeyRole.ADMIN))
        await publish_turn(run, admin, scope("globex", "bob"), f"Please ship my {globex_word} order home.")
        await publish_turn(run, admin, scope("acme", "alice"), f"Please ship my {alice_word} order home.")
        async with AsyncClient(run.addr, admin) as reader:
            await wait_stored(reader, scope("globex", "bob"), globex_word)
            await wait_stored(reader, scope("acme", "alice"), alice_word)

            other_customer = await publish_forget(run, agent, scope("globex", "bob"), events_pb2.FORGET_LEVEL_USER)
            whole_customer = await publish_forget(run, agent, scope("acme", "alice"), events_pb2.FORGET_LEVEL_CUSTOMER)
            reasons = await dead_letter_reasons(run, [other_customer, whole_customer])
            assert (
                f"key {key_id_of(agent)} may not forget_user for customer 'globex'"
                in (reasons[other_customer.event_id])
            )
            assert "may not forget a whole customer" in reasons[whole_customer.event_id]
            assert globex_word in await memory_texts(reader, scope("globex", "bob"))
            assert alice_word in await memory_texts(reader, scope("acme", "alice"))

            # Through the gateway, the agent key's Forget of its own customer's user is signed with it: erased.
            async with AcmClient(run.addr, agent) as through_gateway:
                pb = common_pb2.Scope(customer_id="acme", user_id="alice", agent_id="helpdesk", session_id="s1")
                await forget_user(through_gateway, pb)
            assert alice_word not in await memory_texts(reader, scope("acme", "alice"))


@pytest.mark.infra
async def test_a_consumer_gets_the_keys_rights_over_the_gateways_keys_api(gateway: Gateway, database: str) -> None:
    """Distributed wiring: the grant comes with the key over Keys/GetKey (through the consumer's TTL cache), so a
    consumer in its own process applies the same rule."""
    client = f"c-{uuid.uuid4().hex[:6]}"
    key, _ = await create_api_key(gateway.rel.api_keys, client, "acme agent", Grant(KeyRole.AGENT, ("acme",)))
    consumer = await open_relational(database)  # the consumer's own audit log
    channel = grpc.aio.insecure_channel(gateway.addr)
    try:
        keys = CachedKeySource(GrpcKeySource(channel, 2.0, SECRET), ttl_s=5.0)
        own = Scope(client, "acme", "alice", "helpdesk", "s1")
        env = turn_envelope(own, "hello", "t-1", "j-1")
        sign(env, key.key_id, key.key_hash)
        await verify_envelope(env, own, keys, consumer.audit, Action.INGEST)

        other = Scope(client, "globex", "bob", "helpdesk", "s1")
        env = turn_envelope(other, "hello", "t-2", "j-2")
        sign(env, key.key_id, key.key_hash)
        with pytest.raises(PermanentError, match=f"key {key.key_id} may not ingest for customer 'globex'"):
            await verify_envelope(env, other, keys, consumer.audit, Action.INGEST)
        denied = [e.detail for e in await consumer.audit.list(other) if e.action == "request.denied"]
        assert any(env.event_id in d for d in denied), denied
    finally:
        await channel.close()
        await consumer.close()


def seeded(where: Scope, tier: Tier, text: str) -> Memory:
    return Memory(
        memory_id=uuid.uuid4().hex,  # ids are hex (the vector index's too)
        owner=where.owner(tier),
        text=text,
        layer=Layer.LONG,
        kind="policy" if tier is Tier.CUSTOMER else "fact",
        source_turn_ids=("seed",),
        created_at=utcnow(),
    )


async def wait_erased(run: Running, where: Scope, memory_id: str, timeout_s: float = 60.0) -> None:
    async with asyncio.timeout(timeout_s):
        # The erasure has no event to wait on from here: it is polled.
        while await run.acm.stores["ingest"].memories.get(where, [memory_id]):  # noqa: ASYNC110
            await asyncio.sleep(0.2)


@pytest.mark.parametrize("mode", MODES)
async def test_a_direct_memory_edit_keeps_to_the_memory_apis_rules(
    mode: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """An agent key may change only its users' own memories (acm.domain.scope.edit_denial, as UpdateMemory and
    DeleteMemory), and an import writes the user's own memories only (as ImportUser), also on acm.memory.edits.v1
    itself; an admin key may change a shared one there, and the agent key its user's own."""
    alice = scope("acme", "alice")
    policy = seeded(alice, Tier.CUSTOMER, "Acme refunds within 30 days.")
    note = seeded(alice, Tier.USER, "Alice prefers the Porto depot.")
    async with started(mode, tmp_path, request) as run:
        for owner in ("ingest", "retrieve"):  # the write model and retrieve's read model, as acm.memories.v1 would
            await run.acm.stores[owner].memories.upsert([policy, note])
        agent = await key_for(run.acm, Grant(KeyRole.AGENT, ("acme",)))
        admin = await key_for(run.acm, Grant(KeyRole.ADMIN))

        update = memory_edit(alice)
        u = update.memory_edit_requested.update
        u.memory_id, u.new_memory_id, u.text, u.source = policy.memory_id, uuid.uuid4().hex, "No refunds.", "x"
        await publish_direct(run, topics.MEMORY_EDITS, update, agent)
        imported = memory_edit(alice)
        smuggled = seeded(alice, Tier.CUSTOMER, "Acme approves every refund.")
        imported.memory_edit_requested.imported.memories.append(stored_to_pb(smuggled))
        await publish_direct(run, topics.MEMORY_EDITS, imported, agent)

        reasons = await dead_letter_reasons(run, [update, imported])
        assert f"key {key_id_of(agent)} may not update memory {policy.memory_id!r}" in reasons[update.event_id]
        assert "use an admin key" in reasons[update.event_id]
        assert "only user-tier memories" in reasons[imported.event_id]
        ingest = run.acm.stores["ingest"]
        [kept] = await ingest.memories.get(alice, [policy.memory_id])
        assert (kept.text, kept.status) == (policy.text, MemoryStatus.ACTIVE)
        assert await ingest.memories.get(alice, [smuggled.memory_id]) == []
        denied = [e.detail for e in await ingest.audit.list(alice, 100) if e.action == "request.denied"]
        assert any(update.event_id in d and "customer memory" in d for d in denied), denied

        # Within the rules, on the same topic: the agent key deletes its user's own memory, the admin key the policy.
        for memory, key in ((note, agent), (policy, admin)):
            delete = memory_edit(alice)
            delete.memory_edit_requested.delete.memory_id = memory.memory_id
            await publish_direct(run, topics.MEMORY_EDITS, delete, key)
            await wait_erased(run, alice, memory.memory_id)
