"""Authenticating API keys (gateway), signed envelopes (consumers of agent-published topics) and service
tokens (internal gRPC between services)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import sys
import time

import grpc
from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from acm.domain.models import utcnow
from acm.domain.scope import ADMIN, Action, Grant, Scope, check_id, denial
from acm.envelopes import key_hash, signature_valid
from acm.ports.bus import PermanentError
from acm.ports.owners import KeySource
from acm.ports.stores import ApiKey, ApiKeyRepo, AuditLog
from acm.telemetry import traceparent_of_current_span
from acm.v1 import common_pb2, events_pb2


async def verify_envelope(
    env: events_pb2.Envelope, scope: Scope, keys: KeySource, audit: AuditLog, action: Action | None = None
) -> ApiKey:
    """The key that signed the envelope. Raise PermanentError (→ dead-letter topic, never a store) unless a live
    key of the claimed client signed it and, given ``action``, that key's role and grant allow it in the claimed
    scope: the rule the gateway applies to the same request (acm.domain.scope.denial), so a key publishing straight
    to the bus has no more rights than through the gateway. ``keys``: the gateway's, which owns them
    (acm.ports.owners); when it cannot answer, its Unavailable propagates and the consumer retries the record."""
    key = await keys.by_id(scope.client_id, env.key_id) if env.key_id else None
    if key is None or key.revoked or not signature_valid(env, key.key_hash):
        await audit.record(scope.client_id, "event.rejected", f"unauthenticated scope on event {env.event_id}")
        raise PermanentError(f"signature does not verify for client {scope.client_id!r} (key id {env.key_id!r})")
    reason = denial(key.grant, scope, action) if action is not None else ""
    if reason:
        where = f"customer {scope.customer_id!r}" + (f", user {scope.user_id!r}" if scope.user_id else "")
        # Audited as the gateway audits a denied request, in this consumer's own audit log.
        await audit.record(
            scope.client_id,
            "request.denied",
            f"key {key.key_id} ({key.grant.role}) {action} in {where} on event {env.event_id}: {reason}",
        )
        raise PermanentError(f"key {key.key_id} may not {action} for {where}: {reason}")
    return key


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


async def create_api_key(api_keys: ApiKeyRepo, client_id: str, name: str, grant: Grant = ADMIN) -> tuple[ApiKey, str]:
    """Store a new key for the client (hashed) and return it with its secret, shown once. Without a grant
    the key is an admin key (as every key made before roles existed)."""
    check_id("client_id", client_id)
    key_id, secret = new_api_key()
    key = ApiKey(
        key_id=key_id, client_id=client_id, key_hash=key_hash(secret), name=name, created_at=utcnow(), grant=grant
    )
    await api_keys.add(key)
    return key, secret


# --- service tokens: the gateway (and anticipate) calling retrieve and architect over internal gRPC ---------

SERVICE_TOKEN_HEADER = "x-acm-service-token"
SERVICE_TOKEN_MAX_SKEW_S = 60
MIN_SERVICE_SECRET_CHARS = 16


class ServiceTokenSettings(BaseSettings):
    """ACM_SERVICE_TOKEN_SECRET: shared by the gateway, anticipate, retrieve and architect in distributed mode
    (embedded mode calls retrieve and architect in-process and needs none)."""

    model_config = SettingsConfigDict(env_prefix="ACM_", extra="ignore", frozen=True)

    service_token_secret: SecretStr = SecretStr("")


def required_service_secret(secret: SecretStr | None = None) -> str:
    """The secret (from ``secret`` or the environment), or exit naming the variable: a distributed service
    never serves or calls the internal API unauthenticated."""
    value = (secret if secret is not None else ServiceTokenSettings().service_token_secret).get_secret_value()
    if len(value) < MIN_SERVICE_SECRET_CHARS:
        print(
            "cannot start, fix these environment variables:\n"
            f"  ACM_SERVICE_TOKEN_SECRET: required in distributed mode, at least {MIN_SERVICE_SECRET_CHARS} "
            "characters, the same in the gateway, anticipate, retrieve, architect and compact "
            "(e.g. openssl rand -hex 32)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    return value


def _service_mac(secret: str, issued: int, method: str, scope: common_pb2.Scope) -> str:
    ids = "/".join((scope.client_id, scope.customer_id, scope.user_id, scope.agent_id, scope.session_id))
    payload = f"v1\n{issued}\n{method}\n{ids}".encode()
    return hmac.new(secret.encode(), payload, hashlib.sha256).hexdigest()


def service_token(secret: str, method: str, scope: common_pb2.Scope, now: float | None = None) -> str:
    """A token for one internal call: an HMAC-SHA256 (the shared ACM_SERVICE_TOKEN_SECRET) of the method,
    the request's scope and the time, so it vouches for that scope only, for a minute."""
    issued = int(time.time() if now is None else now)
    return f"v1.{issued}.{_service_mac(secret, issued, method, scope)}"


def service_token_problem(
    secret: str, token: str, method: str, scope: common_pb2.Scope, now: float | None = None
) -> str:
    """Why ``token`` does not vouch for this call ("" when it does)."""
    if not token:
        return f"no service token: internal calls must carry metadata {SERVICE_TOKEN_HEADER!r}"
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != "v1" or not parts[1].isdigit():
        return "the service token is malformed"
    issued = int(parts[1])
    if abs((time.time() if now is None else now) - issued) > SERVICE_TOKEN_MAX_SKEW_S:
        return f"the service token is more than {SERVICE_TOKEN_MAX_SKEW_S} s old or ahead: check the clocks"
    if not hmac.compare_digest(parts[2], _service_mac(secret, issued, method, scope)):
        return "the service token does not verify for this scope (is ACM_SERVICE_TOKEN_SECRET the same everywhere?)"
    return ""


def call_metadata(secret: str, method: str, scope: common_pb2.Scope) -> tuple[tuple[str, str], ...]:
    """An internal call's metadata: the caller's trace, carried on, and (``secret`` set) a service token for
    ``method`` in ``scope``."""
    trace = ("traceparent", traceparent_of_current_span())
    return (trace, (SERVICE_TOKEN_HEADER, service_token(secret, method, scope))) if secret else (trace,)


async def check_service_call(
    context: grpc.aio.ServicerContext, secret: str, method: str, scope: common_pb2.Scope
) -> None:
    """In an internal servicer: abort with UNAUTHENTICATED unless the call carries a valid service token.
    An empty ``secret`` checks nothing (a servicer built without one, e.g. in a test)."""
    if not secret:
        return
    token = next((v for k, v in (context.invocation_metadata() or ()) if k == SERVICE_TOKEN_HEADER), "")
    problem = service_token_problem(secret, token if isinstance(token, str) else "", method, scope)
    if problem:
        logging.getLogger("acm.auth").warning("internal %s call refused: %s", method, problem)
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, problem)
