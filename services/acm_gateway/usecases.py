"""The gateway's use cases: authenticate, check scope, then publish or ask the right service."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from acm import topics
from acm.auth import key_id_of
from acm.convert import scope_from_pb, scope_to_pb, turn_from_pb
from acm.domain.errors import InvalidRequest
from acm.domain.models import Job, new_id
from acm.domain.pii import PiiRules, redact_turn
from acm.domain.schema import DEFAULT_AGENT, default_schema
from acm.domain.scope import Action, ForgetLevel, Scope, denial
from acm.domain.tokens import ENCODINGS
from acm.envelopes import envelope, key_hash, sign
from acm.ports.bus import EventBus
from acm.ports.compactor import Compactor
from acm.ports.retriever import Retriever
from acm.ports.stores import ApiKey, ApiKeyRepo, AuditLog, JobRepo, SchemaRepo
from acm.session_memory import SessionNotFound
from acm.v1 import common_pb2, events_pb2, gateway_pb2, retrieve_pb2
from acm_gateway.errors import NotFound, PermissionDenied, Unauthenticated, Unavailable
from acm_gateway.session_context import SessionContext, compaction_to_pb

FORGET_LEVELS_PB = {
    ForgetLevel.SESSION: events_pb2.FORGET_LEVEL_SESSION,
    ForgetLevel.USER: events_pb2.FORGET_LEVEL_USER,
    ForgetLevel.CUSTOMER: events_pb2.FORGET_LEVEL_CUSTOMER,
    ForgetLevel.CLIENT: events_pb2.FORGET_LEVEL_CLIENT,
}


@dataclass
class Authenticator:
    api_keys: ApiKeyRepo
    audit: AuditLog
    ttl_s: float = 30.0  # how long a revoked key may still work on this replica
    clock: Callable[[], float] = time.monotonic  # what ttl_s counts on (a test advances its own)
    _known: dict[str, tuple[float, ApiKey]] = field(default_factory=dict)

    async def authenticate(self, secret: str | None) -> ApiKey:
        if not secret:
            raise Unauthenticated("no API key: send metadata 'authorization: Bearer <key>'")
        try:
            key_id_of(secret)
        except ValueError:
            raise Unauthenticated("the API key is malformed (expected acm_<id>_<secret>)") from None
        hashed = key_hash(secret)
        hit = self._known.get(hashed)
        if hit and hit[0] > self.clock():
            return hit[1]
        key = await self.api_keys.by_hash(hashed)
        if key is None or key.revoked:
            raise Unauthenticated("the API key is unknown or revoked")
        self._known[hashed] = (self.clock() + self.ttl_s, key)
        return key

    async def scope(self, key: ApiKey, pb: common_pb2.Scope) -> Scope:
        """The request's scope inside the key's client. Raises ScopeError for a malformed scope."""
        if pb.client_id and pb.client_id != key.client_id:
            await self.audit.record(
                key.client_id, "scope.denied", f"key {key.key_id} asked for client {pb.client_id[:64]!r}"
            )
            raise PermissionDenied("scope.client_id does not match the API key's client; leave it empty")
        return scope_from_pb(pb, client_id=key.client_id)

    async def authorize(self, key: ApiKey, pb: common_pb2.Scope, action: Action) -> Scope:
        """The request's scope, once the key's role and grant allow ``action`` in it; a refusal is audited
        and raised as PermissionDenied with what to do instead."""
        scope = await self.scope(key, pb)
        reason = denial(key.grant, scope, action)
        if reason:
            where = "/".join((scope.customer_id, scope.user_id))
            await self.audit.record(
                key.client_id, "request.denied", f"key {key.key_id} ({key.grant.role}) {action} in {where}: {reason}"
            )
            raise PermissionDenied(reason)
        return scope


def forget_level(name: str) -> ForgetLevel:
    """A Forget request's level ("" → user)."""
    try:
        return ForgetLevel(name or "user")
    except ValueError:
        raise InvalidRequest(f"level {name[:32]!r} is not one of: session, user, customer, client") from None


def _signed(env: events_pb2.Envelope, key: ApiKey) -> bytes:
    sign(env, key.key_id, key.key_hash)
    return env.SerializeToString()


async def _publish(bus: EventBus, topic: str, key: str, value: bytes) -> None:
    try:
        await bus.publish(topic, key, value)
    except Exception as exc:
        # Nothing was acknowledged, so nothing is reported as accepted: the caller may retry.
        raise Unavailable(f"the event bus did not accept the event ({type(exc).__name__}); retry later") from exc


