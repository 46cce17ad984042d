"""In-process Cache: the embedded default, same key layout and semantics as RedisCache.

Entries expire on a monotonic clock (wall-clock jumps must not expire or revive keys) and the number of
entries is bounded: past ``max_entries`` the least recently used entry is evicted, so a busy process
cannot grow without limit. Every operation is synchronous inside, so on one event loop it is atomic.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from acm.adapters.redis_cache import cache_key, key_name, level_prefix
from acm.domain.scope import ForgetLevel, Scope


class MemoryCache:
    def __init__(self, max_entries: int = 100_000, *, clock: Callable[[], float] = time.monotonic) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max = max_entries
        self._clock = clock
        # key -> (value, expiry on self._clock or None); order = least recently used first.
        self._data: OrderedDict[str, tuple[bytes, float | None]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    def _live(self, k: str) -> tuple[bytes, float | None] | None:
        entry = self._data.get(k)
        if entry is None:
            return None
        if entry[1] is not None and entry[1] <= self._clock():
            del self._data[k]
            return None
        self._data.move_to_end(k)
        return entry

    def _put(self, k: str, value: bytes, expires: float | None) -> None:
        self._data[k] = (value, expires)
        self._data.move_to_end(k)
        while len(self._data) > self._max:
            self._data.popitem(last=False)

    async def get(self, scope: Scope, key: str) -> bytes | None:
        entry = self._live(cache_key(scope, key))
        return None if entry is None else entry[0]

    async def get_many(self, keys: Sequence[tuple[Scope, str]]) -> list[bytes | None]:
        entries = [self._live(cache_key(scope, key)) for scope, key in keys]
        return [None if entry is None else entry[0] for entry in entries]

    async def set(self, scope: Scope, key: str, value: bytes, ttl_s: float | None = None) -> None:
        if ttl_s is not None and ttl_s <= 0:
            raise ValueError(f"ttl_s must be positive or None, not {ttl_s}")
        self._put(cache_key(scope, key), bytes(value), None if ttl_s is None else self._clock() + ttl_s)

    async def delete(self, scope: Scope, key: str) -> None:
        self._data.pop(cache_key(scope, key), None)

    async def incr(self, scope: Scope, key: str, amount: int = 1) -> int:
        k = cache_key(scope, key)
        entry = self._live(k)
        # Like INCRBY: a missing key counts as 0, the TTL is kept, a non-integer value is an error.
        current = 0 if entry is None else int(entry[0])
        total = current + amount
        self._put(k, str(total).encode(), None if entry is None else entry[1])
        return total

    async def clear(self, scope: Scope, level: ForgetLevel, key_prefix: str = "") -> int:
        prefix = level_prefix(scope, level)
        now = self._clock()
        doomed = [k for k in self._data if k.startswith(prefix) and key_name(k).startswith(key_prefix)]
        removed = 0
        for k in doomed:
            _, expires = self._data.pop(k)
            # Count like Redis would: keys already expired were gone there.
            if expires is None or expires > now:
                removed += 1
        return removed

    async def close(self) -> None:
        self._data.clear()
