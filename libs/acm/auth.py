"""Authenticating API keys (gateway) and signed envelopes (consumers of agent-published topics)."""

from __future__ import annotations

import secrets

from acm.domain.models import utcnow
from acm.domain.scope import Scope, check_id
from acm.envelopes import key_hash, signature_valid
from acm.ports.bus import PermanentError
from acm.ports.stores import ApiKey, ApiKeyRepo, AuditLog
from acm.v1 import events_pb2


async def verify_envelope(env: events_pb2.Envelope, scope: Scope, api_keys: ApiKeyRepo, audit: AuditLog) -> None:
    """Raise PermanentError (→ dead-letter topic, never a store) unless a live key of the claimed
    client signed this envelope."""
    key = await api_keys.by_id(scope.client_id, env.key_id) if env.key_id else None
    if key is None or key.revoked or not signature_valid(env, key.key_hash):
        await audit.record(scope.client_id, "event.rejected", f"unauthenticated scope on event {env.event_id}")
        raise PermanentError(f"signature does not verify for client {scope.client_id!r} (key id {env.key_id!r})")


KEY_PREFIX = "acm"


def new_api_key() -> tuple[str, str]:
    """(key_id, secret). The secret embeds its key id, so an SDK holding it can sign envelopes."""
    key_id = secrets.token_hex(6)
    return key_id, f"{KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(24)}"


def key_id_of(secret: str) -> str:
    parts = secret.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX:
        raise ValueError("not an ACM API key")
    return parts[1]


async def create_api_key(api_keys: ApiKeyRepo, client_id: str, name: str) -> tuple[ApiKey, str]:
    """Store a new key for the client (hashed) and return it with its secret, shown once."""
    check_id("client_id", client_id)
    key_id, secret = new_api_key()
    key = ApiKey(key_id=key_id, client_id=client_id, key_hash=key_hash(secret), name=name, created_at=utcnow())
    await api_keys.add(key)
    return key, secret
