"""acm.turns.v1 → make sure the turn's agent has a schema (idempotent: an existing one is kept)."""

from __future__ import annotations

from dataclasses import dataclass

from acm.auth import verify_envelope
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
        await verify_envelope(env, scope, self.keys, self.audit)  # no schema for an unverified agent
        await self.ensure(scope)  # the schema event is traced as a child of this consumer span
