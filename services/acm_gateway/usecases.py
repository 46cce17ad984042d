"""The gateway's use cases: authenticate, check scope, then publish or ask the right service."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from acm.auth import key_id_of
from acm.domain.bundle import ContextBundle
from acm.domain.compaction.record import CompactionRecord
from acm.domain.errors import InvalidRequest
from acm.domain.models import Job, JobStatus, Turn, new_id
from acm.domain.pii import PiiRules, redact_turn
from acm.domain.retrieved import RetrievalQuery
from acm.domain.schema import AgentSchema
from acm.domain.scope import Action, ForgetLevel, Scope, denial
from acm.domain.tokens import ENCODINGS
from acm.envelopes import key_hash
from acm.metrics import job_reached, timed_fetch
from acm.ports.compactor import Compactor
from acm.ports.owners import SchemaSource
from acm.ports.reader import ContextReader
from acm.ports.stores import ApiKey, ApiKeyRepo, AuditLog, DeadLetterRepo, JobRepo
from acm.sealing import KeyShredder, forget_owners
from acm_gateway.errors import NotFound, PermissionDenied, Unauthenticated, Unavailable


class ScopeClaim(Protocol):
    """The scope a request claims, before it is checked against the caller's key (the wire's Scope message)."""

    client_id: str
    customer_id: str
    user_id: str
    agent_id: str
    session_id: str


class Events(Protocol):
    """What the gateway publishes (acm_gateway.events.BusEvents); raises Unavailable when the bus refuses."""

    async def turn_received(self, key: ApiKey, turn: Turn, job_id: str, event_id: str, traceparent: str) -> None: ...

    async def forget_requested(
        self, key: ApiKey, scope: Scope, level: ForgetLevel, job_id: str, traceparent: str
    ) -> None: ...


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

    async def scope(self, key: ApiKey, claim: ScopeClaim) -> Scope:
        """The request's scope inside the key's client. Raises ScopeError for a malformed scope."""
        if claim.client_id and claim.client_id != key.client_id:
            await self.audit.record(
                key.client_id, "scope.denied", f"key {key.key_id} asked for client {claim.client_id[:64]!r}"
            )
            raise PermissionDenied("scope.client_id does not match the API key's client; leave it empty")
        return Scope(key.client_id, claim.customer_id, claim.user_id, claim.agent_id, claim.session_id)

    async def authorize(self, key: ApiKey, claim: ScopeClaim, action: Action) -> Scope:
        """The request's scope, once the key's role and grant allow ``action`` in it; a refusal is audited
        and raised as PermissionDenied with what to do instead."""
        scope = await self.scope(key, claim)
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


@dataclass
class AcceptTurn:
    events: Events
    jobs: JobRepo
    schemas: SchemaSource  # the architect's (acm.ports.owners)
    max_turn_bytes: int  # the edge checks each turn against it (acm.convert.turn_from_pb)
    secret_model: bool = True  # the learned second opinion for secrets after the rules (ACM_SECRET_MODEL)

    def rules(self, schema: AgentSchema) -> PiiRules:
        """What is redacted for an agent: its schema's privacy choices, with the learned model or not."""
        return PiiRules.of(schema.privacy, self.secret_model)

    async def __call__(self, key: ApiKey, turn: Turn, event_id: str, traceparent: str) -> str:
        """Publishes the checked ``turn`` as event ``event_id``; returns the ingest job's id."""
        job_id = new_id()
        # Redacted before it is published: a secret never reaches the bus, a log or a store. (Ingest
        # redacts again, for agents that publish to Kafka directly.)
        schema = await self.schemas.latest(turn.scope)
        rules = self.rules(schema)
        # Every string the turn carries: content (JSON tool output and tool-call arguments decoded first),
        # tool name, metadata keys and values.
        redacted, _ = redact_turn(turn, rules)
        await self.events.turn_received(key, redacted, job_id, event_id, traceparent)
        await self.jobs.create(Job(job_id=job_id, scope=turn.scope, kind="ingest"))
        job_reached("ingest", JobStatus.PENDING)
        return job_id


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
    """The Fetch RPC once authenticated and authorised: the request checked, then one call to the read side
    (acm.read, in this process in both modes)."""

    reader: ContextReader
    default_budget: int
    max_budget: int

    async def __call__(self, request: RetrievalQuery) -> ContextBundle:
        """``request.budget_tokens`` 0: the default budget. Timed as acm.fetch.duration, by outcome."""
        return await timed_fetch(self._fetch)(request)

    async def _fetch(self, request: RetrievalQuery) -> ContextBundle:
        budget = request.budget_tokens or self.default_budget
        if budget < 0 or budget > self.max_budget:
            raise InvalidRequest(f"budget_tokens must be between 1 and {self.max_budget} (got {budget})")
        if request.encoding and request.encoding not in ENCODINGS:  # the gateway counts a session's context in it
            raise InvalidRequest(f"encoding {request.encoding!r} is not supported; use one of {', '.join(ENCODINGS)}")
        return await self.reader.fetch(replace(request, budget_tokens=budget))


@dataclass
class CompactNow:
    """The Compact RPC: the compact service compacts the session (in-process in embedded mode, over gRPC in
    distributed mode); it checks the request and owns the session's working memory."""

    compactor: Compactor | None

    async def __call__(self, scope: Scope, budget_tokens: int) -> CompactionRecord:
        if self.compactor is None:
            raise Unavailable("no compact service is configured for this gateway")
        return await self.compactor.compact(scope, budget_tokens)


@dataclass
class RequestForget:
    events: Events
    jobs: JobRepo
    audit: AuditLog
    data_keys: KeyShredder | None = None  # the bus's data keys (acm.sealing); None: the bus is not sealed
    dead_letters: DeadLetterRepo | None = None  # the gateway's copy of the dead letters (ListDeadLetters)

    async def __call__(self, key: ApiKey, scope: Scope, level_name: str, traceparent: str) -> str:
        level = forget_level(level_name)
        if level is ForgetLevel.SESSION and not scope.session_id:
            raise InvalidRequest("forgetting a session needs scope.session_id")
        # The forgotten scope's jobs go now (their ids and counts are about it); the forget job is made after.
        await self.jobs.forget(scope, level)
        if self.dead_letters is not None:
            await self.dead_letters.forget(scope, level)  # their keys name the forgotten scope
        owners = forget_owners(level, scope)
        if self.data_keys is not None and owners is not None:
            # Crypto-shredding: every event of theirs still on the bus can no longer be opened (acm.sealing).
            await self.data_keys.destroy(owners)
        job_id = new_id()
        await self.events.forget_requested(key, scope, level, job_id, traceparent)
        await self.jobs.create(Job(job_id=job_id, scope=scope, kind="forget"))
        job_reached("forget", JobStatus.PENDING)
        await self.audit.record(scope.client_id, "forget.requested", f"{level.value} of {scope.session_key}")
        return job_id
