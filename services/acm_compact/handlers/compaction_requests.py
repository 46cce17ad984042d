"""acm.compaction.requests.v1 → trim the session (recomputed from the store, so redelivery is harmless)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from acm.envelopes import decode
from acm.ports.bus import PermanentError, Record
from acm_compact.usecases import TrimSession

log = logging.getLogger("acm.compact")


@dataclass
class CompactionRequestsHandler:
    trim: TrimSession

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "compaction_requested")
        if not scope.session_id:
            raise PermanentError("a compaction request needs scope.session_id")
        budget = env.compaction_requested.budget_tokens
        if budget <= 0:
            raise PermanentError(f"compaction request {env.event_id} has no budget")
        result = await self.trim(scope, budget)
        log.info(
            "session %s: kept %d tokens, trimmed %d turns (%d tokens)",
            scope.session_key,
            result.tokens,
            result.trimmed_turns,
            result.trimmed_tokens,
        )
