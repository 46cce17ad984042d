"""acm.compaction.requests.v1 → a verified compaction of the session while it is over the soft limit
(recomputed from the owners' data, so a redelivered request is harmless: the session is under the limit, or
the compaction loses the version check)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from acm.envelopes import decode
from acm.ports.bus import PermanentError, Record
from acm.read.session import SessionNotFound
from acm_compact.usecases import CompactSession

log = logging.getLogger("acm.compact")


@dataclass
class CompactionRequestsHandler:
    compact: CompactSession

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "compaction_requested")
        if not scope.session_id:
            raise PermanentError("a compaction request needs scope.session_id")
        budget = env.compaction_requested.budget_tokens
        if budget <= 0:
            raise PermanentError(f"compaction request {env.event_id} has no budget")
        try:
            await self.compact.if_due(scope, budget, env.compaction_requested.turn_id)
        except SessionNotFound as exc:
            # Forgotten between the request and now: nothing to do, and nothing to retry.
            log.info("compaction request %s skipped: %s", env.event_id, exc)
