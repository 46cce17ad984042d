"""ACM as MCP tools (`acm mcp`): remember, recall, forget, list_memories and get_memory, on the official MCP
SDK, over stdio or streamable HTTP. Every call goes to a running ACM gateway through the public gRPC API,
in the one scope the server was started with (docs/integrations.md). A caller's mistake, a refusal by ACM
or an unreachable ACM comes back as a tool error of one line, never a traceback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

import grpc
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import BaseModel, Field, ValidationError

from acm.adapters.tokenizer import TiktokenCounter
from acm.channels import ClientTls, open_channel
from acm.client import AcmClient
from acm.domain.models import Role
from acm.domain.scope import ScopeError, check_id
from acm.v1 import common_pb2, gateway_pb2, memories_pb2
from acm_cli.memories import MemoryCalls

T = TypeVar("T")
MAX_TEXT = 100_000  # characters of one remembered turn: larger is a mistake, not a memory
MAX_BUDGET = 32_000

_TIERS = {common_pb2.TIER_USER: "user", common_pb2.TIER_CUSTOMER: "customer", common_pb2.TIER_CLIENT: "client"}
_LAYERS = {common_pb2.LAYER_SHORT: "short", common_pb2.LAYER_MID: "mid", common_pb2.LAYER_LONG: "long"}
_ROLES = {
    common_pb2.ROLE_USER: "user",
    common_pb2.ROLE_ASSISTANT: "assistant",
    common_pb2.ROLE_TOOL: "tool",
    common_pb2.ROLE_SYSTEM: "system",
}
_STATUS = {memories_pb2.MEMORY_STATUS_ACTIVE: "active", memories_pb2.MEMORY_STATUS_STALE: "stale"}
_JOBS = {
    gateway_pb2.JOB_STATUS_PENDING: "pending",
    gateway_pb2.JOB_STATUS_DONE: "done",
    gateway_pb2.JOB_STATUS_FAILED: "failed",
}
# What a person (or a model) can do about a refusal.
_HINTS = {
    grpc.StatusCode.UNAVAILABLE: "is ACM running there? (`acm serve`, or --addr / ACM_ADDR of `acm mcp`)",
    grpc.StatusCode.DEADLINE_EXCEEDED: "ACM did not answer in time; retry",
    grpc.StatusCode.UNAUTHENTICATED: "the API key of `acm mcp` (--api-key / ACM_API_KEY) is not one of this ACM's",
    grpc.StatusCode.PERMISSION_DENIED: "the API key of `acm mcp` may not do this",
}


@dataclass(frozen=True)
class McpConfig:
    """Where ACM is and the scope every tool acts in (customer and user required; agent and session optional)."""

    addr: str
    api_key: str
    customer_id: str
    user_id: str
    agent_id: str = ""
    session_id: str = ""
    tls: ClientTls | None = None
    timeout_s: float = 10.0  # deadline of each gRPC call
    wait_s: float = 30.0  # how long remember and forget wait for ACM to have written it


class MemoryOut(BaseModel):
    memory_id: str
    kind: str
    tier: str
    text: str
    score: float | None = None
    session_id: str = ""
    created_at: str = ""


class Recalled(BaseModel):
    context: str = Field(description="the assembled context, ready to put in a prompt (within budget_tokens)")
    context_tokens: int
    budget_tokens: int
    memories: list[MemoryOut] = Field(description="the retrieved memories, best first")
    dropped: int = Field(description="candidates that did not fit the budget")


class JobOut(BaseModel):
    job_id: str
    status: Literal["pending", "done", "failed"]
    counts: dict[str, int] = {}
    error: str = ""


class StoredOut(BaseModel):
    memory_id: str
    kind: str
    tier: str
    layer: str
    text: str
    status: str
    created_at: str
    session_id: str
    agent_id: str
    role: str
    tool_name: str
    source_turn_ids: list[str]
    superseded_by: str = ""


class MemoryPage(BaseModel):
    memories: list[StoredOut]
    next_page_token: str = Field("", description="pass it as page_token for the next page; empty on the last")


def _iso(ts: object) -> str:
    seconds = getattr(ts, "seconds", 0)
    return ts.ToDatetime().isoformat() + "Z" if seconds else ""  # type: ignore[attr-defined]


def _stored(s: memories_pb2.StoredMemory) -> StoredOut:
    m = s.memory
    return StoredOut(
        memory_id=m.memory_id,
        kind=m.kind,
        tier=_TIERS.get(m.tier, ""),
        layer=_LAYERS.get(m.layer, ""),
        text=m.text,
        status=_STATUS.get(s.status, ""),
        created_at=_iso(m.created_at),
        session_id=m.session_id,
        agent_id=s.agent_id,
        role=_ROLES.get(m.role, ""),
        tool_name=m.tool_name,
        source_turn_ids=list(m.source_turn_ids),
        superseded_by=s.superseded_by,
    )


def _job(job: gateway_pb2.Job) -> JobOut:
    status = _JOBS.get(job.status, "pending")
    return JobOut(job_id=job.job_id, status=status, counts=dict(job.counts), error=job.error)  # type: ignore[arg-type]


class AcmTools:
    """The tools' bodies over one gateway connection (opened in the running event loop: gRPC's is loop-bound)."""

    def __init__(self, config: McpConfig) -> None:
        self.config = config
        self._client: AcmClient | None = None
        self._memories: MemoryCalls | None = None
        self._channel: grpc.aio.Channel | None = None
        self.tokens = TiktokenCounter()

    @asynccontextmanager
    async def connected(self) -> AsyncIterator[AcmTools]:
        c = self.config
        self._client = AcmClient(c.addr, c.api_key, timeout_s=c.timeout_s, tls=c.tls)
        self._channel = open_channel(c.addr, c.tls)
        self._memories = MemoryCalls(self._channel, c.api_key, timeout_s=c.timeout_s)
        try:
            yield self
        finally:
            await self._client.close()
            await self._channel.close()
            self._client = self._memories = self._channel = None

    @property
    def client(self) -> AcmClient:
        if self._client is None:
            raise ToolError("not connected to ACM")  # only between two runs of the server
        return self._client

    @property
    def memories(self) -> MemoryCalls:
        if self._memories is None:
            raise ToolError("not connected to ACM")
        return self._memories

    def scope(self, session_id: str | None = None) -> common_pb2.Scope:
        c = self.config
        session = c.session_id if session_id is None else session_id
        if session:
            try:
                check_id("session_id", session)
            except ScopeError as exc:
                raise ToolError(str(exc)) from None
        return common_pb2.Scope(customer_id=c.customer_id, user_id=c.user_id, agent_id=c.agent_id, session_id=session)

    async def call(self, work: Awaitable[T]) -> T:
        """ACM's refusals as one-line tool errors: the code, ACM's message, and what to do."""
        try:
            return await work
        except grpc.aio.AioRpcError as exc:
            details = " ".join((exc.details() or "").split())
            hint = _HINTS.get(exc.code(), "")
            if exc.code() is grpc.StatusCode.UNAVAILABLE:
                details = f"ACM at {self.config.addr} did not answer"
            raise ToolError(f"{exc.code().name}: {details}" + (f" ({hint})" if hint else "")) from None

    async def settled(self, scope: common_pb2.Scope, job_id: str) -> JobOut:
        """The job once ACM has written it, or still pending after wait_s (not an error: it completes later)."""
        try:
            job = await self.call(self.client.wait_job(scope, job_id, timeout_s=self.config.wait_s))
        except TimeoutError:
            return JobOut(job_id=job_id, status="pending")
        return _job(job)

    async def remember(self, text: str, role: str, tool_name: str, session_id: str | None, wait: bool) -> JobOut:
        if role == "tool" and not tool_name:
            raise ToolError("a tool's output needs tool_name (the tool that produced it)")
        if role != "tool" and tool_name:
            raise ToolError("tool_name goes with role 'tool' only")
        scope = self.scope(session_id)
        accepted = await self.call(self.client.ingest(scope, text, Role(role), tool_name=tool_name))
        if not wait:
            return JobOut(job_id=accepted.job_id, status="pending")
        return await self.settled(scope, accepted.job_id)

    async def recall(self, query: str, budget_tokens: int, session_id: str | None) -> Recalled:
        response = await self.call(self.client.fetch(self.scope(session_id), query, budget_tokens))
        context, tokens = response.context, response.context_tokens
        if not context and response.memories:
            context, tokens = self._listed(response)
        return Recalled(
            context=context,
            context_tokens=tokens,
            budget_tokens=response.budget_tokens,
            memories=[
                MemoryOut(
                    memory_id=m.memory_id,
                    kind=m.kind,
                    tier=_TIERS.get(m.tier, ""),
                    text=m.text,
                    score=round(m.score, 6),
                    session_id=m.session_id,
                    created_at=_iso(m.created_at),
                )
                for m in response.memories
            ],
            dropped=response.dropped,
        )

    def _listed(self, response: gateway_pb2.FetchResponse) -> tuple[str, int]:
        """The gateway assembles `context` only for a session it has turns of; otherwise the memories, best
        first, are the context, as many as fit the budget with their list marks."""
        encoding = response.encoding or "cl100k_base"
        text, used = "", 0
        lines = ["Relevant memories:"]
        for m in response.memories:
            lines.append(f"- {m.text}")
            longer = "\n".join(lines)
            count = self.tokens.count(longer, encoding)  # the whole text: tokens merge across lines
            if count > response.budget_tokens:
                break
            text, used = longer, count
        return text, used

    async def forget(self, memory_id: str | None, level: str | None, session_id: str | None) -> JobOut:
        if (memory_id is None) == (level is None):
            raise ToolError("give exactly one of memory_id (one memory) or level ('session' or 'user')")
        scope = self.scope(session_id)
        if memory_id is not None:
            job_id = (await self.call(self.memories.delete(scope, memory_id))).job_id
        else:
            if level == "session" and not scope.session_id:
                raise ToolError("level 'session' needs a session: pass session_id, or start acm mcp with --session")
            job_id = await self.call(self.client.forget(scope, str(level)))
        return await self.settled(scope, job_id)

    async def list_memories(self, kind: str | None, include_stale: bool, page_size: int, page_token: str) -> MemoryPage:
        request = memories_pb2.ListMemoriesRequest(
            scope=self.scope(), kinds=[kind] if kind else [], include_stale=include_stale,
            page_size=page_size, page_token=page_token,
        )  # fmt: skip
        page = await self.call(self.memories.list_memories(request))
        return MemoryPage(memories=[_stored(m) for m in page.memories], next_page_token=page.next_page_token)

    async def get_memory(self, memory_id: str) -> StoredOut:
        return _stored(await self.call(self.memories.get(self.scope(), memory_id)))


MemoryId = Annotated[str, Field(min_length=1, max_length=128, description="a memory's id (from recall or list)")]
SessionArg = Annotated[
    str | None,
    Field(default=None, description="the session (conversation) id; default: the one acm mcp was started with"),
]


class _Server(MCPServer[Any]):
    """MCPServer whose argument errors are one line per field ("text: String should have at least 1 character"),
    without pydantic's input echo and links: a model reads them to correct its call."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.__cause__.errors()
            )
            raise ToolError(f"{name}: invalid arguments: {problems}") from exc


