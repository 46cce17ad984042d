"""gRPC servicer for acm.v1.Gateway: metadata → key, errors → status codes with actionable messages."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from acm.convert import info_to_pb, ts, turn_from_pb
from acm.domain.models import Job, JobStatus, new_id
from acm.domain.scope import Action
from acm.ports.architect import AgentDefinition
from acm.ports.stores import ApiKey
from acm.runtime import status_of
from acm.telemetry import context_from_traceparent, traceparent_of_current_span
from acm.v1 import gateway_pb2, gateway_pb2_grpc
from acm_gateway.agents import Agents
from acm_gateway.convert import bundle_to_pb, compaction_to_pb, fetch_query
from acm_gateway.errors import Unavailable
from acm_gateway.usecases import (
    AcceptTurn,
    Authenticator,
    CompactNow,
    FetchContext,
    GetJob,
    RequestForget,
    forget_level,
)

log = logging.getLogger("acm.gateway")
tracer = trace.get_tracer(__name__)
R = TypeVar("R")
SERVICE = gateway_pb2.DESCRIPTOR.services_by_name["Gateway"].full_name  # acm.v1.Gateway

# Codes that are the server's fault: only these mark a SERVER span as failed (OTel gRPC conventions).
_SERVER_FAULTS = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.INTERNAL}

_JOB_STATUS = {
    JobStatus.PENDING: gateway_pb2.JOB_STATUS_PENDING,
    JobStatus.DONE: gateway_pb2.JOB_STATUS_DONE,
    JobStatus.FAILED: gateway_pb2.JOB_STATUS_FAILED,
}


def _metadata(context: grpc.aio.ServicerContext) -> dict[str, str]:
    return {k: v for k, v in (context.invocation_metadata() or ()) if isinstance(v, str)}


def _secret(md: dict[str, str]) -> str | None:
    auth = md.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return md.get("x-api-key")


def job_to_pb(job: Job) -> gateway_pb2.Job:
    return gateway_pb2.Job(
        job_id=job.job_id,
        kind=job.kind,
        status=_JOB_STATUS[job.status],
        error=job.error,
        counts=job.counts,
        created_at=ts(job.created_at),
        updated_at=ts(job.updated_at),
    )


class GatewayServicer(gateway_pb2_grpc.GatewayServicer):
    def __init__(
        self,
        auth: Authenticator,
        accept_turn: AcceptTurn,
        get_job: GetJob,
        fetch: FetchContext,
        forget: RequestForget,
        compact: CompactNow,
        agents: Agents | None = None,
    ) -> None:
        self._agents = agents
        self._auth = auth
        self._accept_turn = accept_turn
        self._get_job = get_job
        self._fetch = fetch
        self._forget = forget
        self._compact = compact

    async def _call(
        self, method: str, context: grpc.aio.ServicerContext, work: Callable[[ApiKey, str], Awaitable[R]]
    ) -> R:
        """Authenticate and run `work(key, traceparent)` in a SERVER span; errors become status codes.

        The span continues the caller's trace when it sent a `traceparent` header; `work` gets this
        span's traceparent, so the events it publishes are children of the RPC."""
        md = _metadata(context)
        with tracer.start_as_current_span(
            f"{SERVICE}/{method}",
            context=context_from_traceparent(md.get("traceparent", "")),
            kind=SpanKind.SERVER,
            attributes={"rpc.system": "grpc", "rpc.service": SERVICE, "rpc.method": method},
            # abort() raises to end the RPC; the span's status is set from the gRPC code below instead.
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                key = await self._auth.authenticate(_secret(md))
                result = await work(key, traceparent_of_current_span())
            except Exception as exc:
                code, message = status_of(exc, log)  # logs an internal error with its id
                span.set_attribute("rpc.grpc.status_code", code.value[0])
                if code in _SERVER_FAULTS:
                    span.record_exception(exc)
                    span.set_status(Status(StatusCode.ERROR, message))
                await context.abort(code, message)
                raise  # unreachable: abort raises
            span.set_attribute("rpc.grpc.status_code", grpc.StatusCode.OK.value[0])
            return result

    async def Ingest(
        self, request: gateway_pb2.IngestRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.IngestResponse:
        async def work(key: ApiKey, trace: str) -> gateway_pb2.IngestResponse:
            scope = await self._auth.authorize(key, request.scope, Action.INGEST)
            event_id = new_id()  # the turn's id when it has none
            pb = request.turn
            turn = turn_from_pb(pb, scope, self._accept_turn.max_turn_bytes, pb.turn_id or event_id)
            job_id = await self._accept_turn(key, turn, event_id, trace)
            return gateway_pb2.IngestResponse(job_id=job_id, event_id=event_id)

        return await self._call("Ingest", context, work)

    async def GetJob(self, request: gateway_pb2.GetJobRequest, context: grpc.aio.ServicerContext) -> gateway_pb2.Job:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.Job:
            scope = await self._auth.authorize(key, request.scope, Action.GET_JOB)
            return job_to_pb(await self._get_job(scope, request.job_id))

        return await self._call("GetJob", context, work)

    async def Fetch(
        self, request: gateway_pb2.FetchRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.FetchResponse:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.FetchResponse:
            scope = await self._auth.authorize(key, request.scope, Action.FETCH)
            return bundle_to_pb(await self._fetch(fetch_query(scope, request)))

        return await self._call("Fetch", context, work)

    async def Forget(
        self, request: gateway_pb2.ForgetRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ForgetResponse:
        async def work(key: ApiKey, trace: str) -> gateway_pb2.ForgetResponse:
            action = Action.forget(forget_level(request.level))
            scope = await self._auth.authorize(key, request.scope, action)
            return gateway_pb2.ForgetResponse(job_id=await self._forget(key, scope, request.level, trace))

        return await self._call("Forget", context, work)

    async def Compact(
        self, request: gateway_pb2.CompactRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.CompactResponse:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.CompactResponse:
            scope = await self._auth.authorize(key, request.scope, Action.COMPACT)
            record = await self._compact(scope, request.budget_tokens)
            return gateway_pb2.CompactResponse(compaction=compaction_to_pb(record))

        return await self._call("Compact", context, work)

    async def DefineAgent(
        self, request: gateway_pb2.DefineAgentRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.AgentSchemaInfo:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.AgentSchemaInfo:
            scope = await self._auth.authorize(key, request.scope, Action.DEFINE_AGENT)
            definition = AgentDefinition(request.description, request.overrides_json, request.archetype)
            return info_to_pb(await self._agents_api().define(scope, definition))

        return await self._call("DefineAgent", context, work)

    async def GetAgent(
        self, request: gateway_pb2.GetAgentRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.AgentSchemaInfo:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.AgentSchemaInfo:
            scope = await self._auth.authorize(key, request.scope, Action.READ_AGENT)
            return info_to_pb(await self._agents_api().get(scope, request.version))

        return await self._call("GetAgent", context, work)

    async def ListAgents(
        self, request: gateway_pb2.ListAgentsRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ListAgentsResponse:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.ListAgentsResponse:
            scope = await self._auth.authorize(key, request.scope, Action.READ_AGENT)
            agents = await self._agents_api().list(scope)
            return gateway_pb2.ListAgentsResponse(agents=[info_to_pb(a) for a in agents])

        return await self._call("ListAgents", context, work)

    def _agents_api(self) -> Agents:
        if self._agents is None:
            raise Unavailable("no architect is configured for this gateway")
        return self._agents
