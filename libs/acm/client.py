"""A small Python client for the gateway's gRPC API (used by the CLI, the tests and the benchmarks)."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from types import TracebackType

from acm.channels import ClientTls, open_channel
from acm.convert import ROLE_TO_PB, ts
from acm.domain.models import Role
from acm.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc


class AcmClient:
    def __init__(self, addr: str, api_key: str, timeout_s: float = 10.0, tls: ClientTls | None = None) -> None:
        """``tls``: None for plaintext (a gateway on this host), else the CA to trust (None: the system's) and,
        for a gateway that requires one, this client's certificate."""
        self._channel = open_channel(addr, tls)
        self._stub = gateway_pb2_grpc.GatewayStub(self._channel)
        self._metadata = (("authorization", f"Bearer {api_key}"),)
        self._timeout_s = timeout_s

    async def __aenter__(self) -> AcmClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    async def ingest(
        self,
        scope: common_pb2.Scope,
        content: str,
        role: Role = Role.USER,
        occurred_at: datetime | None = None,
        turn_id: str = "",
        metadata: dict[str, str] | None = None,
        tool_name: str = "",
    ) -> gateway_pb2.IngestResponse:
        turn = common_pb2.Turn(
            turn_id=turn_id, role=ROLE_TO_PB[role], content=content, metadata=metadata or {}, tool_name=tool_name
        )
        if occurred_at is not None:
            turn.occurred_at.CopyFrom(ts(occurred_at))
        response: gateway_pb2.IngestResponse = await self._stub.Ingest(
            gateway_pb2.IngestRequest(scope=scope, turn=turn),
            metadata=self._metadata,
            timeout=self._timeout_s,
        )
        return response

    async def get_job(self, scope: common_pb2.Scope, job_id: str) -> gateway_pb2.Job:
        job: gateway_pb2.Job = await self._stub.GetJob(
            gateway_pb2.GetJobRequest(scope=scope, job_id=job_id),
            metadata=self._metadata,
            timeout=self._timeout_s,
        )
        return job

    async def wait_job(self, scope: common_pb2.Scope, job_id: str, timeout_s: float = 30.0) -> gateway_pb2.Job:
        """Poll until the job is no longer pending (or raise TimeoutError)."""
        deadline = time.monotonic() + timeout_s
        delay = 0.01
        while True:
            job = await self.get_job(scope, job_id)
            if job.status != gateway_pb2.JOB_STATUS_PENDING:
                return job
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still pending after {timeout_s:.0f}s")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)

    async def fetch(
        self,
        scope: common_pb2.Scope,
        query: str,
        budget_tokens: int = 0,
        encoding: str = "",
        tiers: list[int] | None = None,
        as_of: datetime | None = None,
    ) -> gateway_pb2.FetchResponse:
        request = gateway_pb2.FetchRequest(
            scope=scope,
            query=query,
            budget_tokens=budget_tokens,
            encoding=encoding,
            tiers=tiers or [],  # type: ignore[arg-type]
        )
        if as_of is not None:
            request.as_of.CopyFrom(ts(as_of))
        response: gateway_pb2.FetchResponse = await self._stub.Fetch(
            request,
            metadata=self._metadata,
            timeout=self._timeout_s,
        )
        return response

    async def forget(self, scope: common_pb2.Scope, level: str) -> str:
        response: gateway_pb2.ForgetResponse = await self._stub.Forget(
            gateway_pb2.ForgetRequest(scope=scope, level=level),
            metadata=self._metadata,
            timeout=self._timeout_s,
        )
        return response.job_id

    async def compact(self, scope: common_pb2.Scope, budget_tokens: int = 0) -> gateway_pb2.Compaction:
        response: gateway_pb2.CompactResponse = await self._stub.Compact(
            gateway_pb2.CompactRequest(scope=scope, budget_tokens=budget_tokens),
            metadata=self._metadata,
            timeout=self._timeout_s,
        )
        return response.compaction

    async def define_agent(
        self, scope: common_pb2.Scope, description: str, overrides_json: str = "", archetype: str = ""
    ) -> gateway_pb2.AgentSchemaInfo:
        request = gateway_pb2.DefineAgentRequest(
            scope=scope, description=description, overrides_json=overrides_json, archetype=archetype
        )
        info: gateway_pb2.AgentSchemaInfo = await self._stub.DefineAgent(
            request, metadata=self._metadata, timeout=self._timeout_s
        )
        return info

    async def get_agent(self, scope: common_pb2.Scope, version: int = 0) -> gateway_pb2.AgentSchemaInfo:
        request = gateway_pb2.GetAgentRequest(scope=scope, version=version)
        info: gateway_pb2.AgentSchemaInfo = await self._stub.GetAgent(
            request, metadata=self._metadata, timeout=self._timeout_s
        )
        return info

    async def list_agents(self, scope: common_pb2.Scope) -> gateway_pb2.ListAgentsResponse:
        request = gateway_pb2.ListAgentsRequest(scope=scope)
        agents: gateway_pb2.ListAgentsResponse = await self._stub.ListAgents(
            request, metadata=self._metadata, timeout=self._timeout_s
        )
        return agents
