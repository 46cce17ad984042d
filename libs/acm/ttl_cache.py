"""A small in-process cache of answers from another service's API: each answer kept for ttl_s (counted on an
injectable clock), at most max_entries of them (least recently used dropped first)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TtlCache(Generic[K, V]):
    def __init__(self, ttl_s: float, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        """``ttl_s`` 0: nothing is kept (every call loads)."""
        self._ttl_s = ttl_s
        self._max = max_entries
        self._clock = clock
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()

    async def get(self, key: K, load: Callable[[], Awaitable[V]]) -> V:
        """The kept answer for ``key`` while it is younger than ttl_s, else ``load()``'s (kept; None included,
        so an unknown key is not asked about again within the TTL). An exception from ``load`` is not kept."""
        hit = self._entries.get(key)
        if hit is not None and hit[0] > self._clock():
            self._entries.move_to_end(key)
            return hit[1]
        value = await load()
        if self._ttl_s > 0:
            self._entries[key] = (self._clock() + self._ttl_s, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        return value

    def forget(self, key: K) -> None:
        self._entries.pop(key, None)
