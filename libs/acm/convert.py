"""Mapping between the protobuf contracts (acm.v1) and the domain model."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from google.protobuf.timestamp_pb2 import Timestamp

from acm.domain.models import Layer, Memory, Role, Turn
from acm.domain.scope import ForgetLevel, Scope, Tier
from acm.ports.bus import PermanentError
from acm.v1 import common_pb2, events_pb2

TIER_TO_PB = {
    Tier.USER: common_pb2.TIER_USER,
    Tier.CUSTOMER: common_pb2.TIER_CUSTOMER,
    Tier.CLIENT: common_pb2.TIER_CLIENT,
}
TIER_FROM_PB = {v: k for k, v in TIER_TO_PB.items()}
LAYER_TO_PB = {
    Layer.SHORT: common_pb2.LAYER_SHORT,
    Layer.MID: common_pb2.LAYER_MID,
    Layer.LONG: common_pb2.LAYER_LONG,
}
LAYER_FROM_PB = {v: k for k, v in LAYER_TO_PB.items()}
ROLE_TO_PB = {
    Role.USER: common_pb2.ROLE_USER,
    Role.ASSISTANT: common_pb2.ROLE_ASSISTANT,
    Role.TOOL: common_pb2.ROLE_TOOL,
    Role.SYSTEM: common_pb2.ROLE_SYSTEM,
}
ROLE_FROM_PB = {v: k for k, v in ROLE_TO_PB.items()}


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def ts(dt: datetime | None) -> Timestamp:
    """Timestamp.FromDatetime's result (a naive datetime is local time), by plain arithmetic: a Fetch converts
    hundreds of timestamps, and FromDatetime goes through a time tuple for each."""
    if dt is None:
        return Timestamp()
    delta = (dt if dt.tzinfo is not None else dt.astimezone(UTC)) - _EPOCH
    return Timestamp(seconds=delta.days * 86400 + delta.seconds, nanos=delta.microseconds * 1000)


def from_ts(value: Timestamp) -> datetime | None:
    if value.seconds == 0 and value.nanos == 0:
        return None
    return _EPOCH + timedelta(seconds=value.seconds, microseconds=value.nanos // 1000)


def scope_to_pb(scope: Scope) -> common_pb2.Scope:
    return common_pb2.Scope(
        client_id=scope.client_id,
        customer_id=scope.customer_id,
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        session_id=scope.session_id,
    )


def scope_from_pb(pb: common_pb2.Scope, client_id: str | None = None) -> Scope:
    """Raises ScopeError (a ValueError) with a readable message when a part is missing or malformed."""
    return Scope(
        client_id=client_id if client_id is not None else pb.client_id,
        customer_id=pb.customer_id,
        user_id=pb.user_id,
        agent_id=pb.agent_id,
        session_id=pb.session_id,
    )


def tiers_from_pb(values: Sequence[int]) -> tuple[Tier, ...]:
    if not values:
        return (Tier.USER, Tier.CUSTOMER, Tier.CLIENT)
    unknown = [v for v in values if v not in TIER_FROM_PB]
    if unknown:
        raise ValueError(f"unknown tier value(s) {unknown}; use TIER_USER, TIER_CUSTOMER or TIER_CLIENT")
    return tuple(dict.fromkeys(TIER_FROM_PB[v] for v in values))  # type: ignore[index]


def memory_to_pb(memory: Memory, tokens: int, score: float) -> common_pb2.Memory:
    return common_pb2.Memory(
        memory_id=memory.memory_id,
        tier=TIER_TO_PB[memory.tier],
        layer=LAYER_TO_PB[memory.layer],
        kind=memory.kind,
        text=memory.text,
        source_turn_ids=list(memory.source_turn_ids),
        token_count=tokens,
        score=score,
        created_at=ts(memory.created_at),
        valid_from=ts(memory.valid_from),
        session_id=memory.session_id,
    )


class InvalidTurn(ValueError):
    """A turn that cannot be accepted; the message says what to change."""


def turn_from_pb(pb: common_pb2.Turn, scope: Scope, max_bytes: int, turn_id: str) -> Turn:
    if pb.role not in ROLE_FROM_PB:
        raise InvalidTurn("turn.role is required: ROLE_USER, ROLE_ASSISTANT, ROLE_TOOL or ROLE_SYSTEM")
    if not pb.content.strip():
        raise InvalidTurn("turn.content is empty: send the message, tool call or tool output text")
    size = len(pb.content.encode())
    if size > max_bytes:
        raise InvalidTurn(
            f"turn.content is {size:,} bytes, over the limit of {max_bytes:,} bytes: "
            "split it into several turns or store the payload elsewhere and send a summary"
        )
    return Turn(
        turn_id=turn_id,
        scope=scope,
        role=ROLE_FROM_PB[pb.role],
        content=pb.content,
        occurred_at=from_ts(pb.occurred_at) or datetime.now(UTC),
        tool_name=pb.tool_name,
        metadata=dict(pb.metadata),
    )


FORGET_LEVEL_FROM_PB = {
    events_pb2.FORGET_LEVEL_SESSION: ForgetLevel.SESSION,
    events_pb2.FORGET_LEVEL_USER: ForgetLevel.USER,
    events_pb2.FORGET_LEVEL_CUSTOMER: ForgetLevel.CUSTOMER,
    events_pb2.FORGET_LEVEL_CLIENT: ForgetLevel.CLIENT,
}


def forget_level(env: events_pb2.Envelope) -> ForgetLevel:
    level = FORGET_LEVEL_FROM_PB.get(env.forget_requested.level)
    if level is None:
        raise PermanentError(f"forget request {env.event_id} has no level")
    return level
