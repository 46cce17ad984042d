"""The prefetch cache's state in the Cache port: pools per session and write generations per tier.

A pool lives under the session's full scope and the agent's id (``prefetch:pool:<agent>``), so a reader
in another session, user, customer, client or agent can never be served it. Every write of a fact sets a
new random generation token for its owner's tier (user / customer / client); a pool records the tokens
it was built under and is stale as soon as one differs. Tokens are random, not counters: a cleared token
(Forget, eviction) never matches an old one again."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from acm.domain.schema import DEFAULT_AGENT
from acm.domain.scope import Scope, Tier
from acm.ports.stores import Cache
from acm.v1 import architect_pb2

GENERATION_KEY = "prefetch:gen"
GENERATION_TTL_S = 7 * 86400.0
# Holder ids for the shared tiers' tokens. A real user with this id only shares the *key prefix*, never
# the key name, so at worst its Forget clears a token (which makes pools stale: the safe direction).
_SHARED = "0prefetch-shared"


def generation_scope(scope: Scope, tier: Tier) -> Scope:
    if tier is Tier.USER:
        return Scope(scope.client_id, scope.customer_id, scope.user_id)
    if tier is Tier.CUSTOMER:
        return Scope(scope.client_id, scope.customer_id, _SHARED)
    return Scope(scope.client_id, _SHARED, _SHARED)


TIERS_IN_ORDER = (Tier.USER, Tier.CUSTOMER, Tier.CLIENT)


def generation_ref(scope: Scope, tier: Tier) -> tuple[Scope, str]:
    """Where the tier's generation token of ``scope`` lives in the cache: (its holder's scope, the key)."""
    return generation_scope(scope, tier), GENERATION_KEY


def as_text(raw: bytes | None) -> str:
    """A token read from the cache, "" when there is none."""
    return raw.decode() if raw else ""


async def read_generation(cache: Cache, scope: Scope, tier: Tier) -> str:
    return as_text(await cache.get(*generation_ref(scope, tier)))


async def read_generations(cache: Cache, scope: Scope) -> list[str]:
    """The scope's user, customer and client generation tokens ("" where none was set)."""
    return [as_text(v) for v in await cache.get_many([generation_ref(scope, t) for t in TIERS_IN_ORDER])]


async def read_pool_state(cache: Cache, scope: Scope) -> tuple[str, list[str]]:
    """The session's pool version and the scope's generation tokens, in one round trip ("" where unset)."""
    raw = await cache.get_many([(scope, version_key(scope)), *(generation_ref(scope, t) for t in TIERS_IN_ORDER)])
    version, *generations = (as_text(v) for v in raw)
    return version, generations


async def bump_generations(cache: Cache, scope: Scope, tiers: Iterable[Tier]) -> None:
    for tier in tiers:
        await cache.set(*generation_ref(scope, tier), uuid.uuid4().hex.encode(), GENERATION_TTL_S)


async def forget_prefetch(cache: Cache, scope: Scope) -> None:
    """Whatever the level forgotten, every pool that could hold its memories records one of these tokens."""
    await bump_generations(cache, scope, TIERS_IN_ORDER)


def pool_key(scope: Scope) -> str:
    return f"prefetch:pool:{scope.agent_id or DEFAULT_AGENT}"


def version_key(scope: Scope) -> str:
    return f"prefetch:ver:{scope.agent_id or DEFAULT_AGENT}"


async def store_pool(cache: Cache, scope: Scope, pool: architect_pb2.PrefetchPool, ttl_s: float) -> int:
    """Pool first, then its version (readers go by the version); returns the stored size in bytes."""
    data = pool.SerializeToString()
    await cache.set(scope, pool_key(scope), data, ttl_s)
    await cache.set(scope, version_key(scope), pool.version.encode(), ttl_s)
    return len(data)


async def load_version(cache: Cache, scope: Scope) -> str:
    return as_text(await cache.get(scope, version_key(scope)))


async def load_pool(cache: Cache, scope: Scope) -> architect_pb2.PrefetchPool | None:
    raw = await cache.get(scope, pool_key(scope))
    if raw is None:
        return None
    return architect_pb2.PrefetchPool.FromString(raw)


async def drop_pool(cache: Cache, scope: Scope) -> None:
    await cache.delete(scope, version_key(scope))
    await cache.delete(scope, pool_key(scope))
