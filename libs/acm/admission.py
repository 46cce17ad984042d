"""Admission control: at most N calls of a kind run at once, at most M wait for a turn, and none waits longer
than a bound. What does not fit is refused at once (Overloaded → RESOURCE_EXHAUSTED) instead of joining an
unbounded queue, so a server beyond its capacity answers quickly "retry later" and the latency of the calls
it does serve stays bounded: the queue wait plus, for calls safe to cancel, a bound on their own time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass


class Overloaded(Exception):
    """The server is at its configured capacity for this kind of call; retrying later, with backoff, may work."""


@dataclass(frozen=True, slots=True)
class Limits:
    max_in_flight: int  # calls running at once
    max_queued: int  # calls waiting for one of those slots (0: refuse whenever all are taken)
    max_wait_s: float  # the longest a call waits in the queue before it is refused
    # The longest an admitted call runs before it is cancelled and refused (None: no bound). Only for calls
    # that are safe to cancel midway (reads): past capacity the slots then free at this pace at the latest.
    max_run_s: float | None = None

    def __post_init__(self) -> None:
        bad_run = self.max_run_s is not None and self.max_run_s <= 0
        if self.max_in_flight < 1 or self.max_queued < 0 or self.max_wait_s < 0 or bad_run:
            raise ValueError(f"admission limits out of range: {self}")


class Admission:
    """A semaphore with a bounded waiting room: ``async with admission.admit(): ...`` runs the block when a
    slot is free or frees within ``max_wait_s``, else raises Overloaded. Not thread-safe: one event loop."""

    def __init__(self, what: str, limits: Limits) -> None:
        self._what = what
        self.limits = limits
        self._slots = asyncio.Semaphore(limits.max_in_flight)
        self._running = 0
        self._queued = 0

    @property
    def in_flight(self) -> int:
        return self._running

    @property
    def queued(self) -> int:
        return self._queued

    def _refusal(self, why: str) -> Overloaded:
        return Overloaded(
            f"{self._what}: the server is at capacity ({why}; {self.limits.max_in_flight} run at once, "
            f"{self.limits.max_queued} may wait); retry with exponential backoff"
        )

    async def _acquire(self) -> None:
        # Free slot and nobody waiting ahead: take it without a queue turn (locked() is True while waiters exist).
        if not self._slots.locked():
            await self._slots.acquire()
            return
        if self._queued >= self.limits.max_queued:
            raise self._refusal(f"{self._queued} calls already waiting")
        self._queued += 1
        try:
            # wait_for returns the slot when it was granted as the deadline passed, so no slot leaks.
            await asyncio.wait_for(self._slots.acquire(), self.limits.max_wait_s)
        except TimeoutError:
            raise self._refusal(f"no slot freed within {self.limits.max_wait_s:g} s") from None
        finally:
            self._queued -= 1

    @asynccontextmanager
    async def admit(self) -> AsyncIterator[None]:
        await self._acquire()
        self._running += 1
        try:
            async with asyncio.timeout(self.limits.max_run_s) as deadline:
                yield
        except TimeoutError:
            if not deadline.expired():  # the block's own timeout, not ours
                raise
            raise self._refusal(f"not answered within {self.limits.max_run_s:g} s") from None
        finally:
            self._running -= 1
            self._slots.release()
