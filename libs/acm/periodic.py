"""A background job run every N seconds, started and stopped with its service.

The first run comes one interval after start() (a restarting replica does not sweep at once). A run that
raises is logged and the next one still comes. stop() lets a run in progress finish (up to ``grace_s``)
rather than cutting it between two of its writes, then cancels."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger("acm.periodic")


class Periodic:
    def __init__(self, name: str, job: Callable[[], Awaitable[object]], every_s: float, grace_s: float = 5.0) -> None:
        if every_s < 0:
            raise ValueError(f"{name}: every_s must be >= 0 (0 disables), not {every_s}")
        self.name = name
        self.every_s = every_s  # 0: never runs
        self.runs = 0  # finished runs, failed ones included
        self.failures = 0
        self._job = job
        self._grace_s = grace_s
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        if self.every_s == 0:
            log.info("%s disabled (interval 0)", self.name)
            return
        if self._task is None:
            self._stop.clear()
            self._task = asyncio.create_task(self._loop(), name=f"periodic:{self.name}")
            log.info("%s every %.0fs", self.name, self.every_s)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        self._stop.set()
        try:
            # wait_for cancels the task if the grace runs out.
            await asyncio.wait_for(task, self._grace_s)
        except TimeoutError:
            log.warning("%s: the run in progress was cancelled after %.1fs", self.name, self._grace_s)

    async def close(self) -> None:
        """Stop, so a service can list the runner with the resources it closes (before the stores it uses)."""
        await self.stop()

    async def run_once(self) -> object:
        """One run now, in the caller's task (for tests and tools); exceptions propagate."""
        return await self._job()

    async def _loop(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._stop.wait(), self.every_s)
                return  # stop() was called while waiting
            except TimeoutError:
                pass
            try:
                await self._job()
            except Exception:
                self.failures += 1
                log.exception("%s failed; the next run is in %.0fs", self.name, self.every_s)
            self.runs += 1