def build_server(config: McpConfig) -> tuple[MCPServer, AcmTools]:
    """The MCP server and its tools; the caller runs the server inside `async with tools.connected()`."""
    tools = AcmTools(config)
    where = f"customer {config.customer_id}, user {config.user_id}"
    where += f", agent {config.agent_id}" if config.agent_id else ""
    server = _Server(
        "acm",
        instructions=f"Long-term memory for this agent, kept by ACM ({where}). Call recall before answering "
        "with the user's question to get what is known; call remember with each user message, your own answers, "
        "and tool outputs worth keeping.",
    )

    @server.tool(description="Remember one turn: a user message, the assistant's answer, or a tool's output.")
    async def remember(
        text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT, description="what was said (UTF-8)")],
        role: Annotated[Literal["user", "assistant", "tool", "system"], Field(description="who said it")] = "user",
        tool_name: Annotated[str, Field(max_length=128, description="the tool, when role is 'tool'")] = "",
        session_id: SessionArg = None,
        wait: Annotated[bool, Field(description="wait until ACM has written it (recall then finds it)")] = True,
    ) -> JobOut:
        return await tools.remember(text, role, tool_name, session_id, wait)

    @server.tool(description="Fetch what ACM knows that is relevant to a query, as one context within a token budget.")
    async def recall(
        query: Annotated[str, Field(min_length=1, max_length=10_000, description="the question to answer")],
        budget_tokens: Annotated[
            int, Field(ge=0, le=MAX_BUDGET, description="token budget of the context; 0: the server's default")
        ] = 1000,
        session_id: SessionArg = None,
    ) -> Recalled:
        return await tools.recall(query, budget_tokens, session_id)

    @server.tool(
        description="Erase one memory (memory_id), or everything of this session or user (level). Irreversible."
    )
    async def forget(
        memory_id: Annotated[str | None, Field(min_length=1, max_length=128)] = None,
        level: Annotated[Literal["session", "user"] | None, Field(description="what to erase instead")] = None,
        session_id: SessionArg = None,
    ) -> JobOut:
        return await tools.forget(memory_id, level, session_id)

    @server.tool(description="List this user's memories, newest first, a page at a time.")
    async def list_memories(
        kind: Annotated[str | None, Field(max_length=64, description="e.g. fact, turn, preference")] = None,
        include_stale: Annotated[bool, Field(description="superseded versions too")] = False,
        page_size: Annotated[int, Field(ge=1, le=500)] = 50,
        page_token: Annotated[str, Field(max_length=1024)] = "",
    ) -> MemoryPage:
        return await tools.list_memories(kind, include_stale, page_size, page_token)

    @server.tool(description="One memory by its id, with its status and provenance.")
    async def get_memory(memory_id: MemoryId) -> StoredOut:
        return await tools.get_memory(memory_id)

    return server, tools


async def serve(config: McpConfig, transport: Literal["stdio", "http"], host: str, port: int, path: str) -> None:
    server, tools = build_server(config)
    async with tools.connected():
        if transport == "stdio":
            await server.run_stdio_async()
        else:
            await server.run_streamable_http_async(host=host, port=port, streamable_http_path=path)
