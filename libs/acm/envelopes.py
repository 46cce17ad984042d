"""Building, signing, verifying and decoding event envelopes.

Agents may publish turns straight to Kafka, so a turn's claimed scope is authenticated by an
HMAC-SHA256 signature keyed by the client's API-key hash (the server stores only that hash; an SDK
derives it from the key it holds). Ingest verifies it against the key id named in the envelope. Such a publisher
seals the turn first, with the key the gateway's GetSealingKey gives for its scope (acm.sealing.seal_for_publishing),
so the signature covers the sealed bytes.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime

from acm.convert import scope_from_pb, scope_to_pb, ts
from acm.domain.models import new_id, utcnow
from acm.domain.scope import Scope, ScopeError
from acm.ports.bus import PermanentError
from acm.telemetry import traceparent_of_current_span
from acm.v1 import events_pb2

SCHEMA_VERSION = 1


def key_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_traceparent() -> str:
    return f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"


def envelope(
    scope: Scope, *, event_id: str | None = None, occurred_at: datetime | None = None, traceparent: str = ""
) -> events_pb2.Envelope:
    """An envelope without a body; set exactly one body field on it (e.g. env.turn_received.CopyFrom(...)).

    Without a `traceparent` the event's parent is the current span (so an event published while handling
    another one is a child of that consumer span); with no span current it starts a new trace."""
    return events_pb2.Envelope(
        event_id=event_id or new_id(),
        scope=scope_to_pb(scope),
        occurred_at=ts(occurred_at or utcnow()),
        schema_version=SCHEMA_VERSION,
        traceparent=traceparent or traceparent_of_current_span() or new_traceparent(),
    )


def _signing_payload(env: events_pb2.Envelope) -> bytes:
    unsigned = events_pb2.Envelope()
    unsigned.CopyFrom(env)
    unsigned.signature = ""
    body = unsigned.WhichOneof("body")
    if unsigned.sealed and body is not None:
        # A sealed envelope is signed as sent (acm.sealing): its body, opened on delivery, is not signed again.
        unsigned.ClearField(body)
    return unsigned.SerializeToString(deterministic=True)


def sign(env: events_pb2.Envelope, key_id: str, hashed_key: str) -> None:
    env.key_id = key_id
    env.signature = hmac.new(hashed_key.encode(), _signing_payload(env), hashlib.sha256).hexdigest()


def signature_valid(env: events_pb2.Envelope, hashed_key: str) -> bool:
    expected = hmac.new(hashed_key.encode(), _signing_payload(env), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, env.signature)


def decode(value: bytes, expected_body: str) -> tuple[events_pb2.Envelope, Scope]:
    """Parse and check an envelope; PermanentError (→ dead-letter topic) says what is wrong."""
    env = events_pb2.Envelope()
    try:
        env.ParseFromString(value)
    except Exception as exc:  # protobuf raises DecodeError, but be safe with garbage bytes
        raise PermanentError(f"not an acm.v1.Envelope: {exc}") from exc
    if not env.event_id:
        raise PermanentError("envelope has no event_id")
    body = env.WhichOneof("body")
    if body != expected_body:
        raise PermanentError(f"expected a {expected_body} body, got {body or 'none'}")
    if env.schema_version > SCHEMA_VERSION:
        raise PermanentError(f"schema_version {env.schema_version} is newer than this consumer ({SCHEMA_VERSION})")
    try:
        scope = scope_from_pb(env.scope)
    except ScopeError as exc:
        raise PermanentError(f"bad scope: {exc}") from exc
    return env, scope
