"""acm.prefetch.pools.v1 → warm this gateway for the session's next Fetch (idempotent: warming twice
loads the same things twice). Hints older than ``max_age_s`` are skipped: a replica that fell behind
would only warm sessions whose next Fetch has already happened."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from acm.convert import from_ts
from acm.domain.models import utcnow
from acm.domain.scope import Scope
from acm.envelopes import decode
from acm.ports.bus import Record


@dataclass
class PoolReadyHandler:
    warm: Callable[[Scope, str], Awaitable[None]]  # acm.read.warmup.WarmUp
    max_age_s: float = 30.0
    now: Callable[[], datetime] = utcnow  # the clock a hint's age is measured on
    skipped_late: int = 0

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "pool_ready")
        sent = from_ts(env.occurred_at)
        if sent is None or (self.now() - sent).total_seconds() > self.max_age_s:
            self.skipped_late += 1
            return
        await self.warm(scope, env.pool_ready.version)
