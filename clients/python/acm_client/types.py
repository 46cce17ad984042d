"""What the client takes and gives back: plain dataclasses and string enums, never protobuf messages."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeVar

from google.protobuf.timestamp_pb2 import Timestamp

from acm_client._pb import common_pb2, gateway_pb2, memories_pb2


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"
    UNSPECIFIED = "unspecified"


class Tier(StrEnum):
    USER = "user"
    CUSTOMER = "customer"
    CLIENT = "client"
    UNSPECIFIED = "unspecified"


class Layer(StrEnum):
    SHORT = "short"
    MID = "mid"
    LONG = "long"
    UNSPECIFIED = "unspecified"


class Trust(StrEnum):
    NORMAL = "normal"
    UNTRUSTED = "untrusted"
    INSTRUCTION = "instruction"
    UNSPECIFIED = "unspecified"


class JobStatus(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"
    UNSPECIFIED = "unspecified"


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    STALE = "stale"
    UNSPECIFIED = "unspecified"


E = TypeVar("E", bound=StrEnum)


def _enum(cls: type[E], pb_enum: Any, value: int) -> E:
    """A protobuf enum value as the StrEnum of its last word (ROLE_USER → Role.USER, JOB_STATUS_DONE → DONE); a
    value this client does not know yet (a newer server) is UNSPECIFIED."""
    name: str = pb_enum.Name(value) if value in pb_enum.values() else "_UNSPECIFIED"
    return cls(name.rsplit("_", 1)[1].lower())


def _pb_enum(prefix: str, value: StrEnum | str) -> str:
    """The protobuf enum value's name (Role.USER → "ROLE_USER"); protobuf takes names for enum fields."""
    return f"{prefix}_{str(value).upper()}"


def _time(message: Any, name: str) -> datetime | None:
    """A Timestamp field as an aware UTC datetime; None when unset."""
    if not message.HasField(name):
        return None
    stamp: Timestamp = getattr(message, name)
    return stamp.ToDatetime(tzinfo=UTC)


def _stamp(when: datetime) -> Timestamp:
    if when.tzinfo is None:
        raise ValueError(f"{when} has no time zone: give an aware datetime (e.g. datetime.now(UTC))")
    stamp = Timestamp()
    stamp.FromDatetime(when)
    return stamp


