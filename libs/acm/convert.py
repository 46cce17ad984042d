"""Mapping between the protobuf contracts (acm.v1) and the domain model."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from acm.domain.compaction.record import CompactionRecord
from acm.domain.errors import InvalidRequest
from acm.domain.models import Layer, Memory, Role, Turn, utcnow
from acm.domain.retrieved import Ranked, Retrieval, RetrievalQuery, RetrievedMemory
from acm.domain.scope import ALL_TIERS, ForgetLevel, Scope, Tier
from acm.domain.tokens import DEFAULT_ENCODING
from acm.ports.architect import AgentInfo
from acm.ports.bus import PermanentError
from acm.v1 import common_pb2, events_pb2, gateway_pb2, retrieve_pb2

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
_ROLE_NAME_TO_PB: dict[str, common_pb2.Role.ValueType] = {str(k): v for k, v in ROLE_TO_PB.items()}
_ROLE_NAME_FROM_PB = {v: k for k, v in _ROLE_NAME_TO_PB.items()}
# acm.domain.instruction.Trust's values (not imported: its rules take a while to compile).
TRUST_TO_PB = {
    "normal": common_pb2.TRUST_NORMAL,
    "untrusted": common_pb2.TRUST_UNTRUSTED,
    "instruction": common_pb2.TRUST_INSTRUCTION,
}
# Unspecified: a memory stored before trust was kept, shown as it was then.
TRUST_FROM_PB = {common_pb2.TRUST_UNSPECIFIED: "normal", **{v: k for k, v in TRUST_TO_PB.items()}}


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


def fields_of(source: object, names: Sequence[str]) -> dict[str, Any]:
    """``source``'s attributes ``names``, as keyword arguments: a mapping between a message and a domain value
    whose fields share their names is one list, read in both directions."""
    return {name: getattr(source, name) for name in names}


_SCOPE_FIELDS = ("customer_id", "user_id", "agent_id", "session_id")


def scope_to_pb(scope: Scope) -> common_pb2.Scope:
    return common_pb2.Scope(client_id=scope.client_id, **fields_of(scope, _SCOPE_FIELDS))


def scope_from_pb(pb: common_pb2.Scope, client_id: str | None = None) -> Scope:
    """Raises ScopeError (a ValueError) with a readable message when a part is missing or malformed."""
    return Scope(client_id=client_id if client_id is not None else pb.client_id, **fields_of(pb, _SCOPE_FIELDS))


def tiers_from_pb(values: Sequence[int]) -> tuple[Tier, ...]:
    if not values:
        return ALL_TIERS
    unknown = [v for v in values if v not in TIER_FROM_PB]
    if unknown:
        raise InvalidRequest(f"unknown tier value(s) {unknown}; use TIER_USER, TIER_CUSTOMER or TIER_CLIENT")
    return tuple(dict.fromkeys(TIER_FROM_PB[v] for v in values))  # type: ignore[index]


def memory_to_pb(memory: Memory, tokens: int, score: float) -> common_pb2.Memory:
    return retrieved_to_pb(RetrievedMemory.of(memory, tokens), score)


def retrieved_to_pb(memory: RetrievedMemory, score: float) -> common_pb2.Memory:
    return common_pb2.Memory(
        memory_id=memory.memory_id,
        tier=TIER_TO_PB[memory.tier],
        layer=LAYER_TO_PB[memory.layer],
        kind=memory.kind,
        text=memory.text,
        source_turn_ids=memory.source_turn_ids,
        token_count=memory.tokens,
        score=score,
        created_at=ts(memory.created_at),
        valid_from=ts(memory.valid_from),
        session_id=memory.session_id,
        role=_ROLE_NAME_TO_PB.get(memory.role, common_pb2.ROLE_UNSPECIFIED),
        tool_name=memory.tool_name,
        trust=TRUST_TO_PB.get(memory.trust, common_pb2.TRUST_UNTRUSTED),  # an unknown level is not trusted
    )


def retrieved_from_pb(pb: common_pb2.Memory) -> Ranked:
    """Raises ValueError for a memory without a known tier or layer (a newer or broken sender)."""
    if pb.tier not in TIER_FROM_PB or pb.layer not in LAYER_FROM_PB:
        raise ValueError(f"memory {pb.memory_id[:40]!r} has an unknown tier or layer")
    memory = RetrievedMemory(
        memory_id=pb.memory_id,
        tier=TIER_FROM_PB[pb.tier],
        layer=LAYER_FROM_PB[pb.layer],
        kind=pb.kind,
        text=pb.text,
        source_turn_ids=tuple(pb.source_turn_ids),
        tokens=pb.token_count,
        created_at=from_ts(pb.created_at),
        valid_from=from_ts(pb.valid_from),
        session_id=pb.session_id,
        role=_ROLE_NAME_FROM_PB.get(pb.role, ""),
        tool_name=pb.tool_name,
        trust=TRUST_FROM_PB.get(pb.trust, "untrusted"),
    )
    return Ranked(memory, pb.score)


def query_to_pb(query: RetrievalQuery) -> retrieve_pb2.RetrieveRequest:
    return retrieve_pb2.RetrieveRequest(
        scope=scope_to_pb(query.scope),
        query=query.text,
        budget_tokens=query.budget_tokens,
        encoding=query.encoding,
        tiers=[TIER_TO_PB[t] for t in query.tiers],
        as_of=ts(query.as_of) if query.as_of is not None else None,
        from_context=query.from_context,
    )


def query_from_pb(pb: retrieve_pb2.RetrieveRequest, client_id: str | None = None) -> RetrievalQuery:
    """Raises ScopeError or ValueError (unknown tiers) with a readable message."""
    return RetrievalQuery(
        scope=scope_from_pb(pb.scope, client_id),
        text=pb.query,
        budget_tokens=pb.budget_tokens,
        encoding=pb.encoding or DEFAULT_ENCODING,
        tiers=tiers_from_pb(list(pb.tiers)),
        as_of=from_ts(pb.as_of),
        from_context=pb.from_context,
    )


def retrieval_to_pb(retrieval: Retrieval) -> retrieve_pb2.RetrieveResponse:
    return retrieve_pb2.RetrieveResponse(
        memories=[retrieved_to_pb(r.memory, r.score) for r in retrieval.items],
        total_tokens=retrieval.total_tokens,
        dropped=retrieval.dropped,
        from_prefetch=retrieval.from_prefetch,
    )


def retrieval_from_pb(pb: retrieve_pb2.RetrieveResponse) -> Retrieval:
    return Retrieval(
        [retrieved_from_pb(m) for m in pb.memories], pb.total_tokens, pb.dropped, from_prefetch=pb.from_prefetch
    )


def info_to_pb(info: AgentInfo) -> gateway_pb2.AgentSchemaInfo:
    return gateway_pb2.AgentSchemaInfo(
        agent_id=info.agent_id,
        version=info.version,
        archetype=info.archetype,
        schema_json=info.schema_json,
        rationale=info.rationale,
    )


def info_from_pb(pb: gateway_pb2.AgentSchemaInfo) -> AgentInfo:
    return AgentInfo(pb.agent_id, pb.version, pb.archetype, pb.schema_json, pb.rationale)


# CompactionRecord's fields that the message carries as they are (the atoms are tuples there, lists here).
_COMPACTION_FIELDS = (
    "compaction_id",
    "outcome",
    "tokens_before",
    "tokens_after",
    "ratio",
    "verified",
    "attempts",
    "turns_replaced",
    "turns_verbatim",
    "message",
    "latency_ms",
)


def compaction_to_pb(record: CompactionRecord) -> gateway_pb2.Compaction:
    return gateway_pb2.Compaction(
        **fields_of(record, _COMPACTION_FIELDS),
        missing_atoms=list(record.missing_atoms),
        unsupported_atoms=list(record.unsupported_atoms),
        created_at=ts(record.created_at),
    )


def compaction_from_pb(pb: gateway_pb2.Compaction) -> CompactionRecord:
    """The record as the compact service sent it (its summariser is not part of the message)."""
    return CompactionRecord(
        **fields_of(pb, _COMPACTION_FIELDS),
        missing_atoms=tuple(pb.missing_atoms),
        unsupported_atoms=tuple(pb.unsupported_atoms),
        created_at=from_ts(pb.created_at) or utcnow(),
    )


class InvalidTurn(InvalidRequest):
    """A turn that cannot be accepted; the message says what to change."""


class TurnLimits(BaseSettings):
    """Caps on every field of a turn, checked by the gateway (INVALID_ARGUMENT) and again by ingest for agents
    that publish to Kafka directly (dead letter with the reason). The content's own cap is each service's
    ACM_MAX_TURN_BYTES. Environment: ACM_TURN_MAX_ID_CHARS and so on."""

    model_config = SettingsConfigDict(env_prefix="ACM_TURN_", extra="ignore", frozen=True)

    max_id_chars: int = Field(128, gt=0)
    max_tool_name_chars: int = Field(128, gt=0)
    max_metadata_keys: int = Field(64, ge=0)
    max_metadata_bytes: int = Field(16384, ge=0)  # keys and values, UTF-8
    # The whole Turn message as sent; 0: the content cap + the metadata cap + 2 KiB for the other fields.
    max_total_bytes: int = Field(0, ge=0)
    max_future_s: float = Field(86400.0, ge=0)  # occurred_at may run ahead of this server's clock by this much


@cache
def turn_limits() -> TurnLimits:
    """The limits from the environment, read once per process."""
    return TurnLimits()


_TURN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@/#+=-]*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _check_fields(pb: common_pb2.Turn, turn_id: str, max_bytes: int, limits: TurnLimits) -> None:
    if len(turn_id) > limits.max_id_chars or not _TURN_ID.match(turn_id):
        raise InvalidTurn(
            f"turn.turn_id {turn_id[:40]!r} is malformed: use 1-{limits.max_id_chars} characters from letters, "
            "digits and . _ : @ / # + = -, starting with a letter or digit"
        )
    if len(pb.tool_name) > limits.max_tool_name_chars or _CONTROL.search(pb.tool_name):
        raise InvalidTurn(
            f"turn.tool_name must be at most {limits.max_tool_name_chars} characters without control "
            f"characters (got {len(pb.tool_name):,})"
        )
    if len(pb.metadata) > limits.max_metadata_keys:
        raise InvalidTurn(
            f"turn.metadata has {len(pb.metadata):,} keys, over the limit of {limits.max_metadata_keys}: "
            "keep only what ACM should remember"
        )
    meta_bytes = sum(len(k.encode()) + len(v.encode()) for k, v in pb.metadata.items())
    if meta_bytes > limits.max_metadata_bytes:
        raise InvalidTurn(
            f"turn.metadata is {meta_bytes:,} bytes, over the limit of {limits.max_metadata_bytes:,} bytes: "
            "send large payloads as content (or store them elsewhere and send a reference)"
        )
    total_cap = limits.max_total_bytes or max_bytes + limits.max_metadata_bytes + 2048
    if pb.ByteSize() > total_cap:
        raise InvalidTurn(f"the turn is {pb.ByteSize():,} bytes in all, over the limit of {total_cap:,} bytes")


def _occurred_at(value: Timestamp, limits: TurnLimits) -> datetime:
    if value.seconds == 0 and value.nanos == 0:
        return datetime.now(UTC)
    if value.seconds < 0 or not 0 <= value.nanos < 1_000_000_000:
        raise InvalidTurn("turn.occurred_at is before 1970 or malformed: send the time the turn happened, in UTC")
    if value.seconds > time.time() + limits.max_future_s:
        raise InvalidTurn(
            f"turn.occurred_at is more than {limits.max_future_s:,.0f} s in the future: "
            "send the time the turn happened (check the sender's clock and time zone)"
        )
    return _EPOCH + timedelta(seconds=value.seconds, microseconds=value.nanos // 1000)


def turn_from_pb(
    pb: common_pb2.Turn, scope: Scope, max_bytes: int, turn_id: str, limits: TurnLimits | None = None
) -> Turn:
    """The turn, checked: role, content (at most ``max_bytes``), and every other field's cap (``limits``,
    by default from the environment)."""
    limits = limits or turn_limits()
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
    _check_fields(pb, turn_id, max_bytes, limits)
    return Turn(
        turn_id=turn_id,
        scope=scope,
        role=ROLE_FROM_PB[pb.role],
        content=pb.content,
        occurred_at=_occurred_at(pb.occurred_at, limits),
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
