"""acm.prefetch.signals.v1 → warm the session for what the agent says it is about to ask. Agents publish it
themselves, signed with their key, which must hold Fetch's right in the claimed scope. A signal for a session
anticipate does not know (never written to, or forgotten) is dropped and counted."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from acm.auth import verify_envelope
from acm.domain.scope import Action
from acm.envelopes import decode
from acm.ports.bus import Record
from acm.ports.owners import KeySource
from acm.ports.stores import AuditLog
from acm_anticipate.usecases import SignalCounters, WarmSession

log = logging.getLogger("acm.anticipate")


@dataclass
class PrefetchSignalsHandler:
    warm: WarmSession
    keys: KeySource  # the gateway's API keys (acm.ports.owners)
    audit: AuditLog
    counters: SignalCounters = field(default_factory=SignalCounters)

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "prefetch_signal")
        # A signal asks for the session's memories ahead of a Fetch: the gateway's Fetch right in the claimed scope,
        # so a key builds no pool where it could not fetch.
        await verify_envelope(env, scope, self.keys, self.audit, Action.FETCH)
        if not scope.session_id or not await self.warm.known(scope):
            self.counters.dropped_unknown_session += 1
            log.info("prefetch signal for an unknown or forgotten session dropped (%s)", scope.session_key)
            return
        signal = env.prefetch_signal
        await self.warm(scope, signal_query=" ".join([signal.query, *signal.entity_names]).strip())
        self.counters.accepted += 1
