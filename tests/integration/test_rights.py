"""Rights (issue 18, item 4), through the public gRPC API of a running ACM, on the embedded stores and on the
real servers (Postgres, Neo4j, Redis): key roles and grants, denials audited, jobs readable only by their
scope, turn ids unique per owner, caps on every field of a turn (at the gateway and for direct publishers),
and service tokens on the internal Retrieve and Architect APIs."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import grpc
import psycopg
import pytest

from acm import topics
from acm.adapters.embedded_bus import EmbeddedBus
from acm.auth import SERVICE_TOKEN_HEADER, create_api_key, service_token
from acm.client import AcmClient
from acm.convert import scope_from_pb, ts
from acm.domain.scope import Grant, KeyRole
from acm.envelopes import key_hash
from acm.ownership import SERVICES
from acm.v1 import architect_pb2_grpc, common_pb2, gateway_pb2, gateway_pb2_grpc, retrieve_pb2, retrieve_pb2_grpc
from acm_architect.api import ArchitectApi, ArchitectServicer
from acm_architect.usecases import DefineAgent, GetAgent, ListAgents
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings, Urls
from acm_retrieve.api import RetrieveApi, RetrieveServicer
from tests.support.events import collect_dead_letters, signed, turn_envelope


@dataclass
class Tenant:
    """A client of its own per test (the stores are shared), with an admin key."""

    acm: EmbeddedAcm
    client_id: str
    admin: str
    suffix: str

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.acm.port}"

    def scope(self, customer: str, user: str, session: str = "s1") -> common_pb2.Scope:
        return common_pb2.Scope(
            customer_id=f"{customer}-{self.suffix}", user_id=user, agent_id="bot", session_id=session
        )

    async def key(self, role: KeyRole, customers: tuple[str, ...] = (), users: tuple[str, ...] = ()) -> str:
        grant = Grant(role, tuple(f"{c}-{self.suffix}" for c in customers), users)
        _, secret = await create_api_key(self.acm.stores["gateway"].api_keys, self.client_id, "test", grant)
        return secret

    async def denials(self) -> list[str]:
        entries = await self.acm.stores["gateway"].audit.list(
            scope_from_pb(self.scope("acme", "alice"), self.client_id), 100
        )
        return [e.detail for e in entries if e.action in ("request.denied", "scope.denied")]


@pytest.fixture(scope="module", params=["embedded", pytest.param("servers", marks=pytest.mark.infra)])
async def running(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[EmbeddedAcm]:
    data = tmp_path_factory.mktemp(f"rights-{request.param}")
    acm = EmbeddedAcm(EmbeddedSettings(data_dir=data, listen_addr="127.0.0.1:0", prefetch=False))
    if request.param == "embedded":
        async with acm:
            yield acm
        return
    # The same services over the real stores: Postgres (a database of its own), Neo4j and Redis.
    dsn: str = request.getfixturevalue("postgres_dsn")
    name = f"acm_rights_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        local = Urls.under(data, "edge")
        acm.urls = Urls(
            databases=dict.fromkeys(SERVICES, f"{dsn.rpartition('/')[0]}/{name}"),  # a schema each
            vectors=local.vectors,
            graph=request.getfixturevalue("neo4j_uri"),
            bus=local.bus,
            cache=request.getfixturevalue("redis_url"),
        )
        async with acm:
            yield acm
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def tenant(running: EmbeddedAcm) -> Tenant:
    suffix = uuid.uuid4().hex[:8]
    client_id = f"rights-{suffix}"
    _, admin = await create_api_key(running.stores["gateway"].api_keys, client_id, "admin")
    return Tenant(running, client_id, admin, suffix)


def _denied(err: pytest.ExceptionInfo[grpc.aio.AioRpcError], *words: str) -> None:
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED, err.value
    details = err.value.details() or ""
    assert all(w in details for w in words), details


# --- roles ------------------------------------------------------------------------------------------------


async def test_an_agent_key_cannot_forget_a_customer_or_the_client(tenant: Tenant) -> None:
    alice = tenant.scope("acme", "alice")
    agent_key = await tenant.key(KeyRole.AGENT, ("acme",))
    async with AcmClient(tenant.addr, agent_key) as agent, AcmClient(tenant.addr, tenant.admin) as admin:
        for level in ("customer", "client"):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await agent.forget(alice, level)
            _denied(err, "role 'agent'", "admin key")
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await agent.define_agent(alice, "support bot for a SaaS billing team")
        _denied(err, "schema", "admin key")
        # Its own user's Forget is an agent's right; the admin key may forget the customer.
        job = await agent.forget(alice, "user")
        assert (await agent.wait_job(alice, job, timeout_s=30)).status == gateway_pb2.JOB_STATUS_DONE
        job = await admin.forget(alice, "customer")
        assert (await admin.wait_job(alice, job, timeout_s=30)).status == gateway_pb2.JOB_STATUS_DONE
    denials = await tenant.denials()
    assert len(denials) == 3, denials
    assert all("agent" in d for d in denials), denials


async def test_an_agent_key_acts_only_inside_its_customers_and_users(tenant: Tenant) -> None:
    alice, bob, carol = tenant.scope("acme", "alice"), tenant.scope("acme", "bob"), tenant.scope("globex", "carol")
    only_alice = await tenant.key(KeyRole.AGENT, ("acme",), ("alice",))
    whole_acme = await tenant.key(KeyRole.AGENT, ("acme",))
    async with AcmClient(tenant.addr, only_alice) as agent, AcmClient(tenant.addr, whole_acme) as acme_agent:
        accepted = await agent.ingest(alice, "I moved to Lisbon in May", turn_id="t-1")
        assert (await agent.wait_job(alice, accepted.job_id, timeout_s=30)).status == gateway_pb2.JOB_STATUS_DONE
        found = await agent.fetch(alice, "where do I live?")  # the session's context, or its memories
        assert "Lisbon" in found.context or any("Lisbon" in m.text for m in found.memories), found

        with pytest.raises(grpc.aio.AioRpcError) as err:
            await agent.ingest(bob, "hello")
        _denied(err, "user 'alice'", "not 'bob'", "--users")
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await agent.fetch(carol, "anything")
        _denied(err, f"customer 'acme-{tenant.suffix}'", f"not 'globex-{tenant.suffix}'", "--customers")
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await acme_agent.get_job(carol, accepted.job_id)
        _denied(err, "customer")
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await acme_agent.forget(carol, "user")
        _denied(err, "customer")
        # A key for the whole customer serves its every user.
        assert (await acme_agent.ingest(bob, "hello there")).job_id
    assert len(await tenant.denials()) == 4


async def test_keys_made_before_roles_are_admin_keys(tenant: Tenant) -> None:
    key = await tenant.acm.stores["gateway"].api_keys.by_hash(key_hash(tenant.admin))
    assert key is not None and key.grant.role is KeyRole.ADMIN


# --- jobs -------------------------------------------------------------------------------------------------


async def test_a_job_is_readable_only_by_the_scope_that_created_it(tenant: Tenant) -> None:
    alice, bob = tenant.scope("acme", "alice"), tenant.scope("acme", "bob")
    alice_other_session = tenant.scope("acme", "alice", "s2")
    async with AcmClient(tenant.addr, tenant.admin) as client:
        job_id = (await client.ingest(alice, "My invoice INV-7 was charged twice", turn_id="t-1")).job_id
        assert (await client.wait_job(alice, job_id, timeout_s=30)).status == gateway_pb2.JOB_STATUS_DONE
        assert (await client.get_job(alice_other_session, job_id)).job_id == job_id
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await client.get_job(bob, job_id)  # same client, same customer, another user
        assert err.value.code() == grpc.StatusCode.NOT_FOUND

        forget = await client.forget(alice, "user")
        assert (await client.wait_job(alice, forget, timeout_s=30)).status == gateway_pb2.JOB_STATUS_DONE
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await client.get_job(alice, job_id)  # her user was forgotten: so were her jobs
        assert err.value.code() == grpc.StatusCode.NOT_FOUND


# --- turn ids ---------------------------------------------------------------------------------------------


async def test_two_users_sending_the_same_turn_id_keep_their_own_turn(tenant: Tenant) -> None:
    alice, bob = tenant.scope("acme", "alice"), tenant.scope("acme", "bob")
    async with AcmClient(tenant.addr, tenant.admin) as client:
        for sc, text in ((alice, "Alice says the blue folder is hers"), (bob, "Bob says the red folder is his")):
            job_id = (await client.ingest(sc, text, turn_id="turn-1")).job_id
            assert (await client.wait_job(sc, job_id, timeout_s=30)).status == gateway_pb2.JOB_STATUS_DONE
    for sc, mine, theirs in ((alice, "blue", "red"), (bob, "red", "blue")):
        turns = [
            m.text
            for m in await tenant.acm.stores["ingest"].memories.session_memories(
                scope_from_pb(sc, tenant.client_id), 50
            )
            if m.kind == "turn"
        ]
        assert len(turns) == 1 and mine in turns[0] and theirs not in turns[0], turns


# --- caps -------------------------------------------------------------------------------------------------


async def _ingest_raw(addr: str, key: str, sc: common_pb2.Scope, turn: common_pb2.Turn) -> None:
    async with grpc.aio.insecure_channel(addr) as channel:
        await gateway_pb2_grpc.GatewayStub(channel).Ingest(
            gateway_pb2.IngestRequest(scope=sc, turn=turn), metadata=(("authorization", f"Bearer {key}"),)
        )


def _turn(**fields: object) -> common_pb2.Turn:
    turn = common_pb2.Turn(role=common_pb2.ROLE_USER, content="hello", turn_id="t-ok")
    for name, value in fields.items():
        if name == "occurred_at":
            assert isinstance(value, datetime)
            turn.occurred_at.CopyFrom(ts(value))
        elif name == "metadata":
            assert isinstance(value, dict)
            turn.metadata.update(value)
        else:
            setattr(turn, name, value)
    return turn


BAD_TURNS: dict[str, tuple[common_pb2.Turn, str]] = {
    "metadata of 3 MB": (_turn(metadata={"blob": "x" * 3_000_000}), "turn.metadata is 3,000,004 bytes"),
    "65 metadata keys": (_turn(metadata={f"k{i}": "v" for i in range(65)}), "65 keys"),
    "a turn id of 200 characters": (_turn(turn_id="t" * 200), "turn.turn_id"),
    "a turn id with spaces": (_turn(turn_id="t 1; drop"), "turn.turn_id"),
    "a tool name of 300 characters": (_turn(tool_name="f" * 300), "turn.tool_name"),
    "a time before 1970": (_turn(occurred_at=datetime(1969, 7, 20, tzinfo=UTC)), "before 1970"),
    "a time two days ahead": (_turn(occurred_at=datetime.now(UTC) + timedelta(days=2)), "in the future"),
}


@pytest.mark.parametrize("case", list(BAD_TURNS))
async def test_every_field_of_a_turn_is_capped_at_the_gateway(tenant: Tenant, case: str) -> None:
    turn, message = BAD_TURNS[case]
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await _ingest_raw(tenant.addr, tenant.admin, tenant.scope("acme", "alice"), turn)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value
    assert message in (err.value.details() or ""), err.value.details()


async def test_a_turn_within_the_caps_is_accepted(tenant: Tenant) -> None:
    turn = _turn(
        turn_id="conv-26:D1:3",
        tool_name="billing.lookup_invoice",
        metadata={f"k{i}": "v" * 200 for i in range(64)},
        occurred_at=datetime.now(UTC) + timedelta(hours=1),
    )
    await _ingest_raw(tenant.addr, tenant.admin, tenant.scope("acme", "alice"), turn)


async def test_direct_publishers_get_the_same_caps_as_dead_letters(tenant: Tenant) -> None:
    """An agent publishing to the bus itself: a turn over a cap goes to the dead letter with the reason."""
    key = await tenant.acm.stores["gateway"].api_keys.by_hash(key_hash(tenant.admin))
    assert key is not None
    alice = scope_from_pb(tenant.scope("acme", "alice"), tenant.client_id)
    env = turn_envelope(alice, "hello", f"t-big-{tenant.suffix}", f"j-big-{tenant.suffix}")
    env.turn_received.turn.metadata["blob"] = "x" * 200_000
    await tenant.acm.bus.publish(topics.TURNS, alice.session_key, signed(env, key))
    reader = EmbeddedBus(tenant.acm.urls.bus.removeprefix("sqlite:///"), poll_interval_s=0.1)
    letters = await collect_dead_letters(
        reader,
        topics.dead_letter("ingest"),
        f"test-{uuid.uuid4().hex}",
        lambda found: any(tenant.suffix in letter.reason or "200,004 bytes" in letter.reason for letter in found),
        20,
    )
    assert any("turn.metadata is 200,004 bytes" in letter.reason for letter in letters), [
        letter.reason for letter in letters
    ]
    job = await tenant.acm.stores["gateway"].jobs.get(alice, f"j-big-{tenant.suffix}")
    assert job is not None and "metadata" in job.error


# --- service tokens ----------------------------------------------------------------------------------------

SECRET = "s3cret-for-the-internal-api-only"


@pytest.fixture
async def internal(tenant: Tenant) -> AsyncIterator[str]:
    """Retrieve and Architect servers over the tenant's stores, requiring service tokens."""
    acm = tenant.acm
    assert isinstance(acm.full_retriever, RetrieveApi)
    server = grpc.aio.server()
    retrieve_pb2_grpc.add_RetrieveServicer_to_server(RetrieveServicer(acm.full_retriever, SECRET), server)
    architect = ArchitectApi(
        DefineAgent(acm.stores["architect"].schemas, acm.bus),
        GetAgent(acm.stores["architect"].schemas),
        ListAgents(acm.stores["architect"].schemas),
    )
    architect_pb2_grpc.add_ArchitectServicer_to_server(ArchitectServicer(architect, SECRET), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(None)


async def test_internal_calls_need_a_service_token_for_their_scope(tenant: Tenant, internal: str) -> None:
    mine = tenant.scope("acme", "alice")
    mine.client_id = tenant.client_id
    other = common_pb2.Scope()
    other.CopyFrom(mine)
    other.client_id = "someone-else"
    request = retrieve_pb2.RetrieveRequest(scope=mine, query="Lisbon", budget_tokens=200)
    listing = gateway_pb2.ListAgentsRequest(scope=mine)
    async with grpc.aio.insecure_channel(internal) as channel:
        retrieve = retrieve_pb2_grpc.RetrieveStub(channel)
        architect = architect_pb2_grpc.ArchitectStub(channel)
        refused = {
            "no token": (),
            "another scope's token": ((SERVICE_TOKEN_HEADER, service_token(SECRET, "Retrieve", other)),),
            "another method's token": ((SERVICE_TOKEN_HEADER, service_token(SECRET, "ListAgents", mine)),),
            "a stale token": ((SERVICE_TOKEN_HEADER, service_token(SECRET, "Retrieve", mine, time.time() - 600)),),
            "another secret": ((SERVICE_TOKEN_HEADER, service_token("not-the-secret-at-all", "Retrieve", mine)),),
        }
        for case, metadata in refused.items():
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await retrieve.Retrieve(request, metadata=metadata)
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED, case
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await architect.ListAgents(listing)
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "service token" in (err.value.details() or "")

        await retrieve.Retrieve(request, metadata=((SERVICE_TOKEN_HEADER, service_token(SECRET, "Retrieve", mine)),))
        await architect.ListAgents(
            listing, metadata=((SERVICE_TOKEN_HEADER, service_token(SECRET, "ListAgents", mine)),)
        )
