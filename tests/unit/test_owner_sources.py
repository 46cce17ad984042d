"""Reading the owners' data (issue 19): the caches in front of the gateway's Keys API and the architect's GetAgent
keep an answer for their TTL and no longer (a clock the test advances, no sleeps), the wire form of a key loses
nothing, and the one "latest or default" rule holds over the Architect API as over the store."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from acm.adapters.grpc_keys import CachedKeySource, key_from_pb, key_to_pb
from acm.domain.schema import AgentSchema, default_schema
from acm.domain.scope import Grant, KeyRole, Scope
from acm.ports.architect import AgentInfo, AgentNotFoundError
from acm.ports.stores import ApiKey
from acm.schemas import ArchitectSchemaSource, CachedSchemaSource
from acm.ttl_cache import TtlCache

SCOPE = Scope("c1", "acme", "alice", "helpdesk", "s1")
KEY = ApiKey("k1", "c1", "ab" * 32, "ci", datetime(2026, 3, 1, 9, 30, 15, 123000, tzinfo=UTC))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Keys:
    """A KeySource in a dict, counting its lookups."""

    def __init__(self, *keys: ApiKey) -> None:
        self.keys = {(k.client_id, k.key_id): k for k in keys}
        self.calls = 0

    async def by_id(self, client_id: str, key_id: str) -> ApiKey | None:
        self.calls += 1
        return self.keys.get((client_id, key_id))


async def test_a_revoked_key_verifies_until_the_ttl_passes_and_not_after() -> None:
    clock, keys = Clock(), Keys(KEY)
    cached = CachedKeySource(keys, ttl_s=5.0, clock=clock)
    assert await cached.by_id("c1", "k1") == KEY
    keys.keys[("c1", "k1")] = replace(KEY, revoked=True)
    clock.now += 4.9
    assert await cached.by_id("c1", "k1") == KEY  # kept: the gateway is not asked again within the TTL
    assert keys.calls == 1
    clock.now += 0.2
    assert (await cached.by_id("c1", "k1")).revoked  # type: ignore[union-attr]
    assert keys.calls == 2


async def test_an_unknown_key_is_kept_too_and_clients_do_not_share_answers() -> None:
    clock, keys = Clock(), Keys(KEY)
    cached = CachedKeySource(keys, ttl_s=5.0, clock=clock)
    assert await cached.by_id("c2", "k1") is None  # another client's key id
    assert await cached.by_id("c2", "k1") is None
    assert keys.calls == 1
    assert await cached.by_id("c1", "k1") == KEY
    assert keys.calls == 2


async def test_a_failed_lookup_is_not_kept() -> None:
    clock = Clock()
    cache: TtlCache[str, int] = TtlCache(5.0, clock=clock)
    attempts = 0

    async def flaky() -> int:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise ConnectionError("gateway down")
        return 7

    with pytest.raises(ConnectionError):
        await cache.get("k", flaky)
    assert await cache.get("k", flaky) == 7  # asked again at once, not after the TTL
    assert await cache.get("k", flaky) == 7
    assert attempts == 2


async def test_the_cache_keeps_at_most_its_entries_least_recently_used_out_first() -> None:
    clock = Clock()
    cache: TtlCache[str, str] = TtlCache(60.0, max_entries=2, clock=clock)
    loads: list[str] = []

    def loader(key: str):  # type: ignore[no-untyped-def]
        async def load() -> str:
            loads.append(key)
            return key.upper()

        return load

    await cache.get("a", loader("a"))
    await cache.get("b", loader("b"))
    await cache.get("a", loader("a"))  # a is now the most recent
    await cache.get("c", loader("c"))  # b goes
    await cache.get("a", loader("a"))
    await cache.get("b", loader("b"))
    assert loads == ["a", "b", "c", "b"]


async def test_ttl_zero_keeps_nothing() -> None:
    keys = Keys(KEY)
    cached = CachedKeySource(keys, ttl_s=0.0, clock=Clock())
    await cached.by_id("c1", "k1")
    await cached.by_id("c1", "k1")
    assert keys.calls == 2


@pytest.mark.parametrize(
    "key",
    [
        KEY,
        replace(KEY, revoked=True),
        replace(KEY, grant=Grant(KeyRole.AGENT, ("acme", "globex"), ("alice",))),
    ],
    ids=["admin", "revoked", "agent"],
)
def test_a_key_crosses_the_wire_unchanged(key: ApiKey) -> None:
    assert key_from_pb(key_to_pb(key)) == key


def test_no_key_crosses_the_wire_as_none() -> None:
    assert key_from_pb(key_to_pb(None)) is None


class Architect:
    """The Architect API's GetAgent over a dict of latest schemas per (client, agent), counting its calls."""

    def __init__(self) -> None:
        self.schemas: dict[tuple[str, str], AgentSchema] = {}
        self.asked: list[Scope] = []

    async def get_agent(self, scope: Scope, version: int = 0) -> AgentInfo:
        self.asked.append(scope)
        found = self.schemas.get((scope.client_id, scope.agent_id))
        if found is None:
            raise AgentNotFoundError(f"no schema for agent {scope.agent_id!r}")
        return AgentInfo(found.agent_id, found.version, found.archetype, found.to_json())

    async def define_agent(self, scope: Scope, definition: object) -> AgentInfo:
        raise NotImplementedError("not used here")

    async def list_agents(self, scope: Scope) -> list[AgentInfo]:
        return []


def _v2(agent_id: str) -> AgentSchema:
    return replace(default_schema(agent_id, "tickets"), version=2, fallback_category="")


async def test_over_the_architect_api_an_agent_without_a_schema_gets_the_default_and_a_stored_one_itself() -> None:
    architect = Architect()
    source = ArchitectSchemaSource(architect)  # type: ignore[arg-type]
    assert await source.latest(SCOPE) == default_schema("helpdesk")
    architect.schemas[("c1", "helpdesk")] = _v2("helpdesk")
    assert await source.latest(SCOPE) == _v2("helpdesk")
    assert await source.latest(SCOPE, "coder") == default_schema("coder")
    assert [s.agent_id for s in architect.asked] == ["helpdesk", "helpdesk", "coder"]
    assert await source.latest(replace(SCOPE, agent_id="")) == default_schema("default")


async def test_a_new_schema_version_is_used_once_the_ttl_passed() -> None:
    clock, architect = Clock(), Architect()
    cached = CachedSchemaSource(ArchitectSchemaSource(architect), ttl_s=5.0, clock=clock)  # type: ignore[arg-type]
    assert (await cached.latest(SCOPE)).version == 1
    architect.schemas[("c1", "helpdesk")] = _v2("helpdesk")
    clock.now += 4.0
    assert (await cached.latest(replace(SCOPE, user_id="bob"))).version == 1  # per client and agent, not user
    clock.now += 1.5
    assert (await cached.latest(SCOPE)).version == 2
    assert len(architect.asked) == 2
    await cached.latest(replace(SCOPE, client_id="c2"))  # another client: asked
    assert len(architect.asked) == 3
