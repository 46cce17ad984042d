"""The gateway's edge: its public messages (acm.v1.gateway) to and from the domain types its use cases speak."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from acm.convert import ROLE_TO_PB, compaction_to_pb, from_ts, retrieved_to_pb, tiers_from_pb, ts
from acm.domain.bundle import ContextBundle
from acm.domain.compaction.engine import SessionTurn
from acm.domain.compaction.pinned import PinnedEntity
from acm.domain.models import Role
from acm.domain.retrieved import RetrievalQuery, RetrievedMemory
from acm.domain.scope import Scope
from acm.domain.tokens import DEFAULT_ENCODING
from acm.v1 import common_pb2, gateway_pb2


def fetch_query(scope: Scope, request: gateway_pb2.FetchRequest) -> RetrievalQuery:
    """The Fetch as the use case takes it; budget 0 stays 0 (the gateway's default applies). Raises
    InvalidRequest for unknown tiers."""
    return RetrievalQuery(
        scope=scope,
        text=request.query,
        budget_tokens=request.budget_tokens,
        encoding=request.encoding or DEFAULT_ENCODING,
        tiers=tiers_from_pb(list(request.tiers)),
        as_of=from_ts(request.as_of),
    )


_CACHED_CHARS = 2048  # memories up to this long are cached (at most 4096 of them: the bound on size)


@functools.lru_cache(maxsize=4096)
def _cached_memory_pb(memory: RetrievedMemory) -> common_pb2.Memory:
    return retrieved_to_pb(memory, 0.0)


def _memory_pb(memory: RetrievedMemory) -> common_pb2.Memory:
    """Cached: a session's pooled memories are served again on every Fetch until the pool is rebuilt, and
    copying a built message costs a fraction of building it. Never changed: the response takes copies."""
    return _cached_memory_pb(memory) if len(memory.text) <= _CACHED_CHARS else retrieved_to_pb(memory, 0.0)


def bundle_to_pb(bundle: ContextBundle) -> gateway_pb2.FetchResponse:
    response = gateway_pb2.FetchResponse(
        total_tokens=bundle.total_tokens,
        context_tokens=bundle.context_tokens,
        budget_tokens=bundle.budget_tokens,
        dropped=bundle.dropped,
        encoding=bundle.encoding,
        pinned=pinned_to_pb(bundle.pinned),
        summary=bundle.summary,
        recent_turns=[_turn_pb(t) for t in bundle.recent_turns],
        parts=[gateway_pb2.ContextPart(name=p.name, tokens=p.tokens, text=p.text) for p in bundle.parts],
        context=bundle.context,
        notice=bundle.notice,
        from_prefetch=bundle.from_prefetch,
    )
    for r in bundle.memories:
        item = response.memories.add()
        item.CopyFrom(_memory_pb(r.memory))
        item.score = r.score
    if bundle.last_compaction is not None:
        response.last_compaction.CopyFrom(compaction_to_pb(bundle.last_compaction))
    return response


def pinned_to_pb(entities: Sequence[PinnedEntity]) -> list[gateway_pb2.PinnedEntity]:
    return [
        gateway_pb2.PinnedEntity(
            key=e.key,
            type=e.type,
            attributes=e.attributes,
            source_turn_ids=list(e.source_turn_ids),
            updated_at=ts(e.updated_at),
        )
        for e in entities
    ]


@functools.lru_cache(maxsize=1024)  # turns are at most max_turn_bytes: the bound is on count and size
def _turn_pb(turn: SessionTurn) -> common_pb2.Turn:
    """Cached: a session's recent turns are shown again on every Fetch until the next compaction. The
    response copies it (a repeated message field takes copies), so the cached message is never changed."""
    role = Role(turn.role) if turn.role in {r.value for r in Role} else Role.USER
    return common_pb2.Turn(
        turn_id=turn.turn_id,
        role=ROLE_TO_PB[role],
        content=turn.body,
        occurred_at=ts(turn.at),
        tool_name=turn.tool_name,
        metadata={"speaker": turn.speaker} if turn.speaker else {},
    )
