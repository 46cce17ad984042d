"""Cache over Redis (redis.asyncio).

Key layout: ``acm:{client}:{customer}:{user}:{session}:{key}``. Scope ids cannot contain ':' (see the id
rule in acm.domain.scope), so each prefix names exactly one level of the tenant tree and ``clear`` can
erase a level by prefix. Socket timeouts are the deadline of every call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from redis.asyncio import Redis

from acm.domain.scope import ForgetLevel, Scope

# Redis MATCH is a glob; escape its special characters so an id can only ever match itself.
_GLOB_SPECIAL = re.compile(r"([\\*?\[\]])")

_UNLINK_BATCH = 500


def cache_key(scope: Scope, key: str) -> str:
    return f"acm:{scope.client_id}:{scope.customer_id}:{scope.user_id}:{scope.session_id}:{key}"


def key_name(stored: bytes | str) -> str:
    """The key part of a stored key (scope ids hold no ':', so it is what follows the fifth)."""
    text = stored.decode(errors="replace") if isinstance(stored, bytes) else stored
    return text.split(":", 5)[-1]


def level_prefix(scope: Scope, level: ForgetLevel) -> str:
    """The key prefix that ``level`` of ``scope`` covers (ends with ':', so c1 never matches c10)."""
    parts = [scope.client_id]
    if level is not ForgetLevel.CLIENT:
        parts.append(scope.customer_id)
    if level in (ForgetLevel.USER, ForgetLevel.SESSION):
        parts.append(scope.user_id)
    if level is ForgetLevel.SESSION:
        parts.append(scope.session_id)
    return "acm:" + ":".join(parts) + ":"


def _check_ttl(ttl_s: float | None) -> None:
    if ttl_s is not None and ttl_s <= 0:
        raise ValueError(f"ttl_s must be positive or None, not {ttl_s}")


class RedisCache:
    """Cache on Redis. Build it with ``RedisCache.from_url(url)`` or ``await RedisCache.open(url)``."""

    def __init__(self, client: Redis) -> None:
        self._r = client

    @classmethod
    def from_url(cls, url: str, *, timeout_s: float = 2.0) -> RedisCache:
        """A client for a redis:// URL; it connects lazily, on the first command."""
        return cls(Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s))

    @classmethod
    async def open(cls, url: str, *, timeout_s: float = 2.0) -> RedisCache:
        """Like ``from_url``, but fails now (not on first use) when the server does not answer."""
        cache = cls.from_url(url, timeout_s=timeout_s)
        try:
            await cache._r.ping()
        except BaseException:
            await cache.close()
            raise
        return cache

    async def get(self, scope: Scope, key: str) -> bytes | None:
        value = await self._r.get(cache_key(scope, key))
        # The client is built without decode_responses, so values come back as bytes.
        return value.encode() if isinstance(value, str) else value

    async def get_many(self, keys: Sequence[tuple[Scope, str]]) -> list[bytes | None]:
        if not keys:
            return []
        values = await self._r.mget([cache_key(scope, key) for scope, key in keys])
        return [v.encode() if isinstance(v, str) else v for v in values]

    async def set(self, scope: Scope, key: str, value: bytes, ttl_s: float | None = None) -> None:
        _check_ttl(ttl_s)
        # PX keeps sub-second TTLs; round up so a tiny TTL never becomes 0 (which Redis rejects).
        px = None if ttl_s is None else max(1, round(ttl_s * 1000))
        await self._r.set(cache_key(scope, key), value, px=px)

    async def delete(self, scope: Scope, key: str) -> None:
        await self._r.unlink(cache_key(scope, key))

    async def incr(self, scope: Scope, key: str, amount: int = 1) -> int:
        return int(await self._r.incrby(cache_key(scope, key), amount))

    async def clear(self, scope: Scope, level: ForgetLevel, key_prefix: str = "") -> int:
        # SCAN, never KEYS: KEYS blocks the server for the whole keyspace. UNLINK frees memory off-thread.
        pattern = _GLOB_SPECIAL.sub(r"\\\1", level_prefix(scope, level)) + "*"
        removed = 0
        batch: list[bytes] = []
        async for k in self._r.scan_iter(match=pattern, count=1000):
            if key_prefix and not key_name(k).startswith(key_prefix):
                continue
            batch.append(k)
            if len(batch) >= _UNLINK_BATCH:
                removed += int(await self._r.unlink(*batch))
                batch.clear()
        if batch:
            removed += int(await self._r.unlink(*batch))
        return removed

    async def close(self) -> None:
        await self._r.aclose()
