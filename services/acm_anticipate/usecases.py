"""Anticipate use cases: track what a session mentions, predict its next Fetch and keep that warm."""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from acm import topics
from acm.domain.models import MemoryStatus
from acm.domain.prefetch import fuse_predictions, learn_followers, likely_next, topic_words
from acm.domain.retrieved import RetrievalQuery, RetrievedMemory
from acm.domain.schema import DEFAULT_AGENT, AgentSchema
from acm.domain.scope import ForgetLevel, Scope, Tier
from acm.envelopes import envelope
from acm.ports.bus import EventBus
from acm.ports.memories import SessionMemories
from acm.ports.owners import SchemaSource
from acm.ports.retriever import Retriever
from acm.ports.stores import Cache
from acm.prefetch_state import forget_prefetch, generation_scope, read_generations
from acm.read.pool import PrefetchPool, bounded_pool, encode_pool, load_pool, load_version, store_pool

log = logging.getLogger("acm.anticipate")

RECENT_ENTITIES_KEY = "recent_entities"
LAST_KINDS_KEY = "prefetch:last_kinds"
RECENT_TURNS = 3  # the latest turns stand for "what the conversation is about now"
RECENT_FACTS = 40
SESSION_WINDOW = 120  # session memories read per prediction
QUERY_ENTITIES = 8
# How much each prediction counts when they are fused into one pool.
WEIGHTS = {"conversation": 1.0, "signal": 1.0, "session": 0.8, "entities": 0.7, "categories": 0.5}
MAX_TRACKED_SESSIONS = 10_000
_NOT_FACTS = frozenset({"turn", "flagged_episode"})
_CLIENT_TIER = Tier.CLIENT  # co-access is learned per agent, across the client's users


def merge_recent(previous: Sequence[str], mentioned: Sequence[str], limit: int) -> list[str]:
    """Newest mentions first, each name once (case-insensitive), at most ``limit``."""
    out: list[str] = []
    seen: set[str] = set()
    for name in [*reversed(mentioned), *previous]:
        if name.lower() not in seen:
            seen.add(name.lower())
            out.append(name)
    return out[:limit]


@dataclass
class TrackMentions:
    cache: Cache
    limit: int
    ttl_s: float

    async def __call__(self, scope: Scope, names: Sequence[str]) -> list[str]:
        raw = await self.cache.get(scope, RECENT_ENTITIES_KEY)
        recent = merge_recent(json.loads(raw) if raw else [], names, self.limit)
        await self.cache.set(scope, RECENT_ENTITIES_KEY, json.dumps(recent).encode(), self.ttl_s)
        return recent

    async def recent(self, scope: Scope) -> list[str]:
        raw = await self.cache.get(scope, RECENT_ENTITIES_KEY)
        return list(json.loads(raw)) if raw else []


