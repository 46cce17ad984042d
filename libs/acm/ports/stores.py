"""Store ports. Every read takes the reader's Scope explicitly; adapters enforce visibility
(acm.domain.scope.visible) in their own query language, so a bug in a service cannot leak data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from acm.domain.models import ALL_LAYERS, Entity, Job, JobStatus, Layer, Memory, Relation, ScoredMemory
from acm.domain.schema import AgentSchema
from acm.domain.scope import ADMIN, ALL_TIERS, ForgetLevel, Grant, Owner, Scope, Tier


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """What MemoryRepo.page returns (the Memory API's ListMemories, MemoryHistory, ExportUser): every field that
    is set must match. Only memories the reader's scope sees, always."""

    tiers: tuple[Tier, ...] = ALL_TIERS
    layers: tuple[Layer, ...] = ALL_LAYERS
    kinds: tuple[str, ...] = ()
    created_after: datetime | None = None  # inclusive
    created_before: datetime | None = None  # exclusive
    trust: tuple[str, ...] = ()
    role: str = ""
    tool_name: str = ""
    include_stale: bool = False
    slot: str = ""
    superseded_by: str = ""  # the versions a memory replaced
    among: tuple[str, ...] | None = None  # only these memory ids (e.g. those mentioning an entity)
    metadata: tuple[tuple[str, str], ...] = ()  # (key, value) pairs the memory's metadata must all have


@dataclass(frozen=True, slots=True)
class UserSummary:
    customer_id: str
    user_id: str
    memories: int  # active user-tier memories


@dataclass(frozen=True, slots=True)
class PageMark:
    """Where a page of MemoryRepo.page ended: its last memory's (created_at, memory_id)."""

    created_at: datetime
    memory_id: str


class MemoryRepo(Protocol):
    """Source of truth for memories, with a keyword (full-text) index over their text."""

    async def upsert(self, memories: Sequence[Memory]) -> None:
        """Insert or replace by memory_id (idempotent: a redelivered event rewrites the same rows)."""

    async def get(self, scope: Scope, memory_ids: Sequence[str]) -> list[Memory]:
        """The visible memories among ``memory_ids`` (others are silently absent)."""

    async def keyword_search(
        self,
        scope: Scope,
        query: str,
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
        layers: tuple[Layer, ...] = ALL_LAYERS,
    ) -> list[ScoredMemory]:
        """Full-text search over visible, active memories of those layers; best first; score > 0 is
        higher-better."""

    async def keyword_ids(
        self,
        scope: Scope,
        query: str,
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
        layers: tuple[Layer, ...] = ALL_LAYERS,
    ) -> list[str]:
        """keyword_search's memory ids only, in its order (cheap enough for thousands of hits)."""

    async def phrase_search(
        self,
        scope: Scope,
        phrases: Sequence[str],
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
        layers: tuple[Layer, ...] = ALL_LAYERS,
    ) -> list[Memory]:
        """Visible, active memories whose text holds any of ``phrases`` as consecutive words of the keyword
        index ("SKU-900271" → sku, 900271 in that order: every piece, not any of them), newest first."""

    async def active_in_slot(self, scope: Scope, slot: str) -> list[Memory]:
        """Visible, active memories stating a value for ``slot`` (normally at most one)."""

    async def turn_neighbours(
        self, scope: Scope, anchors: Sequence[Memory], layers: tuple[Layer, ...] = ALL_LAYERS
    ) -> list[Memory]:
        """The active memories of the turn just before and the turn just after each anchor, in the anchor's
        session, those layers only (a turn: what was said at one instant of a session). Only the reader's
        own sessions have turns: anchors of another tier or owner are ignored."""

    async def session_memories(self, scope: Scope, limit: int, layers: tuple[Layer, ...] = ALL_LAYERS) -> list[Memory]:
        """The scope's session (scope.session_id required), those layers only, newest first."""

    async def users(self, client_id: str, limit: int, after: tuple[str, str] | None = None) -> list[UserSummary]:
        """The client's (customer, user) pairs with active user-tier memories, by customer then user, after
        ``after`` (a pair), at most ``limit``: where an operator starts (ListUsers)."""

    async def page(self, scope: Scope, where: MemoryFilter, limit: int, after: PageMark | None = None) -> list[Memory]:
        """Visible memories matching ``where``, newest first (created_at, then memory_id, descending), at most
        ``limit``, those after ``after`` in that order."""

    async def delete(self, scope: Scope, memory_ids: Sequence[str]) -> list[str]:
        """Erase these memories (those the scope sees) with their authorship rows; their ids. Erased bytes do not
        stay in the embedded files."""

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        """Erase every memory that ``level`` of ``scope`` covers (and, above session level, the authorship
        rows of the users it covers); returns how many. Erased bytes do not stay in the embedded files."""

    async def add_authors(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        """Record the scope's user as an author of these (customer- or client-tier) memories."""

    async def forget_authored(self, scope: Scope) -> list[str]:
        """A user-level Forget's share of the shared tiers: drop the scope's user from every memory's authors
        and erase the customer- and client-tier memories that user alone said; their ids. Run it before
        forget(), which drops the user's authorship rows."""

    async def expire(self, scope: Scope, cutoffs: Mapping[Layer, datetime], limit: int) -> list[str]:
        """Delete the scope's own user-tier memories of its agent whose layer has a cutoff and that were
        last written (updated_at, else created_at) before it; at most ``limit``; returns their ids."""

    # The idle expiry sweep (acm_ingest.consolidate.SweepIdle) finds its work with these three.

    async def clients_with_memories(self) -> list[str]:
        """Ids of the clients holding user-tier memories, sorted. The one memory read without a Scope: the
        sweep must visit every tenant to enforce its TTLs, and it returns ids only (never content)."""

    async def scan(self, after: str, limit: int) -> list[Memory]:
        """Every memory (all tenants, any status) with memory_id > ``after``, by memory_id, at most ``limit``.
        Admin only, without a Scope: the re-index (acm.reindex) rebuilds the vector index from them."""

    async def agents(self, scope: Scope) -> list[str]:
        """Distinct agent ids of the user-tier memories in the scope's client (only client_id is read), sorted."""

    async def expiry_due(self, scope: Scope, cutoffs: Mapping[Layer, datetime], limit: int) -> list[Scope]:
        """The (customer, user, agent) scopes of the scope's client and agent holding a user-tier memory that
        expire() with these cutoffs would delete (the same predicate); at most ``limit``, sorted."""


class JobRepo(Protocol):
    async def create(self, job: Job) -> None:
        """Insert if absent (a retried Ingest must not reset a finished job)."""

    async def get(self, scope: Scope, job_id: str) -> Job | None:
        """The job if the scope's client, customer and user created it (another user's job is None)."""

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        """Delete the jobs that forgetting ``level`` of ``scope`` covers (acm.domain.scope.forgets); the count."""

    async def finish(
        self, scope: Scope, job_id: str, status: JobStatus, counts: dict[str, int], error: str = ""
    ) -> None:
        """Record the outcome (creating the row if the create was lost)."""

    async def of_client(
        self, client_id: str, limit: int, status: JobStatus | None = None, after: tuple[datetime, str] | None = None
    ) -> list[Job]:
        """The client's jobs, newest first (created_at, then job_id, descending), of ``status`` only if given,
        those after ``after`` (a job's (created_at, job_id)) in that order, at most ``limit`` (ListJobs)."""


@dataclass(frozen=True, slots=True)
class DeadLetterEntry:
    """A dead letter as the gateway keeps it: where, when, why and how large, never the event (it can hold a
    user's data). ``client_id`` is the event's claimed client ("" when it was not even an envelope)."""

    letter_id: str  # the dead-letter record's own topic/partition/offset: redelivery is the same letter
    client_id: str
    group: str
    topic: str
    key: str
    reason: str
    attempts: int
    size_bytes: int
    failed_at: datetime
    event_id: str = ""
    # The rest of the event's claimed scope: a Forget deletes the forgotten scope's letters (their keys name it).
    customer_id: str = ""
    user_id: str = ""
    session_id: str = ""


class DeadLetterRepo(Protocol):
    async def add(self, letter: DeadLetterEntry) -> None:
        """Insert if absent (a redelivered dead letter changes nothing)."""

    async def of_client(
        self, client_id: str, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[DeadLetterEntry]:
        """The client's dead letters, newest first (failed_at, then letter_id, descending), those after ``after``
        in that order, at most ``limit`` (ListDeadLetters)."""

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        """Delete the letters that forgetting ``level`` of ``scope`` covers (acm.domain.scope.forgets); the count."""


@dataclass(frozen=True, slots=True)
class ApiKey:
    key_id: str
    client_id: str
    key_hash: str  # sha256 hex of the secret; the secret itself is never stored
    name: str
    created_at: datetime
    revoked: bool = False
    grant: Grant = ADMIN  # role and, for an agent key, its customers / users; keys from before roles: admin


class ApiKeyRepo(Protocol):
    async def add(self, key: ApiKey) -> None: ...

    async def by_hash(self, key_hash: str) -> ApiKey | None:
        """Authentication: the one lookup that comes before any scope exists."""

    async def by_id(self, client_id: str, key_id: str) -> ApiKey | None:
        """For verifying an envelope's signature: the key must belong to the claimed client."""

    async def of_client(self, client_id: str) -> Sequence[ApiKey]:
        """The client's keys, newest first, revoked ones too (ListKeys: the operator console's keys view)."""


class ProcessedEvents(Protocol):
    """Idempotency keys: a consumer group marks an event after its writes succeed."""

    async def seen(self, group: str, event_id: str) -> bool: ...

    async def mark(self, group: str, event_id: str) -> None: ...

    async def seen_among(self, group: str, event_ids: Sequence[str]) -> set[str]:
        """Which of ``event_ids`` the group marked (one query for a micro-batch)."""

    async def mark_all(self, group: str, event_ids: Sequence[str]) -> None:
        """``mark`` for each of ``event_ids``, in one statement."""


@dataclass(frozen=True, slots=True)
class AuditEntry:
    client_id: str
    action: str
    detail: str
    at: datetime


class AuditLog(Protocol):
    async def record(self, client_id: str, action: str, detail: str) -> None: ...

    async def list(self, scope: Scope, limit: int = 100) -> list[AuditEntry]:
        """The scope's client's entries, newest first."""


@dataclass(frozen=True, slots=True)
class VectorPoint:
    memory_id: str
    vector: Sequence[float]
    owner: Owner
    layer: Layer
    created_at: datetime
    session_id: str = ""
    model: str = ""  # the embedding model that made the vector (Embedder.name); searches compare only within one


class VectorStore(Protocol):
    """Vectors with their owner's scope and their embedding model in the payload. A search names the model of
    its query vector and only compares it with vectors of that model: changing the embedder is a re-index
    (acm.reindex), never a silent mix of two vector spaces."""

    async def ensure(self, dim: int) -> None:
        """Create the collection (and its payload indexes) if missing."""

    async def upsert(self, points: Sequence[VectorPoint]) -> None: ...

    async def search(
        self,
        scope: Scope,
        vector: Sequence[float],
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
        among: Sequence[str] | None = None,
        *,
        model: str,
    ) -> list[tuple[str, float]]:
        """(memory_id, cosine similarity) of visible points of ``model``, best first; with ``among``, only those
        memories (an empty ``among`` finds nothing)."""

    async def count(self, model: str | None = None) -> int:
        """Points stored (of ``model`` when given): for health checks and the re-index's progress."""

    async def models_of(self, memory_ids: Sequence[str]) -> dict[str, str]:
        """memory_id → the model of its stored point, for those of ``memory_ids`` that have one (admin: the
        re-index resumes by skipping what already carries the new model)."""

    async def reset(self, dim: int) -> None:
        """Drop every point and recreate the collection for ``dim``-d vectors (a re-index to a model of
        another dimension)."""

    async def forget(self, scope: Scope, level: ForgetLevel) -> None: ...

    async def delete(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        """Remove these memories' points, only where they are the scope's own user-tier points or points of
        its customer's or client's tier (a user's Forget erases what that user alone said there)."""

    async def close(self) -> None: ...


class GraphStore(Protocol):
    """Entities, the memories that mention them, and typed relations between them."""

    async def upsert_entities(self, entities: Sequence[Entity]) -> None: ...

    async def link_mentions(
        self, owner: Owner, memory_id: str, entity_ids: Sequence[str], session_id: str = ""
    ) -> None:
        """Record that the memory (owned by ``owner``, written in ``session_id``) mentions these entities."""

    async def upsert_relations(self, relations: Sequence[Relation]) -> None: ...

    async def find_entities(
        self, scope: Scope, names: Sequence[str], tiers: tuple[Tier, ...] = ALL_TIERS
    ) -> list[Entity]:
        """Visible entities whose name or an alias equals one of ``names`` (case-insensitive)."""

    async def expand(
        self,
        scope: Scope,
        entity_ids: Sequence[str],
        depth: int,
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
    ) -> list[tuple[str, int]]:
        """(memory_id, hops) of visible memories mentioning an entity within ``depth`` relation hops
        of ``entity_ids``, walking only visible entities; nearest first."""

    async def forget(self, scope: Scope, level: ForgetLevel) -> None: ...

    async def unlink_memories(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        """Drop these memories (the scope's own user-tier ones) from the graph, with the edges learned
        from them; entities stay."""

    async def supersede(self, owner: Owner, memory_id: str, successor_id: str) -> None:
        """``memory_id`` (``owner``'s) was superseded by ``successor_id`` (same owner): the successor mentions
        what it mentioned, and it leaves the graph with the edges learned from it, so an expansion reaches the
        current value, never the stale one. Idempotent; nothing when the memory has no links."""

    async def entities_after(self, after: str, limit: int) -> list[Entity]:
        """Every entity of every client, by id after ``after`` (maintenance: ingest's registry filled from a
        graph written before retrieve owned it, acm_cli.graph_backfill)."""

    async def close(self) -> None: ...


class Cache(Protocol):
    """Hot state (sessions, prefetch, job status). Keys live under the full scope."""

    async def get(self, scope: Scope, key: str) -> bytes | None: ...

    async def get_many(self, keys: Sequence[tuple[Scope, str]]) -> list[bytes | None]:
        """Several keys (each under its own scope) in one round trip, in order."""

    async def set(self, scope: Scope, key: str, value: bytes, ttl_s: float | None = None) -> None: ...

    async def delete(self, scope: Scope, key: str) -> None: ...

    async def incr(self, scope: Scope, key: str, amount: int = 1) -> int: ...

    async def clear(self, scope: Scope, level: ForgetLevel, key_prefix: str = "") -> int:
        """Drop every key under ``level`` of ``scope`` (only the keys whose name starts with ``key_prefix``, when
        given, in every scope under it); returns how many."""

    async def close(self) -> None: ...


class SchemaRepo(Protocol):
    """Versioned agent schemas, per client."""

    async def latest(self, scope: Scope, agent_id: str) -> AgentSchema | None:
        """The newest version of the agent's schema in the scope's client."""

    async def put(self, client_id: str, schema: AgentSchema) -> bool:
        """Store this version; False (and no change) if that version already exists."""

    async def version(self, scope: Scope, agent_id: str, version: int) -> AgentSchema | None:
        """One version of the agent's schema in the scope's client."""

    async def agents(self, scope: Scope) -> list[AgentSchema]:
        """The latest version of every agent of the scope's client, by agent id."""
