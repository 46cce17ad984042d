"""The prefetch cache's write generations per tier, in the Cache port.

Every write of a fact sets a new random generation token for its owner's tier (user / customer / client);
a pool (acm.read.pool) records the tokens it was built under and is stale as soon as one differs. Writers
(ingest, retrieve's projection, Forget) bump them; the read side compares them. Tokens are random, not
counters: a cleared token (Forget, eviction) never matches an old one again."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from acm.domain.scope import Scope, Tier
from acm.ports.stores import Cache

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


async def bump_generations(cache: Cache, scope: Scope, tiers: Iterable[Tier]) -> None:
    for tier in tiers:
        await cache.set(*generation_ref(scope, tier), uuid.uuid4().hex.encode(), GENERATION_TTL_S)


async def forget_prefetch(cache: Cache, scope: Scope) -> None:
    """Whatever the level forgotten, every pool that could hold its memories records one of these tokens."""
    await bump_generations(cache, scope, TIERS_IN_ORDER)
