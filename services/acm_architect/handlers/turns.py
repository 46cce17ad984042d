"""acm.turns.v1 → make sure the turn's agent has a schema (idempotent: an existing one is kept)."""

from __future__ import annotations

from dataclasses import dataclass

from acm.auth import verify_envelope
from acm.domain.scope import Action
from acm.envelopes import decode
from acm.ports.bus import Record
from acm.ports.owners import KeySource
from acm.ports.stores import AuditLog
from acm_architect.usecases import EnsureAgent


@dataclass
class TurnsHandler:
    ensure: EnsureAgent
    keys: KeySource  # the gateway's API keys (acm.ports.owners)
    audit: AuditLog

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "turn_received")
        # No schema for an unverified agent, nor for a turn its key may not ingest (the gateway's Ingest right:
        # a direct publisher's turn for another customer gives no agent a schema).
        await verify_envelope(env, scope, self.keys, self.audit, Action.INGEST)
        await self.ensure(scope)  # the schema event is traced as a child of this consumer span