@dataclass
class WarmSession:
    """Predicts what the session's next Fetch needs and stores it as the session's pool, then tells the
    gateways (acm.prefetch.pools.v1) so that they load it, and the session, before that Fetch."""

    bus: EventBus
    cache: Cache
    retriever: Retriever
    memories: SessionMemories  # retrieve's Memories API (the session's recent facts)
    schemas: SchemaSource  # the architect's (acm.ports.owners)
    track: TrackMentions
    predict_budget_tokens: int
    ttl_s: float
    # Size of the latest pool of recent sessions (bounded; the benchmark reports it).
    last_bytes: OrderedDict[str, int] = field(default_factory=OrderedDict)
    coalesced: int = 0  # writes whose pool was already current (no rebuild)

    async def schema(self, scope: Scope) -> AgentSchema:
        return await self.schemas.latest(scope)

    async def __call__(self, scope: Scope, written_kinds: Sequence[str] = (), signal_query: str = "") -> int:
        """The pool's size in bytes."""
        pool, size = await self._pool(scope, written_kinds, signal_query)
        env = envelope(scope)
        env.pool_ready.version = pool.version
        await self.bus.publish(topics.PREFETCH_POOLS, scope.session_key, env.SerializeToString())
        return size

    async def _pool(self, scope: Scope, written_kinds: Sequence[str], signal_query: str) -> tuple[PrefetchPool, int]:
        # Generations first: a write that lands while the pool is built makes it stale, never wrong.
        generations = await read_generations(self.cache, scope)
        schema = await self.schema(scope)
        recent = await self.memories.session_memories(scope, SESSION_WINDOW)
        turns = [m for m in recent if m.kind == "turn"][:RECENT_TURNS]
        # A superseded fact stays stored (with its pointer) but is never predicted: it is not current.
        facts = [m for m in recent if m.kind not in _NOT_FACTS and m.status is MemoryStatus.ACTIVE]
        entities = (await self.track.recent(scope))[:QUERY_ENTITIES]
        wanted = await self._categories(scope, schema, written_kinds)
        if not signal_query:
            # Coalesce a backlog: a pool already built at these generations saw this write (ingest stores a
            # write before it bumps the generation), so rebuilding it would redo the same retrievals.
            current = await load_pool(self.cache, scope)
            if current is not None and list(current.generations) == generations:
                if current.schema_version == schema.version:
                    self.coalesced += 1
                    return current, len(encode_pool(current))
        predictions: dict[str, list[str]] = {
            "session": [m.memory_id for m in facts[:RECENT_FACTS]],
            "categories": [m.memory_id for m in facts if m.kind in wanted],
        }
        pooled = {m.memory_id: RetrievedMemory.of(m, m.token_count) for m in facts if m.token_count}
        queries = {
            "conversation": " ".join(m.text.partition(": ")[2] or m.text for m in turns),
            "entities": " ".join(entities),
            "signal": signal_query,
        }
        for name, query in queries.items():
            if query.strip():
                answer = await self.retriever.retrieve(RetrievalQuery(scope, query[:2000], self.predict_budget_tokens))
                predictions[name] = [r.memory.memory_id for r in answer.items]
                for r in answer.items:
                    pooled.setdefault(r.memory.memory_id, r.memory)
        items = [(pooled[mid], prior) for mid, prior in fuse_predictions(predictions, WEIGHTS) if mid in pooled]
        pool = bounded_pool(
            items,
            schema,
            generations,
            topic_words(queries["conversation"]),
            predicted_from=[name for name, ids in predictions.items() if ids],
        )
        size = await store_pool(self.cache, scope, pool, min(self.ttl_s, schema.prefetch.ttl_s))
        self.last_bytes[f"{scope.session_key}/{scope.agent_id}"] = size
        while len(self.last_bytes) > MAX_TRACKED_SESSIONS:
            self.last_bytes.popitem(last=False)
        return pool, size

    async def _categories(self, scope: Scope, schema: AgentSchema, written: Sequence[str]) -> set[str]:
        """Open tasks, the categories the schema relates to what was just said, and what usually followed
        it for this agent (co-access, learned here and kept per agent)."""
        current = [k for k in written if k not in _NOT_FACTS]
        agent_scope = generation_scope(scope, _CLIENT_TIER)
        coaccess_key = f"prefetch:coaccess:{scope.agent_id or DEFAULT_AGENT}"
        raw_counts = await self.cache.get(agent_scope, coaccess_key)
        counts: dict[str, dict[str, int]] = json.loads(raw_counts) if raw_counts else {}
        raw_last = await self.cache.get(scope, LAST_KINDS_KEY)
        if current:
            if raw_last:
                counts = learn_followers(counts, json.loads(raw_last), current)
                await self.cache.set(agent_scope, coaccess_key, json.dumps(counts).encode(), None)
            await self.cache.set(scope, LAST_KINDS_KEY, json.dumps(current).encode(), self.ttl_s)
        wanted = set(schema.open_task_categories)
        for kind in current:
            wanted.update(schema.related_categories.get(kind, ()))
        wanted.update(likely_next(counts, current))
        return wanted

    async def known(self, scope: Scope) -> bool:
        """A session anticipate has seen (something was written in it) and that was not forgotten."""
        return bool(await self.track.recent(scope) or await load_version(self.cache, scope))


@dataclass
class DropHotState:
    cache: Cache

    async def __call__(self, scope: Scope, level: ForgetLevel) -> int:
        removed = await self.cache.clear(scope, level)
        await forget_prefetch(self.cache, scope)  # pools of other sessions that saw the erased memories
        if level is ForgetLevel.USER:
            # Other users' pools of the customer may hold what this user alone said at the customer tier (erased
            # with the user): stale already, dropped now so none of it stays in the cache (docs/privacy.md).
            for key_prefix in ("prefetch:ver:", "prefetch:pool:"):
                removed += await self.cache.clear(scope, ForgetLevel.CUSTOMER, key_prefix)
        return removed


@dataclass
class SignalCounters:
    accepted: int = 0
    dropped_unknown_session: int = 0
