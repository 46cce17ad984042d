"""gRPC servicer for acm.v1.Gateway: metadata → key, errors → status codes with actionable messages."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc

from acm.convert import InvalidTurn, ts
from acm.domain.models import Job, JobStatus
from acm.domain.scope import ScopeError
from acm.envelopes import new_traceparent
from acm.ports.stores import ApiKey
from acm.v1 import gateway_pb2, gateway_pb2_grpc
from acm_gateway.errors import NotFound, PermissionDenied, Unauthenticated, Unavailable
from acm_gateway.usecases import AcceptTurn, Authenticator, FetchContext, GetJob, RequestForget

log = logging.getLogger("acm.gateway")
R = TypeVar("R")

_STATUS: list[tuple[type[Exception], grpc.StatusCode]] = [
    (Unauthenticated, grpc.StatusCode.UNAUTHENTICATED),
    (PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (NotFound, grpc.StatusCode.NOT_FOUND),
    (Unavailable, grpc.StatusCode.UNAVAILABLE),
    (ScopeError, grpc.StatusCode.INVALID_ARGUMENT),
    (InvalidTurn, grpc.StatusCode.INVALID_ARGUMENT),
    (ValueError, grpc.StatusCode.INVALID_ARGUMENT),
]

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
    ) -> None:
        self._auth = auth
        self._accept_turn = accept_turn
        self._get_job = get_job
        self._fetch = fetch
        self._forget = forget

    async def _call(self, context: grpc.aio.ServicerContext, work: Callable[[ApiKey, str], Awaitable[R]]) -> R:
        md = _metadata(context)
        try:
            key = await self._auth.authenticate(_secret(md))
            return await work(key, md.get("traceparent") or new_traceparent())
        except Exception as exc:
            for kind, code in _STATUS:
                if isinstance(exc, kind):
                    await context.abort(code, str(exc))
            log.exception("internal error")
            await context.abort(grpc.StatusCode.INTERNAL, f"internal error ({type(exc).__name__}); see server logs")
            raise  # unreachable: abort raises

    async def Ingest(
        self, request: gateway_pb2.IngestRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.IngestResponse:
        async def work(key: ApiKey, trace: str) -> gateway_pb2.IngestResponse:
            scope = await self._auth.scope(key, request.scope)
            return await self._accept_turn(key, scope, request.turn, trace)

        return await self._call(context, work)

    async def GetJob(self, request: gateway_pb2.GetJobRequest, context: grpc.aio.ServicerContext) -> gateway_pb2.Job:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.Job:
            scope = await self._auth.scope(key, request.scope)
            return job_to_pb(await self._get_job(scope, request.job_id))

        return await self._call(context, work)

    async def Fetch(
        self, request: gateway_pb2.FetchRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.FetchResponse:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.FetchResponse:
            scope = await self._auth.scope(key, request.scope)
            return await self._fetch(scope, request)

        return await self._call(context, work)

    async def Forget(
        self, request: gateway_pb2.ForgetRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ForgetResponse:
        async def work(key: ApiKey, trace: str) -> gateway_pb2.ForgetResponse:
            scope = await self._auth.scope(key, request.scope)
            return gateway_pb2.ForgetResponse(job_id=await self._forget(key, scope, request.level, trace))

        return await self._call(context, work)
