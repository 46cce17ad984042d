"""acm.compaction.requests.v1 → a verified compaction of the session while it is over the soft limit
(recomputed from the owners' data, so a redelivered request is harmless: the session is under the limit, or
the compaction loses the version check).

Ingest publishes these requests unsigned, as every ACM service publishes its own events (acm.memories.v1,
acm.memories.indexed.v1, acm.jobs.v1): those topics are told apart from the agents' by who may produce to them,
not by a signature. A request signed with a client's API key (key_id or signature set) is an agent's own,
published past the gateway: it needs that key's Compact right in the claimed scope, the gateway's rule for the
Compact RPC (acm.auth.verify_envelope), or it is dead-lettered with the reason and audited as request.denied."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from acm.auth import verify_envelope
from acm.domain.scope import Action
from acm.envelopes import decode
from acm.ports.bus import PermanentError, Record
from acm.ports.owners import KeySource
from acm.ports.stores import AuditLog
from acm.read.session import SessionNotFound
from acm_compact.usecases import CompactSession

log = logging.getLogger("acm.compact")


@dataclass
class CompactionRequestsHandler:
    compact: CompactSession
    keys: KeySource  # the gateway's API keys (acm.ports.owners)
    audit: AuditLog

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "compaction_requested")
        if env.key_id or env.signature:
            # A client key's request (a signature without a key id does not verify either).
            await verify_envelope(env, scope, self.keys, self.audit, Action.COMPACT)
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
