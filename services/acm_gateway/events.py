"""The gateway's outbound events: domain values as signed acm.v1 envelopes on the bus (its edge to Kafka or the
embedded log, as the servicer is its edge to gRPC)."""

from __future__ import annotations

from acm import topics
from acm.convert import ROLE_TO_PB, ts
from acm.domain.models import Turn
from acm.domain.scope import ForgetLevel, Scope
from acm.envelopes import envelope, sign
from acm.ports.bus import EventBus
from acm.ports.stores import ApiKey
from acm.sealing import seal_before_signing
from acm.v1 import events_pb2
from acm_gateway.errors import Unavailable

FORGET_LEVELS_PB = {
    ForgetLevel.SESSION: events_pb2.FORGET_LEVEL_SESSION,
    ForgetLevel.USER: events_pb2.FORGET_LEVEL_USER,
    ForgetLevel.CUSTOMER: events_pb2.FORGET_LEVEL_CUSTOMER,
    ForgetLevel.CLIENT: events_pb2.FORGET_LEVEL_CLIENT,
}


class BusEvents:
    """Implements acm_gateway.usecases.Events: each event signed with the caller's key (ingest and the other
    consumers verify it), published keyed by the session so that one session's events stay ordered."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    async def turn_received(self, key: ApiKey, turn: Turn, job_id: str, event_id: str, traceparent: str) -> None:
        env = envelope(turn.scope, event_id=event_id, traceparent=traceparent)
        body = env.turn_received
        body.job_id = job_id
        pb = body.turn
        pb.turn_id = turn.turn_id
        pb.role = ROLE_TO_PB[turn.role]
        pb.content = turn.content
        pb.occurred_at.CopyFrom(ts(turn.occurred_at))
        pb.tool_name = turn.tool_name
        pb.metadata.update(turn.metadata)
        await self._publish(topics.TURNS, turn.scope, env, key)

    async def forget_requested(
        self, key: ApiKey, scope: Scope, level: ForgetLevel, job_id: str, traceparent: str
    ) -> None:
        env = envelope(scope, traceparent=traceparent)
        env.forget_requested.job_id = job_id
        env.forget_requested.level = FORGET_LEVELS_PB[level]
        await self._publish(topics.FORGET, scope, env, key)

    async def _publish(self, topic: str, scope: Scope, env: events_pb2.Envelope, key: ApiKey) -> None:
        try:
            await seal_before_signing(self._bus, env)  # the signature covers the sealed bytes
        except Exception as exc:
            raise Unavailable(f"no data key to seal the event with ({type(exc).__name__}); retry later") from exc
        sign(env, key.key_id, key.key_hash)
        try:
            await self._bus.publish(topic, scope.session_key, env.SerializeToString())
        except Exception as exc:
            # Nothing was acknowledged, so nothing is reported as accepted: the caller may retry.
            raise Unavailable(f"the event bus did not accept the event ({type(exc).__name__}); retry later") from exc
