"""gRPC servicer for acm.v1.Gateway: metadata → key, errors → status codes with actionable messages."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from typing import TypeVar

import grpc
from google.protobuf import json_format
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from acm.admission import Admission, Limits
from acm.convert import TIER_TO_PB, fields_of, info_to_pb, ts, turn_from_pb
from acm.domain.errors import InvalidRequest
from acm.domain.models import Job, JobStatus, Memory, Turn, new_id
from acm.domain.scope import Action, ForgetLevel, KeyRole, Scope, Tier
from acm.memory_wire import query_from_pb, stored_from_pb, stored_to_pb, users_to_pb
from acm.paging import page_after, page_size, position_token
from acm.ports.architect import AgentDefinition
from acm.ports.stores import ApiKey, DeadLetterEntry, DeadLetterRepo
from acm.runtime import status_of
from acm.telemetry import context_from_traceparent, traceparent_of_current_span
from acm.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc, memories_pb2
from acm.working_wire import compactions_to_pb
from acm_gateway.agents import Agents
from acm_gateway.convert import bundle_to_pb, compaction_to_pb, fetch_query
from acm_gateway.errors import PermissionDenied, Unavailable
from acm_gateway.jobs_api import ListJobs
from acm_gateway.memories import MAX_BATCH, MemoryApi
from acm_gateway.sealing_keys import IssueSealingKey
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


_JOB_STATUS_OF_PB = {pb: status for status, pb in _JOB_STATUS.items()}


def listed_job_to_pb(job: Job) -> gateway_pb2.ListedJob:
    scope = job.scope
    return gateway_pb2.ListedJob(
        job=job_to_pb(job),
        customer_id=scope.customer_id,
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        session_id=scope.session_id,
    )


# What ListDeadLetters shows of a letter as it is kept (never its claimed scope: the admin's own client).
_SHOWN_LETTER = ("letter_id", "group", "topic", "key", "reason", "attempts", "size_bytes", "event_id")


def dead_letter_to_pb(letter: DeadLetterEntry) -> gateway_pb2.DeadLetterInfo:
    return gateway_pb2.DeadLetterInfo(**fields_of(letter, _SHOWN_LETTER), failed_at=ts(letter.failed_at))


def _admin_only(key: ApiKey, what: str) -> None:
    if key.grant.role is not KeyRole.ADMIN:
        raise PermissionDenied(
            f"this API key has the role '{key.grant.role}', which may not {what}: use an admin key of the client"
        )


def key_info_to_pb(key: ApiKey) -> gateway_pb2.ApiKeyInfo:
    """A key as ListKeys shows it: its id, name and rights; never the secret's hash."""
    return gateway_pb2.ApiKeyInfo(
        key_id=key.key_id,
        name=key.name,
        role=str(key.grant.role),
        customers=key.grant.customers,
        users=key.grant.users,
        created_at=ts(key.created_at),
        revoked=key.revoked,
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
        memories: MemoryApi | None = None,
        fetch_limits: Limits | None = None,
        ingest_limits: Limits | None = None,
        dead_letters: DeadLetterRepo | None = None,
        sealing_keys: IssueSealingKey | None = None,
    ) -> None:
        """``fetch_limits``, ``ingest_limits``: admission of Fetch and of Ingest/IngestBatch (None: unlimited).
        ``dead_letters``: the letters ListDeadLetters reads (None: it answers UNAVAILABLE). ``sealing_keys``: the
        data keys GetSealingKey gives direct publishers (None: it answers UNAVAILABLE)."""
        self._sealing_keys = sealing_keys
        self._dead_letters = dead_letters
        self._fetches = Admission("Fetch", fetch_limits) if fetch_limits else None
        self._ingests = Admission("Ingest", ingest_limits) if ingest_limits else None
        self._agents = agents
        self._memories = memories
        self._auth = auth
        self._accept_turn = accept_turn
        self._get_job = get_job
        self._fetch = fetch
        self._forget = forget
        self._compact = compact

    @property
    def authenticator(self) -> Authenticator:
        """The API keys' check, also used by the operator console to refuse an agent key (acm_gateway.console)."""
        return self._auth

    async def _call(
        self,
        method: str,
        context: grpc.aio.ServicerContext,
        work: Callable[[ApiKey, str], Awaitable[R]],
        admission: Admission | None = None,
    ) -> R:
        """Authenticate and run `work(key, traceparent)` in a SERVER span; errors become status codes.
        With ``admission``, the whole call (authentication too: it reads the store) waits for a slot, or is
        refused with RESOURCE_EXHAUSTED.

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
                async with admission.admit() if admission is not None else nullcontext():
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

        return await self._call("Ingest", context, work, self._ingests)

    async def GetSealingKey(
        self, request: gateway_pb2.GetSealingKeyRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.SealingKey:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.SealingKey:
            # Ingest's rights: a key that may send the scope's turns through the gateway may seal them itself.
            scope = await self._auth.authorize(key, request.scope, Action.INGEST)
            if self._sealing_keys is None:
                raise Unavailable("this gateway gives no sealing keys")
            issued = await self._sealing_keys(scope)
            return gateway_pb2.SealingKey(
                key_id=issued.key.key_id, secret=issued.key.secret, valid_until=ts(issued.valid_until)
            )

        return await self._call("GetSealingKey", context, work)

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

        return await self._call("Fetch", context, work, self._fetches)

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

    # --- the Memory API (docs/memory-api.md) ---------------------------------------------------------------

    def _memory_api(self) -> MemoryApi:
        if self._memories is None:
            raise Unavailable("the Memory API is not configured for this gateway")
        return self._memories

    async def GetMemory(
        self, request: memories_pb2.GetMemoryRequest, context: grpc.aio.ServicerContext
    ) -> memories_pb2.StoredMemory:
        async def work(key: ApiKey, _trace: str) -> memories_pb2.StoredMemory:
            scope = await self._auth.authorize(key, request.scope, Action.FETCH)
            return stored_to_pb(await self._memory_api().get(scope, request.memory_id))

        return await self._call("GetMemory", context, work)

    async def ListMemories(
        self, request: memories_pb2.ListMemoriesRequest, context: grpc.aio.ServicerContext
    ) -> memories_pb2.ListMemoriesResponse:
        async def work(key: ApiKey, _trace: str) -> memories_pb2.ListMemoriesResponse:
            scope = await self._auth.authorize(key, request.scope, Action.FETCH)
            page = await self._memory_api().list_memories(scope, query_from_pb(request))
            return memories_pb2.ListMemoriesResponse(
                memories=[stored_to_pb(m) for m in page.memories], next_page_token=page.next_page_token
            )

        return await self._call("ListMemories", context, work)

    async def MemoryHistory(
        self, request: memories_pb2.MemoryHistoryRequest, context: grpc.aio.ServicerContext
    ) -> memories_pb2.MemoryHistoryResponse:
        async def work(key: ApiKey, _trace: str) -> memories_pb2.MemoryHistoryResponse:
            scope = await self._auth.authorize(key, request.scope, Action.FETCH)
            versions = await self._memory_api().history(scope, request.memory_id, request.slot)
            return memories_pb2.MemoryHistoryResponse(versions=[stored_to_pb(m) for m in versions])

        return await self._call("MemoryHistory", context, work)

    async def UpdateMemory(
        self, request: gateway_pb2.UpdateMemoryRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.MemoryJob:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.MemoryJob:
            scope = await self._auth.authorize(key, request.scope, Action.INGEST)
            api = self._memory_api()
            job_id, memory_id = await api.update(key, scope, request.memory_id, request.text, request.source)
            return gateway_pb2.MemoryJob(job_id=job_id, memory_id=memory_id)

        return await self._call("UpdateMemory", context, work)

    async def DeleteMemory(
        self, request: gateway_pb2.DeleteMemoryRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.MemoryJob:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.MemoryJob:
            # Erasing one memory is a user-level Forget's smallest part: the same right.
            scope = await self._auth.authorize(key, request.scope, Action.forget(ForgetLevel.USER))
            job_id = await self._memory_api().delete(key, scope, request.memory_id)
            return gateway_pb2.MemoryJob(job_id=job_id, memory_id=request.memory_id)

        return await self._call("DeleteMemory", context, work)

    async def ExportUser(
        self, request: gateway_pb2.ExportUserRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ExportUserResponse:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.ExportUserResponse:
            scope = await self._auth.authorize(key, request.scope, Action.FETCH)
            page = await self._memory_api().export(scope, request.page_size, request.page_token)
            lines = [json_line(m) for m in page.memories]
            return gateway_pb2.ExportUserResponse(
                jsonl="".join(f"{line}\n" for line in lines), count=len(lines), next_page_token=page.next_page_token
            )

        return await self._call("ExportUser", context, work)

    async def ImportUser(
        self, request: gateway_pb2.ImportUserRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.MemoryJob:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.MemoryJob:
            scope = await self._auth.authorize(key, request.scope, Action.INGEST)
            memories = read_json_lines(request.jsonl, scope)
            return gateway_pb2.MemoryJob(job_id=await self._memory_api().import_(key, scope, memories))

        return await self._call("ImportUser", context, work)

    async def IngestBatch(
        self, request: gateway_pb2.IngestBatchRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.IngestBatchResponse:
        async def work(key: ApiKey, trace: str) -> gateway_pb2.IngestBatchResponse:
            scope = await self._auth.authorize(key, request.scope, Action.INGEST)
            if len(request.turns) > MAX_BATCH:
                raise InvalidRequest(
                    f"{len(request.turns)} turns in one call; send at most {MAX_BATCH} per IngestBatch"
                )
            turns = [self._batch_turn(i, pb, scope) for i, pb in enumerate(request.turns)]
            accepted = await self._memory_api().ingest_batch(key, turns, trace)
            return gateway_pb2.IngestBatchResponse(
                accepted=[gateway_pb2.IngestResponse(job_id=j, event_id=e) for j, e in accepted]
            )

        return await self._call("IngestBatch", context, work, self._ingests)

    async def ListKeys(
        self, request: gateway_pb2.ListKeysRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ListKeysResponse:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.ListKeysResponse:
            _admin_only(key, "list the client's keys")
            keys = await self._auth.api_keys.of_client(key.client_id)
            return gateway_pb2.ListKeysResponse(keys=[key_info_to_pb(k) for k in keys])

        return await self._call("ListKeys", context, work)

    async def ListUsers(
        self, request: memories_pb2.ListUsersRequest, context: grpc.aio.ServicerContext
    ) -> memories_pb2.ListUsersResponse:
        async def work(key: ApiKey, _trace: str) -> memories_pb2.ListUsersResponse:
            _admin_only(key, "list the client's users")
            if request.scope.client_id and request.scope.client_id != key.client_id:
                raise PermissionDenied("scope.client_id does not match the API key's client; leave it empty")
            page = await self._memory_api().users(key.client_id, request.page_size, request.page_token)
            return users_to_pb(page)

        return await self._call("ListUsers", context, work)

    async def ListJobs(
        self, request: gateway_pb2.ListJobsRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ListJobsResponse:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.ListJobsResponse:
            _admin_only(key, "list the client's jobs")
            status = _JOB_STATUS_OF_PB.get(request.status)
            if status is None and request.status != gateway_pb2.JOB_STATUS_UNSPECIFIED:
                raise InvalidRequest(f"status {request.status} is not a job status")
            page = await ListJobs(self._get_job.jobs)(key.client_id, status, request.page_size, request.page_token)
            return gateway_pb2.ListJobsResponse(
                jobs=[listed_job_to_pb(j) for j in page.jobs], next_page_token=page.next_page_token
            )

        return await self._call("ListJobs", context, work)

    async def ListDeadLetters(
        self, request: gateway_pb2.ListDeadLettersRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ListDeadLettersResponse:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.ListDeadLettersResponse:
            _admin_only(key, "list the client's dead letters")
            if self._dead_letters is None:
                raise Unavailable("this gateway keeps no dead letters")
            size = page_size(request.page_size)
            found = await self._dead_letters.of_client(key.client_id, size + 1, page_after(request.page_token))
            more = len(found) > size
            last = found[size - 1] if more else None
            return gateway_pb2.ListDeadLettersResponse(
                letters=[dead_letter_to_pb(x) for x in found[:size]],
                next_page_token=position_token(last.failed_at, last.letter_id) if last else "",
            )

        return await self._call("ListDeadLetters", context, work)

    async def ListCompactions(
        self, request: gateway_pb2.ListCompactionsRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ListCompactionsResponse:
        async def work(key: ApiKey, _trace: str) -> gateway_pb2.ListCompactionsResponse:
            _admin_only(key, "list the client's compactions")
            if request.scope.client_id and request.scope.client_id != key.client_id:
                raise PermissionDenied("scope.client_id does not match the API key's client; leave it empty")
            compactor = self._compact.compactor
            if compactor is None:
                raise Unavailable("no compact service is configured for this gateway")
            page = await compactor.compactions(key.client_id, request.page_size, request.page_token)
            return compactions_to_pb(page)

        return await self._call("ListCompactions", context, work)

    def _batch_turn(self, index: int, pb: common_pb2.Turn, scope: Scope) -> Turn:
        try:
            return turn_from_pb(pb, scope, self._accept_turn.max_turn_bytes, pb.turn_id or new_id())
        except InvalidRequest as exc:
            raise InvalidRequest(f"turns[{index}]: {exc}") from None

    def _agents_api(self) -> Agents:
        if self._agents is None:
            raise Unavailable("no architect is configured for this gateway")
        return self._agents


def json_line(memory: Memory) -> str:
    """One ExportUser line: the StoredMemory as protobuf JSON (field names as in the .proto), on one line."""
    return json_format.MessageToJson(stored_to_pb(memory), preserving_proto_field_name=True, indent=None)


def read_json_lines(jsonl: str, scope: Scope) -> list[Memory]:
    """ImportUser's lines → memories of the scope's user; InvalidRequest names the line that is wrong."""
    lines = [(n, line) for n, line in enumerate(jsonl.splitlines(), start=1) if line.strip()]
    if len(lines) > MAX_BATCH:
        raise InvalidRequest(f"{len(lines)} lines in one call; import at most {MAX_BATCH} per ImportUser")
    memories = []
    for n, line in lines:
        pb = memories_pb2.StoredMemory()
        try:
            json_format.Parse(line, pb)
            if pb.memory.tier != TIER_TO_PB[Tier.USER]:
                raise InvalidRequest("only user-tier memories (ExportUser's) can be imported")
            memories.append(stored_from_pb(pb, scope))
        except (json_format.ParseError, InvalidRequest) as exc:
            raise InvalidRequest(f"jsonl line {n}: {exc}") from None
    return memories
