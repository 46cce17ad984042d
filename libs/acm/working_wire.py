"""GetWorkingMemory's and ListCompactions' messages (acm/v1/compact.proto) ↔ domain values, for both ends of
the internal call (compact's servicer, the gateway's client; the gateway's public ListCompactions too). Nothing
is lost: the gateway assembles a session's context from what comes back exactly as compact would from its store."""

from __future__ import annotations

from acm.convert import compaction_from_pb, compaction_to_pb, fields_of, from_ts, ts
from acm.domain.compaction.engine import SessionTurn, WorkingMemory
from acm.domain.compaction.pinned import PinnedEntity, PinnedState
from acm.domain.scope import Scope
from acm.ports.compactor import CompactionsPage, StoredWorkingMemory
from acm.v1 import compact_pb2, gateway_pb2


def _pin_to_pb(e: PinnedEntity) -> compact_pb2.WorkingPin:
    return compact_pb2.WorkingPin(
        key=e.key,
        type=e.type,
        attributes=[
            compact_pb2.WorkingPinValue(name=k, value=v, stated_at=ts(e.stated_at.get(k)))
            for k, v in e.attributes.items()
        ],
        source_turn_ids=e.source_turn_ids,
        updated_at=ts(e.updated_at),
        acts=e.acts,
    )


def _pin_from_pb(pb: compact_pb2.WorkingPin) -> PinnedEntity:
    stated = {a.name: from_ts(a.stated_at) for a in pb.attributes}
    return PinnedEntity(
        key=pb.key,
        type=pb.type,
        attributes={a.name: a.value for a in pb.attributes},
        source_turn_ids=tuple(pb.source_turn_ids),
        updated_at=from_ts(pb.updated_at),
        acts=pb.acts,
        stated_at={k: at for k, at in stated.items() if at is not None},
    )


_TURN_FIELDS = ("turn_id", "role", "text", "tokens", "tool_name", "speaker")


def _turn_to_pb(t: SessionTurn) -> compact_pb2.WorkingTurn:
    return compact_pb2.WorkingTurn(**fields_of(t, _TURN_FIELDS), at=ts(t.at))


def _turn_from_pb(pb: compact_pb2.WorkingTurn) -> SessionTurn:
    at = from_ts(pb.at)
    if at is None:
        raise ValueError(f"working turn {pb.turn_id[:40]!r} has no time")
    return SessionTurn(**fields_of(pb, _TURN_FIELDS), at=at)


def working_memory_to_pb(m: WorkingMemory) -> compact_pb2.WorkingMemory:
    return compact_pb2.WorkingMemory(
        version=m.version,
        pinned=[_pin_to_pb(e) for e in m.pinned.entities.values()],
        episodes=m.episodes,
        recent=[_turn_to_pb(t) for t in m.recent],
        through_at=ts(m.through_at),
        through_ids=m.through_ids,
        turns_compacted=m.turns_compacted,
    )


def working_memory_from_pb(pb: compact_pb2.WorkingMemory) -> WorkingMemory:
    """Raises ValueError for a turn without a time (compact never sends one)."""
    return WorkingMemory(
        version=pb.version,
        pinned=PinnedState({e.key: e for e in map(_pin_from_pb, pb.pinned)}),
        episodes=tuple(pb.episodes),
        recent=tuple(_turn_from_pb(t) for t in pb.recent),
        through_at=from_ts(pb.through_at),
        through_ids=tuple(pb.through_ids),
        turns_compacted=pb.turns_compacted,
    )


def stored_working_to_pb(stored: StoredWorkingMemory) -> compact_pb2.GetWorkingMemoryResponse:
    response = compact_pb2.GetWorkingMemoryResponse()
    if stored.memory is not None:
        response.working_memory.CopyFrom(working_memory_to_pb(stored.memory))
    if stored.latest is not None:
        response.latest.CopyFrom(compaction_to_pb(stored.latest))
    return response


def stored_working_from_pb(pb: compact_pb2.GetWorkingMemoryResponse) -> StoredWorkingMemory:
    return StoredWorkingMemory(
        working_memory_from_pb(pb.working_memory) if pb.HasField("working_memory") else None,
        compaction_from_pb(pb.latest) if pb.HasField("latest") else None,
    )


def compactions_to_pb(page: CompactionsPage) -> gateway_pb2.ListCompactionsResponse:
    return gateway_pb2.ListCompactionsResponse(
        compactions=[
            gateway_pb2.ListedCompaction(
                customer_id=scope.customer_id,
                user_id=scope.user_id,
                session_id=scope.session_id,
                compaction=compaction_to_pb(record),
            )
            for scope, record in page.compactions
        ],
        next_page_token=page.next_page_token,
    )


def compactions_from_pb(client_id: str, pb: gateway_pb2.ListCompactionsResponse) -> CompactionsPage:
    return CompactionsPage(
        [
            (Scope(client_id, c.customer_id, c.user_id, session_id=c.session_id), compaction_from_pb(c.compaction))
            for c in pb.compactions
        ],
        pb.next_page_token,
    )
