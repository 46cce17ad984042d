"""Cache contract: the Redis adapter and the in-process cache must behave the same.

Each test works in fresh client ids (uuid), so tests never see each other's keys on the shared Redis
server; the harness clears those clients afterwards.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from acm.adapters.memory_cache import MemoryCache
from acm.adapters.redis_cache import RedisCache
from acm.domain.scope import ForgetLevel, Scope
from acm.ports.stores import Cache
from tests.support.clock import ShiftedClock

AnyCache = RedisCache | MemoryCache


@dataclass
class Harness:
    cache: AnyCache
    kind: str
    # Lets a TTL pass: the in-process cache's clock jumps; Redis counts TTLs on its own clock, so there it sleeps.
    advance: Callable[[float], Awaitable[None]] = asyncio.sleep
    clients: list[str] = field(default_factory=list)

    def client(self, suffix: str = "") -> str:
        cid = f"c{uuid.uuid4().hex[:12]}{suffix}"
        self.clients.append(cid)
        return cid


def _as_port(cache: AnyCache) -> Cache:
    # Static check (mypy) that both adapters satisfy the port.
    return cache


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.infra)])
async def cache(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    clock = ShiftedClock()

    async def advance(seconds: float) -> None:
        clock.advance(seconds)

    if request.param == "redis":
        url: str = request.getfixturevalue("redis_url")
        harness = Harness(await RedisCache.open(url), request.param)
    else:
        harness = Harness(MemoryCache(clock=clock.monotonic), request.param, advance)
    c = harness.cache
    _as_port(c)
    try:
        yield harness
    finally:
        for cid in harness.clients:
            await c.clear(Scope(cid, "cleanup", "cleanup"), ForgetLevel.CLIENT)
        await c.close()


async def test_get_set_delete_round_trip(cache: Harness) -> None:
    c = cache.cache
    s = Scope(cache.client(), "cu1", "u1", session_id="s1")
    assert await c.get(s, "k") is None
    await c.set(s, "k", b"v1")
    assert await c.get(s, "k") == b"v1"
    await c.set(s, "k", b"v2")
    assert await c.get(s, "k") == b"v2"
    await c.set(s, "bin", bytes(range(256)))
    assert await c.get(s, "bin") == bytes(range(256))
    await c.set(s, "empty", b"")
    assert await c.get(s, "empty") == b""
    # Keys may hold ':' and glob characters; they are only ever data.
    await c.set(s, "a:*?[x]\\", b"odd")
    assert await c.get(s, "a:*?[x]\\") == b"odd"
    assert await c.get(s, "a:b") is None
    await c.delete(s, "k")
    assert await c.get(s, "k") is None
    await c.delete(s, "k")  # deleting a missing key is fine
    assert await c.get(s, "bin") == bytes(range(256))


async def test_get_many_reads_each_key_under_its_own_scope_in_order(cache: Harness) -> None:
    c = cache.cache
    client = cache.client()
    alice, bob = Scope(client, "cu1", "alice", session_id="s1"), Scope(client, "cu1", "bob", session_id="s1")
    await c.set(alice, "k", b"a")
    await c.set(bob, "k", b"b")
    await c.set(alice, "other", b"o")
    got = await c.get_many([(bob, "k"), (alice, "missing"), (alice, "k"), (alice, "other"), (bob, "k")])
    assert got == [b"b", None, b"a", b"o", b"b"]
    assert await c.get_many([]) == []


async def test_ttl_expiry(cache: Harness) -> None:
    c = cache.cache
    s = Scope(cache.client(), "cu1", "u1")
    await c.set(s, "short", b"x", ttl_s=0.3)
    await c.set(s, "long", b"y", ttl_s=60)
    await c.set(s, "forever", b"z")
    assert await c.get(s, "short") == b"x"
    await cache.advance(0.6)
    assert await c.get(s, "short") is None
    assert await c.get(s, "long") == b"y"
    assert await c.get(s, "forever") == b"z"
    # A new set without a TTL makes the key permanent again.
    await c.set(s, "long", b"y2", ttl_s=0.3)
    await c.set(s, "long", b"y3")
    await cache.advance(0.6)
    assert await c.get(s, "long") == b"y3"
    with pytest.raises(ValueError):
        await c.set(s, "bad", b"x", ttl_s=0)
    with pytest.raises(ValueError):
        await c.set(s, "bad", b"x", ttl_s=-1)


async def test_incr(cache: Harness) -> None:
    c = cache.cache
    s = Scope(cache.client(), "cu1", "u1", session_id="s1")
    assert await c.incr(s, "n") == 1
    assert await c.incr(s, "n") == 2
    assert await c.incr(s, "n", 10) == 12
    assert await c.incr(s, "n", -20) == -8
    assert await c.get(s, "n") == b"-8"
    await c.set(s, "m", b"41")
    assert await c.incr(s, "m") == 42
    # incr keeps a key's TTL, as INCRBY does.
    await c.set(s, "t", b"1", ttl_s=0.3)
    assert await c.incr(s, "t") == 2
    await cache.advance(0.6)
    assert await c.get(s, "t") is None
    assert await c.incr(s, "t") == 1


def _variants(client: str, other_client: str) -> dict[str, tuple[Scope, Scope]]:
    base = Scope(client, "cu1", "u1", session_id="s1")
    return {
        "user": (base, Scope(client, "cu1", "u2", session_id="s1")),
        "customer": (base, Scope(client, "cu2", "u1", session_id="s1")),
        "client": (base, Scope(other_client, "cu1", "u1", session_id="s1")),
        "session": (base, Scope(client, "cu1", "u1", session_id="s2")),
        "no-session": (base, Scope(client, "cu1", "u1")),
    }


@pytest.mark.parametrize("differs_in", ["user", "customer", "client", "session", "no-session"])
async def test_scopes_do_not_share_keys(cache: Harness, differs_in: str) -> None:
    c = cache.cache
    a, b = _variants(cache.client(), cache.client())[differs_in]
    await c.set(a, "k", b"A")
    await c.incr(a, "n", 5)
    assert await c.get(b, "k") is None
    assert await c.get(b, "n") is None
    await c.set(b, "k", b"B")
    assert await c.incr(b, "n") == 1
    assert await c.get(a, "k") == b"A"
    assert await c.get(b, "k") == b"B"
    await c.delete(b, "k")
    assert await c.get(a, "k") == b"A"
    assert await c.incr(a, "n") == 6


# Scopes of one client around the erased scope ("who": customer X, user a1, session s1).
_KEYS = {
    "a1_s1": ("X", "a1", "s1"),
    "a1_s2": ("X", "a1", "s2"),
    "a1_none": ("X", "a1", ""),
    "a2_s1": ("X", "a2", "s1"),
    "b1_s1": ("Y", "b1", "s1"),
    "y_a1_s1": ("Y", "a1", "s1"),  # same user and session ids under another customer
}
_CLEARED = {
    ForgetLevel.SESSION: {"a1_s1"},
    ForgetLevel.USER: {"a1_s1", "a1_s2", "a1_none"},
    ForgetLevel.CUSTOMER: {"a1_s1", "a1_s2", "a1_none", "a2_s1"},
    ForgetLevel.CLIENT: set(_KEYS),
}


@pytest.mark.parametrize("level", list(ForgetLevel))
async def test_clear_removes_exactly_the_level(cache: Harness, level: ForgetLevel) -> None:
    c = cache.cache
    cid = cache.client()
    # A client id that extends this one must never match its prefix.
    longer = cid + "0"
    cache.clients.append(longer)
    scopes = {name: Scope(cid, cu, u, session_id=s) for name, (cu, u, s) in _KEYS.items()}
    neighbour = Scope(longer, "X", "a1", session_id="s1")
    for scope in scopes.values():
        await c.set(scope, "k1", b"1")
        await c.set(scope, "k2:sub", b"2")
    await c.set(neighbour, "k1", b"n")
    await c.set(scopes["a1_s1"], "gone-already", b"x", ttl_s=0.1)
    await cache.advance(0.3)

    removed = await c.clear(Scope(cid, "X", "a1", session_id="s1"), level)

    assert removed == 2 * len(_CLEARED[level])
    for name, scope in scopes.items():
        expected = None if name in _CLEARED[level] else b"1"
        assert await c.get(scope, "k1") == expected, name
        assert (await c.get(scope, "k2:sub") is None) == (name in _CLEARED[level]), name
    assert await c.get(neighbour, "k1") == b"n"
    assert await c.clear(Scope(cid, "X", "a1", session_id="s1"), level) == 0


async def test_clear_session_level_without_session_id_only_hits_sessionless_keys(cache: Harness) -> None:
    c = cache.cache
    cid = cache.client()
    with_session = Scope(cid, "X", "a1", session_id="s1")
    without = Scope(cid, "X", "a1")
    await c.set(with_session, "k", b"1")
    await c.set(without, "k", b"2")
    assert await c.clear(without, ForgetLevel.SESSION) == 1
    assert await c.get(with_session, "k") == b"1"
    assert await c.get(without, "k") is None


async def test_clear_with_a_key_prefix_takes_those_keys_in_every_scope_under_the_level(cache: Harness) -> None:
    c = cache.cache
    cid = cache.client()
    alice, bob, other = Scope(cid, "X", "a1", session_id="s1"), Scope(cid, "X", "b1"), Scope(cid, "Y", "a1")
    for scope in (alice, bob, other):
        await c.set(scope, "prefetch:pool:bot", b"pool")
        await c.set(scope, "tokens", b"7")
        await c.set(scope, "x:prefetch:pool:bot", b"not a pool key")  # the prefix is the key's, not a substring
    assert await c.clear(alice, ForgetLevel.CUSTOMER, "prefetch:pool:") == 2
    assert [await c.get(s, "prefetch:pool:bot") for s in (alice, bob, other)] == [None, None, b"pool"]
    assert [await c.get(s, "tokens") for s in (alice, bob)] == [b"7", b"7"]
    assert await c.get(bob, "x:prefetch:pool:bot") == b"not a pool key"


async def test_clear_many_keys(cache: Harness) -> None:
    # More keys than one SCAN page / UNLINK batch.
    c = cache.cache
    s = Scope(cache.client(), "X", "a1", session_id="s1")
    for i in range(1200):
        await c.set(s, f"k{i}", b"v")
    assert await c.clear(s, ForgetLevel.SESSION) == 1200
    assert await c.get(s, "k0") is None
    assert await c.get(s, "k1199") is None


# --- in-process only ------------------------------------------------------------------------------


async def test_memory_cache_lru_bound() -> None:
    c = MemoryCache(max_entries=3)
    s = Scope("c1", "cu1", "u1")
    for k in ("k1", "k2", "k3"):
        await c.set(s, k, k.encode())
    assert await c.get(s, "k1") == b"k1"  # k1 is now the most recently used; k2 the least
    await c.set(s, "k4", b"k4")
    assert len(c) == 3
    assert await c.get(s, "k2") is None
    assert [await c.get(s, k) for k in ("k1", "k3", "k4")] == [b"k1", b"k3", b"k4"]
    await c.incr(s, "n")  # writes count as use and respect the bound too
    assert len(c) == 3
    assert await c.get(s, "k1") is None
    for i in range(100):
        await c.set(Scope("c1", "cu1", f"u{i}"), "k", b"v")
    assert len(c) == 3
    with pytest.raises(ValueError):
        MemoryCache(max_entries=0)


async def test_memory_cache_uses_its_clock() -> None:
    now = [100.0]
    c = MemoryCache(clock=lambda: now[0])
    s = Scope("c1", "cu1", "u1")
    await c.set(s, "k", b"v", ttl_s=10)
    now[0] = 109.9
    assert await c.get(s, "k") == b"v"
    now[0] = 110.0
    assert await c.get(s, "k") is None
    assert len(c) == 0
