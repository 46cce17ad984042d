"""The gateway's key cache: a revoked key keeps working on a replica for at most ttl_s, counted on the clock
the Authenticator is given (advanced here instead of sleeping)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from acm.auth import create_api_key
from acm.domain.scope import Scope
from acm.ports.stores import ApiKey, AuditEntry
from acm_gateway.errors import Unauthenticated
from acm_gateway.usecases import Authenticator
from tests.support.clock import ShiftedClock


class Keys:
    """An ApiKeyRepo in a dict."""

    def __init__(self) -> None:
        self.by_hash_: dict[str, ApiKey] = {}

    async def add(self, key: ApiKey) -> None:
        self.by_hash_[key.key_hash] = key

    async def by_hash(self, key_hash: str) -> ApiKey | None:
        return self.by_hash_.get(key_hash)

    async def by_id(self, client_id: str, key_id: str) -> ApiKey | None:
        return next((k for k in self.by_hash_.values() if (k.client_id, k.key_id) == (client_id, key_id)), None)

    async def of_client(self, client_id: str) -> list[ApiKey]:
        return [k for k in self.by_hash_.values() if k.client_id == client_id]


class NoAudit:
    async def record(self, client_id: str, action: str, detail: str) -> None:
        pass

    async def list(self, scope: Scope, limit: int = 100) -> list[AuditEntry]:
        return []


async def test_a_revoked_key_works_until_its_cached_entry_expires() -> None:
    keys, clock = Keys(), ShiftedClock()
    key, secret = await create_api_key(keys, "c1", "test")
    auth = Authenticator(keys, NoAudit(), ttl_s=30.0, clock=clock.monotonic)
    assert (await auth.authenticate(secret)).key_id == key.key_id
    keys.by_hash_[key.key_hash] = replace(key, revoked=True)
    clock.advance(29)
    assert (await auth.authenticate(secret)).key_id == key.key_id  # still cached on this replica
    clock.advance(2)
    with pytest.raises(Unauthenticated, match="revoked"):
        await auth.authenticate(secret)
