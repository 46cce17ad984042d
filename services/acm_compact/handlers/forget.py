"""acm.forget.v1 → drop the scope's working contexts."""

from __future__ import annotations

from dataclasses import dataclass

from acm.auth import verify_envelope
from acm.convert import forget_level
from acm.envelopes import decode
from acm.ports.bus import Record
from acm.ports.stores import ApiKeyRepo, AuditLog
from acm_compact.usecases import DropWorkingContext


@dataclass
class ForgetHandler:
    drop: DropWorkingContext
    api_keys: ApiKeyRepo
    audit: AuditLog

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "forget_requested")
        await verify_envelope(env, scope, self.api_keys, self.audit)
        await self.drop(scope, forget_level(env))
