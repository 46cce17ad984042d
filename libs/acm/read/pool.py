"""A session's prefetch pool: its format (a versioned dataclass and its codec), how it is built from the
predictions' retrieval results, and where it is kept in the Cache port.

A pool lives under the session's full scope and the agent's id (``prefetch:pool:<agent>``), so a reader
in another session, user, customer, client or agent can never be served it. It records the write
generations it was built under (acm.prefetch_state) and is stale as soon as one differs.

A pool is stored as compact JSON with a format number ("v"): a reader meets a pool of another format (a
newer or older anticipate during a rollout) as a miss, never an error. Anticipate decides when and what to
warm and calls bounded_pool and store_pool; acm.read.prefetching serves from it."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from acm.domain.models import Layer
from acm.domain.prefetch import TERMS_VERSION, PoolEntry, index_pool, trim
from acm.domain.retrieved import RetrievedMemory
from acm.domain.schema import DEFAULT_AGENT, AgentSchema
from acm.domain.scope import Scope, Tier
from acm.ports.stores import Cache
from acm.prefetch_state import TIERS_IN_ORDER, as_text, generation_ref


async def read_pool_state(cache: Cache, scope: Scope) -> tuple[str, list[str]]:
    """The session's pool version and the scope's generation tokens, in one round trip ("" where unset)."""
    raw = await cache.get_many([(scope, version_key(scope)), *(generation_ref(scope, t) for t in TIERS_IN_ORDER)])
    version, *generations = (as_text(v) for v in raw)
    return version, generations


def pool_key(scope: Scope) -> str:
    return f"prefetch:pool:{scope.agent_id or DEFAULT_AGENT}"


def version_key(scope: Scope) -> str:
    return f"prefetch:ver:{scope.agent_id or DEFAULT_AGENT}"


POOL_FORMAT = 1


@dataclass(frozen=True, slots=True)
class PrefetchPool:
    """What the anticipate service keeps warm for one session."""

    version: str  # changes on every rebuild: readers keep the decoded pool while it is the same
    # The scope's write generations (user, customer, client tier) when it was built: a write into any of them
    # since makes the pool stale.
    generations: tuple[str, ...]
    memories: tuple[RetrievedMemory, ...]  # candidates, best guess first
    # A BM25 index over the memories' texts, built by anticipate so that a Fetch only looks up the question's
    # words: term → (the memories holding it, as indices into ``memories``; its frequency in each).
    postings: Mapping[str, tuple[tuple[int, ...], tuple[int, ...]]]
    lengths: tuple[int, ...]  # content words per memory
    prior: tuple[float, ...]  # the anticipated relevance, scaled to [0, 1]
    recency: tuple[float, ...]  # rank by time, scaled to (0, 1]
    # The content words of the latest turns the pool was predicted from: what the session is about now.
    topic_terms: tuple[str, ...] = ()
    # How ``postings`` and ``topic_terms`` were made from text (acm.domain.prefetch.TERMS_VERSION): a reader
    # that makes its question's words another way treats the pool as cold.
    terms_version: int = 0
    predicted_from: tuple[str, ...] = ()  # the predictions it was fused from (for debugging and tests)
    built_at_unix_ms: int = 0
    schema_version: int = 0


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


def _micros(at: datetime | None) -> int | None:
    return None if at is None else (at - _EPOCH) // _US


def _at(micros: int | None) -> datetime | None:
    return None if micros is None else _EPOCH + timedelta(microseconds=micros)


def pool_time(m: RetrievedMemory) -> float:
    """When a pooled memory holds (else when it was said), in whole seconds: the time its recency and a
    question's window are judged by."""
    at = m.valid_from or m.created_at
    return 0.0 if at is None else float((at - _EPOCH) // timedelta(seconds=1))


def memory_row(m: RetrievedMemory) -> list[Any]:
    """A pooled memory as the format stores it (one array: no field names repeated per memory)."""
    return [
        m.memory_id,
        m.tier.value,
        m.layer.value,
        m.kind,
        m.text,
        m.source_turn_ids,
        m.tokens,
        _micros(m.created_at),
        _micros(m.valid_from),
        m.session_id,
        m.role,
        m.tool_name,
        m.trust,
    ]


def _json(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def stored_size(m: RetrievedMemory) -> int:
    """The bytes a pooled memory takes in the format (its share of the pool's size, index aside)."""
    return len(_json(memory_row(m)))


def _memory(row: list[Any]) -> RetrievedMemory:
    mid, tier, layer, kind, text, turns, tokens, created, valid, session, role, tool, trust = row
    return RetrievedMemory(
        mid,
        Tier(tier),
        Layer(layer),
        kind,
        text,
        tuple(turns),
        tokens,
        _at(created),
        _at(valid),
        session,
        role,
        tool,
        trust,
    )


def encode_pool(pool: PrefetchPool) -> bytes:
    data = {
        "v": POOL_FORMAT,
        "version": pool.version,
        "generations": pool.generations,
        "memories": [memory_row(m) for m in pool.memories],
        "postings": pool.postings,
        "lengths": pool.lengths,
        "prior": pool.prior,
        "recency": pool.recency,
        "topic_terms": pool.topic_terms,
        "terms_version": pool.terms_version,
        "predicted_from": pool.predicted_from,
        "built_at_unix_ms": pool.built_at_unix_ms,
        "schema_version": pool.schema_version,
    }
    return _json(data)


def decode_pool(raw: bytes) -> PrefetchPool | None:
    """The pool, or None when it is of another format (or unreadable): the reader treats that as a miss."""
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("v") != POOL_FORMAT:
            return None
        return PrefetchPool(
            version=data["version"],
            generations=tuple(data["generations"]),
            memories=tuple(_memory(row) for row in data["memories"]),
            postings={t: (tuple(docs), tuple(tfs)) for t, (docs, tfs) in data["postings"].items()},
            lengths=tuple(data["lengths"]),
            prior=tuple(data["prior"]),
            recency=tuple(data["recency"]),
            topic_terms=tuple(data["topic_terms"]),
            terms_version=data["terms_version"],
            predicted_from=tuple(data["predicted_from"]),
            built_at_unix_ms=data["built_at_unix_ms"],
            schema_version=data["schema_version"],
        )
    except (ValueError, KeyError, TypeError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None


async def store_pool(cache: Cache, scope: Scope, pool: PrefetchPool, ttl_s: float) -> int:
    """Pool first, then its version (readers go by the version); returns the stored size in bytes."""
    data = encode_pool(pool)
    await cache.set(scope, pool_key(scope), data, ttl_s)
    await cache.set(scope, version_key(scope), pool.version.encode(), ttl_s)
    return len(data)


async def load_version(cache: Cache, scope: Scope) -> str:
    return as_text(await cache.get(scope, version_key(scope)))


async def load_pool(cache: Cache, scope: Scope) -> PrefetchPool | None:
    """The session's pool; None when there is none or it is of another format."""
    raw = await cache.get(scope, pool_key(scope))
    return None if raw is None else decode_pool(raw)


async def drop_pool(cache: Cache, scope: Scope) -> None:
    await cache.delete(scope, version_key(scope))
    await cache.delete(scope, pool_key(scope))


def build_pool(
    items: Sequence[tuple[RetrievedMemory, float]],
    generations: Sequence[str],
    topic: Iterable[str] = (),
    *,
    predicted_from: Sequence[str] = (),
    schema_version: int = 0,
) -> PrefetchPool:
    """The pool of ``items`` (memory, prior; best first) with its BM25 index (so a Fetch ranks it without
    tokenising anything but the question) and its topic (the content words of the turns it was predicted from;
    a Fetch about something else is not served from it)."""
    indexed = index_pool([PoolEntry(m.text, prior, pool_time(m)) for m, prior in items])
    return PrefetchPool(
        version=uuid.uuid4().hex,
        generations=tuple(generations),
        memories=tuple(m for m, _ in items),
        postings={term: (tuple(docs), tuple(tfs)) for term, (docs, tfs) in indexed.postings.items()},
        lengths=tuple(indexed.lengths),
        prior=tuple(indexed.prior),
        recency=tuple(indexed.recency),
        topic_terms=tuple(sorted(set(topic))),
        terms_version=TERMS_VERSION,
        predicted_from=tuple(predicted_from),
        built_at_unix_ms=int(time.time() * 1000),
        schema_version=schema_version,
    )


def bounded_pool(
    items: Sequence[tuple[RetrievedMemory, float]],
    schema: AgentSchema,
    generations: Sequence[str],
    topic: Iterable[str] = (),
    *,
    predicted_from: Sequence[str] = (),
) -> PrefetchPool:
    """The best items whose whole pool (index included, as stored) fits the schema's entries and bytes."""
    budget = schema.prefetch.max_bytes
    sizes = [stored_size(m) for m, _ in items]
    while True:
        kept = trim(sizes, schema.prefetch.max_entries, budget)
        pool = build_pool(
            [items[i] for i in kept], generations, topic, predicted_from=predicted_from, schema_version=schema.version
        )
        size = len(encode_pool(pool))
        if size <= schema.prefetch.max_bytes or not kept:
            return pool
        budget = int(budget * schema.prefetch.max_bytes / size * 0.95)  # the index's share, with margin
