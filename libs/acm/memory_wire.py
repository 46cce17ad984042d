"""The Memory API's messages (acm/v1/memories.proto) ↔ domain values, for both ends of the internal call
(retrieve's servicer, the gateway's client), the gateway's servicer and ingest's edit handler; and a memory in full
on acm.memories.v1 (ingest's events, retrieve's projection)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from acm.convert import (
    LAYER_FROM_PB,
    LAYER_TO_PB,
    ROLE_FROM_PB,
    TIER_TO_PB,
    TRUST_FROM_PB,
    TRUST_TO_PB,
    fields_of,
    from_ts,
    memory_to_pb,
    retrieved_from_pb,
    scope_to_pb,
    tiers_from_pb,
    ts,
)
from acm.domain.errors import InvalidRequest
from acm.domain.models import ALL_LAYERS, Layer, Memory, MemoryStatus, metadata_pairs
from acm.domain.scope import ALL_TIERS, Scope
from acm.ports.memories import MemoryQuery, UsersPage
from acm.ports.stores import MemoryFilter, UserSummary
from acm.v1 import common_pb2, events_pb2, memories_pb2

STATUS_TO_PB = {
    MemoryStatus.ACTIVE: memories_pb2.MEMORY_STATUS_ACTIVE,
    MemoryStatus.STALE: memories_pb2.MEMORY_STATUS_STALE,
}
STATUS_FROM_PB = {v: k for k, v in STATUS_TO_PB.items()}


# What a StoredMemory's memory (a RetrievedMemory once read) gives a Memory as it is.
_SHOWN_FIELDS = (
    "memory_id",
    "text",
    "layer",
    "kind",
    "source_turn_ids",
    "session_id",
    "valid_from",
    "role",
    "tool_name",
    "trust",
)


# A Memory's fields a StoredMemory carries as they are, beside its memory.
_STORED_FIELDS = ("agent_id", "superseded_by", "slot")


def stored_to_pb(memory: Memory) -> memories_pb2.StoredMemory:
    return memories_pb2.StoredMemory(
        memory=memory_to_pb(memory, memory.token_count, 0.0),
        **fields_of(memory, _STORED_FIELDS),
        status=STATUS_TO_PB[memory.status],
        updated_at=ts(memory.updated_at),
        # unset, not 1970, while the memory is still valid (JSON clients read an epoch as a date)
        valid_to=ts(memory.valid_to) if memory.valid_to is not None else None,
        metadata=dict(memory.metadata),
    )


def stored_from_pb(pb: memories_pb2.StoredMemory, scope: Scope) -> Memory:
    """A memory the scope sees (or is given, on import): its owner is the scope's at the memory's tier (the
    visibility rule leaves no other). Raises InvalidRequest for an unknown tier, layer or status."""
    if pb.status not in STATUS_FROM_PB and pb.status != memories_pb2.MEMORY_STATUS_UNSPECIFIED:
        raise InvalidRequest(f"memory {pb.memory.memory_id[:40]!r} has an unknown status {pb.status}")
    try:
        shown = retrieved_from_pb(pb.memory).memory
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from None
    if shown.created_at is None:
        raise InvalidRequest(f"memory {shown.memory_id[:40]!r} has no created_at")
    return Memory(
        **fields_of(shown, _SHOWN_FIELDS),
        owner=scope.owner(shown.tier),
        **fields_of(pb, _STORED_FIELDS),
        created_at=shown.created_at,
        updated_at=from_ts(pb.updated_at),
        valid_to=from_ts(pb.valid_to),
        token_count=shown.tokens,
        status=STATUS_FROM_PB.get(pb.status, MemoryStatus.ACTIVE),
        metadata=metadata_pairs(pb.metadata),
    )


# What a WrittenMemory carries beside its stored form (ingest's counts and the schema it was written under).
_WRITTEN_FIELDS = ("mention_count", "access_count", "schema_version")


def written_to_pb(
    memory: Memory, embedding: Sequence[float] = (), entity_names: Sequence[str] = ()
) -> events_pb2.WrittenMemory:
    """A memory as ingest stored it, for acm.memories.v1: every field of ``memory`` (its owner is the envelope's
    scope at its tier), and the vector it is searched by (none: not indexed)."""
    stored = stored_to_pb(memory)
    return events_pb2.WrittenMemory(
        # The message's own copy of what its stored form says (readers of the fields before ``stored`` existed).
        **fields_of(stored.memory, ("memory_id", "tier", "layer", "kind", "text", "source_turn_ids", "created_at")),
        embedding=list(embedding),
        entity_names=list(entity_names),
        stored=stored,
        **fields_of(memory, _WRITTEN_FIELDS),
    )


def written_from_pb(pb: events_pb2.WrittenMemory, scope: Scope) -> Memory:
    """The memory of a WrittenMemory, owned by ``scope`` at its tier. Raises InvalidRequest for an unknown tier,
    layer or status, or a memory without its stored form (published before acm.memories.v1 carried it)."""
    if not pb.HasField("stored"):
        raise InvalidRequest(f"memory {pb.memory_id[:40]!r} comes without its stored form (an older publisher)")
    memory = stored_from_pb(pb.stored, scope)
    return replace(memory, **fields_of(pb, _WRITTEN_FIELDS))


def layers_from_pb(values: Sequence[int]) -> tuple[Layer, ...]:
    unknown = [v for v in values if v not in LAYER_FROM_PB]
    if unknown:
        raise InvalidRequest(f"unknown layer value(s) {unknown}; use LAYER_SHORT, LAYER_MID or LAYER_LONG")
    return tuple(dict.fromkeys(LAYER_FROM_PB[v] for v in values)) or ALL_LAYERS  # type: ignore[index]


def _trust(values: Sequence[int]) -> tuple[str, ...]:
    unknown = [v for v in values if v not in TRUST_TO_PB.values()]
    if unknown:
        raise InvalidRequest(
            f"unknown trust value(s) {unknown}; use TRUST_NORMAL, TRUST_UNTRUSTED or TRUST_INSTRUCTION"
        )
    return tuple(dict.fromkeys(TRUST_FROM_PB[v] for v in values))  # type: ignore[index]


def _role(value: int) -> str:
    if value == common_pb2.ROLE_UNSPECIFIED:
        return ""
    if value not in ROLE_FROM_PB:
        raise InvalidRequest(f"unknown role value {value}; use ROLE_USER, ROLE_ASSISTANT, ROLE_TOOL or ROLE_SYSTEM")
    return str(ROLE_FROM_PB[value])  # type: ignore[index]


def query_from_pb(pb: memories_pb2.ListMemoriesRequest) -> MemoryQuery:
    """Raises InvalidRequest naming the field with an unknown value."""
    where = MemoryFilter(
        tiers=tiers_from_pb(pb.tiers),
        layers=layers_from_pb(pb.layers),
        kinds=tuple(dict.fromkeys(k for k in pb.kinds if k)),
        created_after=from_ts(pb.created_after),
        created_before=from_ts(pb.created_before),
        trust=_trust(pb.trust),
        role=_role(pb.role),
        tool_name=pb.tool_name,
        include_stale=pb.include_stale,
        metadata=_metadata_filter(pb.metadata),
    )
    return MemoryQuery(where, pb.entity.strip(), pb.page_size, pb.page_token)


def _metadata_filter(values: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """ListMemoriesRequest.metadata ("key=value", split at the first "=") as sorted pairs."""
    pairs: dict[str, str] = {}
    for value in values:
        key, sep, wanted = value.partition("=")
        if not sep or not key:
            raise InvalidRequest(f"metadata filter {value[:64]!r} is not key=value")
        if pairs.get(key, wanted) != wanted:
            raise InvalidRequest(f"metadata filter names {key[:64]!r} twice with different values: nothing matches")
        pairs[key] = wanted
    return tuple(sorted(pairs.items()))


def query_to_pb(scope: Scope, query: MemoryQuery) -> memories_pb2.ListMemoriesRequest:
    w = query.where
    roles = {str(v): k for k, v in ROLE_FROM_PB.items()}
    return memories_pb2.ListMemoriesRequest(
        scope=scope_to_pb(scope),
        tiers=[TIER_TO_PB[t] for t in w.tiers] if w.tiers != ALL_TIERS else [],
        layers=[LAYER_TO_PB[x] for x in w.layers] if w.layers != ALL_LAYERS else [],
        kinds=w.kinds,
        created_after=ts(w.created_after),  # unset: a zero Timestamp, read back as None
        created_before=ts(w.created_before),
        trust=[TRUST_TO_PB[t] for t in w.trust],
        entity=query.entity,
        role=roles.get(w.role, common_pb2.ROLE_UNSPECIFIED),
        tool_name=w.tool_name,
        include_stale=w.include_stale,
        metadata=[f"{k}={v}" for k, v in w.metadata],
        page_size=query.page_size,
        page_token=query.page_token,
    )


def users_to_pb(page: UsersPage) -> memories_pb2.ListUsersResponse:
    return memories_pb2.ListUsersResponse(
        users=[
            memories_pb2.UserSummary(customer_id=u.customer_id, user_id=u.user_id, memories=u.memories)
            for u in page.users
        ],
        next_page_token=page.next_page_token,
    )


def users_from_pb(pb: memories_pb2.ListUsersResponse) -> UsersPage:
    return UsersPage([UserSummary(u.customer_id, u.user_id, u.memories) for u in pb.users], pb.next_page_token)
