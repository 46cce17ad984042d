"""Turns, memories, entities and jobs: the things ACM keeps."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

from acm.domain.scope import Owner, Scope, Tier


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class Layer(StrEnum):
    SHORT = "short"  # turn previews, the session's working set
    MID = "mid"  # session facts, running summaries
    LONG = "long"  # cross-session facts and preferences


ALL_LAYERS: tuple[Layer, ...] = (Layer.SHORT, Layer.MID, Layer.LONG)


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    STALE = "stale"  # superseded by a newer fact; kept with a pointer, never silently lost


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return uuid.uuid4().hex


def stable_id(*parts: str) -> str:
    """Deterministic id, so a redelivered event rewrites the same rows instead of adding new ones."""
    return uuid.UUID(bytes=hashlib.sha256("\x1f".join(parts).encode()).digest()[:16]).hex


@dataclass(frozen=True, slots=True)
class Turn:
    turn_id: str
    scope: Scope
    role: Role
    content: str
    occurred_at: datetime
    tool_name: str = ""
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Memory:
    memory_id: str
    owner: Owner
    text: str
    layer: Layer
    kind: str  # category from the agent schema ("turn", "fact", "preference", ...)
    source_turn_ids: tuple[str, ...]
    created_at: datetime
    agent_id: str = ""
    session_id: str = ""
    updated_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    token_count: int = 0
    mention_count: int = 1
    access_count: int = 0
    status: MemoryStatus = MemoryStatus.ACTIVE
    superseded_by: str = ""
    schema_version: int = 0
    # "<subject>|<attribute>" for facts that state a value ("alice|lives_in"): a newer fact in the same
    # slot supersedes the older one. Empty for facts that do not.
    slot: str = ""
    # Provenance: the role of the turn that said it (user / assistant / tool / system; "" for memories stored
    # before provenance was kept) and, for a tool's output, the tool.
    role: str = ""
    tool_name: str = ""
    # acm.domain.instruction.Trust: "untrusted" (an authority or rule claim, or any doubtful source) is stored
    # and shown marked, never promoted to LONG.
    trust: str = "normal"
    # The metadata of the turn it came from (redacted as the turn is), sorted (key, value) pairs; a fact said
    # again in another turn has the keys of each turn that said it, the newest value winning.
    metadata: tuple[tuple[str, str], ...] = ()

    @property
    def trusted(self) -> bool:
        return self.trust == "normal"

    @property
    def tier(self) -> Tier:
        return self.owner.tier


def metadata_pairs(*mappings: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """Memory.metadata from one or more mappings (a later one's value wins for the same key)."""
    merged: dict[str, str] = {}
    for mapping in mappings:
        merged.update(mapping)
    return tuple(sorted(merged.items()))


def in_own_session(scope: Scope, m: Memory) -> bool:
    """A memory of one of the reader's own sessions (user tier): only those have turns around them."""
    o = m.owner
    mine = (o.client_id, o.customer_id, o.user_id) == (scope.client_id, scope.customer_id, scope.user_id)
    return bool(m.session_id) and o.tier is Tier.USER and mine


@dataclass(frozen=True, slots=True)
class Entity:
    entity_id: str
    owner: Owner
    name: str
    type: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Relation:
    """A typed edge between two entities, learned from one memory."""

    src_entity_id: str
    dst_entity_id: str
    type: str
    memory_id: str
    owner: Owner


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    memory: Memory
    score: float


class JobStatus(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


@dataclass(slots=True)
class Job:
    job_id: str
    scope: Scope
    kind: str  # "ingest", "forget", ...
    status: JobStatus = JobStatus.PENDING
    error: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