@dataclass
class AcceptTurn:
    bus: EventBus
    jobs: JobRepo
    schemas: SchemaRepo
    max_turn_bytes: int

    async def __call__(
        self, key: ApiKey, scope: Scope, turn: common_pb2.Turn, traceparent: str
    ) -> gateway_pb2.IngestResponse:
        job_id = new_id()
        env = envelope(scope, traceparent=traceparent)
        turn_id = turn.turn_id or env.event_id
        checked = turn_from_pb(turn, scope, self.max_turn_bytes, turn_id)  # raises InvalidTurn
        body = env.turn_received
        body.job_id = job_id
        body.turn.CopyFrom(turn)
        # Redacted before it is published: a secret never reaches the bus, a log or a store. (Ingest
        # redacts again, for agents that publish to Kafka directly.)
        schema = await self.schemas.latest(scope, scope.agent_id or DEFAULT_AGENT) or default_schema(DEFAULT_AGENT)
        rules = PiiRules(emails=schema.privacy.redact_emails, phones=schema.privacy.redact_phones)
        # Every string the turn carries: content (JSON tool output and tool-call arguments decoded first),
        # tool name, metadata keys and values.
        redacted, _ = redact_turn(checked, rules)
        body.turn.content = redacted.content
        body.turn.tool_name = redacted.tool_name
        body.turn.metadata.clear()
        body.turn.metadata.update(redacted.metadata)
        body.turn.turn_id = turn_id
        body.turn.occurred_at.FromDatetime(checked.occurred_at)
        await _publish(self.bus, topics.TURNS, scope.session_key, _signed(env, key))
        await self.jobs.create(Job(job_id=job_id, scope=scope, kind="ingest"))
        return gateway_pb2.IngestResponse(job_id=job_id, event_id=env.event_id)


@dataclass
class GetJob:
    jobs: JobRepo

    async def __call__(self, scope: Scope, job_id: str) -> Job:
        job = await self.jobs.get(scope, job_id) if job_id else None
        if job is None:
            raise NotFound(
                f"no job {job_id[:64]!r} for this customer and user (a job is readable by the scope that created it)"
            )
        return job


@dataclass
class FetchContext:
    retriever: Retriever
    default_budget: int
    max_budget: int
    session: SessionContext | None = None  # assembles a session's context when the scope names one

    async def __call__(self, scope: Scope, request: gateway_pb2.FetchRequest) -> gateway_pb2.FetchResponse:
        budget = request.budget_tokens or self.default_budget
        if budget < 0 or budget > self.max_budget:
            raise InvalidRequest(f"budget_tokens must be between 1 and {self.max_budget} (got {budget})")
        if request.encoding and request.encoding not in ENCODINGS:  # the gateway counts a session's context in it
            raise InvalidRequest(f"encoding {request.encoding!r} is not supported; use one of {', '.join(ENCODINGS)}")
        if scope.session_id and self.session is not None:
            assembled = await self.session(scope, request, budget)
            if assembled is not None:
                return assembled
        answer = await self.retriever.retrieve(
            retrieve_pb2.RetrieveRequest(
                scope=scope_to_pb(scope),
                query=request.query,
                budget_tokens=budget,
                encoding=request.encoding,
                tiers=list(request.tiers),
                as_of=request.as_of,
            )
        )
        return gateway_pb2.FetchResponse(
            memories=answer.memories,
            total_tokens=answer.total_tokens,
            budget_tokens=budget,
            dropped=answer.dropped,
            encoding=request.encoding or "cl100k_base",
            from_prefetch=answer.from_prefetch,
        )


@dataclass
class CompactNow:
    """The Compact RPC: the compact service's use case, run here against the shared stores (its swap is a
    compare-and-swap, so it may race the service's own compaction safely)."""

    compactor: Compactor

    async def __call__(self, scope: Scope, budget_tokens: int) -> gateway_pb2.CompactResponse:
        if not scope.session_id:
            raise InvalidRequest("Compact needs scope.session_id")
        if budget_tokens < 0:
            raise InvalidRequest(f"budget_tokens must be ≥ 0 (got {budget_tokens})")
        try:
            record, _ = await self.compactor(scope, budget_tokens)
        except SessionNotFound as exc:
            raise NotFound(str(exc)) from None
        return gateway_pb2.CompactResponse(compaction=compaction_to_pb(record))


@dataclass
class RequestForget:
    bus: EventBus
    jobs: JobRepo
    audit: AuditLog

    async def __call__(self, key: ApiKey, scope: Scope, level_name: str, traceparent: str) -> str:
        level = forget_level(level_name)
        if level is ForgetLevel.SESSION and not scope.session_id:
            raise InvalidRequest("forgetting a session needs scope.session_id")
        # The forgotten scope's jobs go now (their ids and counts are about it); the forget job is made after.
        await self.jobs.forget(scope, level)
        job_id = new_id()
        env = envelope(scope, traceparent=traceparent)
        env.forget_requested.job_id = job_id
        env.forget_requested.level = FORGET_LEVELS_PB[level]
        await _publish(self.bus, topics.FORGET, scope.session_key, _signed(env, key))
        await self.jobs.create(Job(job_id=job_id, scope=scope, kind="forget"))
        await self.audit.record(scope.client_id, "forget.requested", f"{level.value} of {scope.session_key}")
        return job_id