@dataclass(frozen=True)
class Scope:
    """Who a call is about. The client comes from the API key (client_id, when given, must match it); customer and
    user live inside that client; most calls need customer_id and user_id, Compact a session_id too."""

    customer_id: str = ""
    user_id: str = ""
    agent_id: str = ""
    session_id: str = ""
    client_id: str = ""

    def to_pb(self) -> common_pb2.Scope:
        return common_pb2.Scope(
            client_id=self.client_id,
            customer_id=self.customer_id,
            user_id=self.user_id,
            agent_id=self.agent_id,
            session_id=self.session_id,
        )


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation: a message, a tool call or a tool's output. Give a turn_id to make its
    ingestion safe to retry (the same turn_id rewrites the same memories)."""

    content: str
    role: Role = Role.USER
    turn_id: str = ""
    occurred_at: datetime | None = None
    tool_name: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)

    def to_pb(self) -> common_pb2.Turn:
        turn = common_pb2.Turn(
            turn_id=self.turn_id,
            role=_pb_enum("ROLE", self.role),
            content=self.content,
            tool_name=self.tool_name,
            metadata=dict(self.metadata),
        )
        if self.occurred_at is not None:
            turn.occurred_at.CopyFrom(_stamp(self.occurred_at))
        return turn

    @classmethod
    def from_pb(cls, turn: common_pb2.Turn) -> Turn:
        return cls(
            content=turn.content,
            role=_enum(Role, common_pb2.Role, turn.role),
            turn_id=turn.turn_id,
            occurred_at=_time(turn, "occurred_at"),
            tool_name=turn.tool_name,
            metadata=dict(turn.metadata),
        )


@dataclass(frozen=True)
class SealingKey:
    """The data key an agent that publishes turns to Kafka itself seals a scope's turns with (docs/privacy.md,
    "Direct publishers"): the body sealed with AES-256-GCM under ``secret``, ``key_id`` in the envelope's
    data_key_id, then signed (acm.sealing.seal_for_publishing does both halves' sealing). Use it until
    ``valid_until`` only: a Forget may destroy it meanwhile, and what it seals after that opens for no one."""

    key_id: str
    secret: bytes = field(repr=False)
    valid_until: datetime

    @classmethod
    def from_pb(cls, response: gateway_pb2.SealingKey) -> SealingKey:
        return cls(response.key_id, response.secret, _time(response, "valid_until") or datetime.now(UTC))


@dataclass(frozen=True)
class Accepted:
    """A turn accepted for ingestion: follow job_id with get_job / wait_job."""

    job_id: str
    event_id: str

    @classmethod
    def from_pb(cls, response: gateway_pb2.IngestResponse) -> Accepted:
        return cls(response.job_id, response.event_id)


@dataclass(frozen=True)
class Job:
    job_id: str
    kind: str
    status: JobStatus
    error: str
    counts: dict[str, int]
    created_at: datetime | None
    updated_at: datetime | None

    @property
    def finished(self) -> bool:
        return self.status in (JobStatus.DONE, JobStatus.FAILED)

    @classmethod
    def from_pb(cls, job: gateway_pb2.Job) -> Job:
        return cls(
            job_id=job.job_id,
            kind=job.kind,
            status=_enum(JobStatus, gateway_pb2.JobStatus, job.status),
            error=job.error,
            counts=dict(job.counts),
            created_at=_time(job, "created_at"),
            updated_at=_time(job, "updated_at"),
        )


@dataclass(frozen=True)
class Memory:
    memory_id: str
    tier: Tier
    layer: Layer
    kind: str
    text: str
    source_turn_ids: list[str]
    token_count: int
    score: float
    created_at: datetime | None
    valid_from: datetime | None
    session_id: str
    role: Role
    tool_name: str
    trust: Trust

    @classmethod
    def from_pb(cls, memory: common_pb2.Memory) -> Memory:
        return cls(
            memory_id=memory.memory_id,
            tier=_enum(Tier, common_pb2.Tier, memory.tier),
            layer=_enum(Layer, common_pb2.Layer, memory.layer),
            kind=memory.kind,
            text=memory.text,
            source_turn_ids=list(memory.source_turn_ids),
            token_count=memory.token_count,
            score=memory.score,
            created_at=_time(memory, "created_at"),
            valid_from=_time(memory, "valid_from"),
            session_id=memory.session_id,
            role=_enum(Role, common_pb2.Role, memory.role),
            tool_name=memory.tool_name,
            trust=_enum(Trust, common_pb2.Trust, memory.trust),
        )


@dataclass(frozen=True)
class PinnedEntity:
    key: str
    type: str
    attributes: dict[str, str]
    source_turn_ids: list[str]
    updated_at: datetime | None

    @classmethod
    def from_pb(cls, pinned: gateway_pb2.PinnedEntity) -> PinnedEntity:
        return cls(
            pinned.key,
            pinned.type,
            dict(pinned.attributes),
            list(pinned.source_turn_ids),
            _time(pinned, "updated_at"),
        )


@dataclass(frozen=True)
class ContextPart:
    name: str  # "pinned", "memories", "summary" or "recent"
    tokens: int
    text: str


@dataclass(frozen=True)
class Compaction:
    compaction_id: str
    outcome: str  # "compacted", "unchanged", "degraded" or "failed"
    tokens_before: int
    tokens_after: int
    ratio: float
    verified: bool
    attempts: int
    missing_atoms: list[str]
    unsupported_atoms: list[str]
    turns_replaced: int
    turns_verbatim: int
    created_at: datetime | None
    message: str
    latency_ms: float

    @classmethod
    def from_pb(cls, c: gateway_pb2.Compaction) -> Compaction:
        return cls(
            compaction_id=c.compaction_id,
            outcome=c.outcome,
            tokens_before=c.tokens_before,
            tokens_after=c.tokens_after,
            ratio=c.ratio,
            verified=c.verified,
            attempts=c.attempts,
            missing_atoms=list(c.missing_atoms),
            unsupported_atoms=list(c.unsupported_atoms),
            turns_replaced=c.turns_replaced,
            turns_verbatim=c.turns_verbatim,
            created_at=_time(c, "created_at"),
            message=c.message,
            latency_ms=c.latency_ms,
        )


@dataclass(frozen=True)
class Context:
    """Fetch's answer: ``context`` is the whole bundle as one text, ready for a prompt, within budget_tokens;
    the other fields are its parts."""

    context: str
    context_tokens: int
    memories: list[Memory]
    total_tokens: int  # the memories' tokens
    budget_tokens: int
    dropped: int  # candidates that did not fit the budget
    encoding: str
    pinned: list[PinnedEntity]
    summary: str
    recent_turns: list[Turn]
    parts: list[ContextPart]
    from_prefetch: bool
    notice: str
    last_compaction: Compaction | None

    @classmethod
    def from_pb(cls, r: gateway_pb2.FetchResponse) -> Context:
        return cls(
            context=r.context,
            context_tokens=r.context_tokens,
            memories=[Memory.from_pb(m) for m in r.memories],
            total_tokens=r.total_tokens,
            budget_tokens=r.budget_tokens,
            dropped=r.dropped,
            encoding=r.encoding,
            pinned=[PinnedEntity.from_pb(p) for p in r.pinned],
            summary=r.summary,
            recent_turns=[Turn.from_pb(t) for t in r.recent_turns],
            parts=[ContextPart(p.name, p.tokens, p.text) for p in r.parts],
            from_prefetch=r.from_prefetch,
            notice=r.notice,
            last_compaction=Compaction.from_pb(r.last_compaction) if r.HasField("last_compaction") else None,
        )


@dataclass(frozen=True)
class AgentSchema:
    agent_id: str
    version: int
    archetype: str
    schema: dict[str, Any]  # the whole schema, parsed from its JSON
    created_at: datetime | None
    rationale: str  # how the archetype was chosen

    @classmethod
    def from_pb(cls, info: gateway_pb2.AgentSchemaInfo) -> AgentSchema:
        schema = json.loads(info.schema_json) if info.schema_json else {}
        return cls(info.agent_id, info.version, info.archetype, schema, _time(info, "created_at"), info.rationale)


@dataclass(frozen=True)
class StoredMemory:
    """A memory as stored, with its lifecycle (the Memory API)."""

    memory: Memory
    agent_id: str
    status: MemoryStatus
    superseded_by: str
    slot: str
    updated_at: datetime | None
    valid_to: datetime | None
    metadata: Mapping[str, str] = field(default_factory=dict)  # its turn's metadata, redacted as the turn was

    @classmethod
    def from_pb(cls, stored: memories_pb2.StoredMemory) -> StoredMemory:
        return cls(
            memory=Memory.from_pb(stored.memory),
            agent_id=stored.agent_id,
            status=_enum(MemoryStatus, memories_pb2.MemoryStatus, stored.status),
            superseded_by=stored.superseded_by,
            slot=stored.slot,
            updated_at=_time(stored, "updated_at"),
            valid_to=_time(stored, "valid_to"),
            metadata=dict(stored.metadata),
        )


@dataclass(frozen=True)
class MemoryPage:
    memories: list[StoredMemory]
    next_page_token: str  # empty on the last page


@dataclass(frozen=True)
class ExportPage:
    jsonl: str  # one StoredMemory per line, protobuf JSON (import_user reads it back)
    count: int
    next_page_token: str  # empty on the last page


@dataclass(frozen=True)
class MemoryJob:
    job_id: str
    memory_id: str  # the new version (update), the memory (delete); empty for import


@dataclass(frozen=True)
class MemoryFilter:
    """list_memories' filters: each one given must match; empty lists and strings match everything."""

    tiers: tuple[Tier, ...] = ()
    layers: tuple[Layer, ...] = ()
    kinds: tuple[str, ...] = ()  # e.g. "fact", "turn", "preference", "record"
    created_after: datetime | None = None
    created_before: datetime | None = None
    trust: tuple[Trust, ...] = ()
    entity: str = ""
    role: Role | None = None
    tool_name: str = ""
    include_stale: bool = False
    metadata: Mapping[str, str] = field(default_factory=dict)  # each key must have exactly this value

    def to_pb(self, scope: Scope, page_size: int, page_token: str) -> memories_pb2.ListMemoriesRequest:
        request = memories_pb2.ListMemoriesRequest(
            scope=scope.to_pb(),
            tiers=[_pb_enum("TIER", t) for t in self.tiers],
            layers=[_pb_enum("LAYER", layer) for layer in self.layers],
            kinds=list(self.kinds),
            trust=[_pb_enum("TRUST", t) for t in self.trust],
            entity=self.entity,
            role=_pb_enum("ROLE", self.role or Role.UNSPECIFIED),
            tool_name=self.tool_name,
            include_stale=self.include_stale,
            metadata=[f"{key}={value}" for key, value in sorted(self.metadata.items())],
            page_size=page_size,
            page_token=page_token,
        )
        if self.created_after is not None:
            request.created_after.CopyFrom(_stamp(self.created_after))
        if self.created_before is not None:
            request.created_before.CopyFrom(_stamp(self.created_before))
        return request
