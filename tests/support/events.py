"""Helpers for tests that talk to the bus directly, as an agent publishing to Kafka would."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from acm.domain.scope import Scope
from acm.envelopes import envelope, sign
from acm.ports.bus import EventBus, Record
from acm.ports.stores import ApiKey
from acm.v1 import common_pb2, events_pb2


def turn_envelope(scope: Scope, content: str, turn_id: str, job_id: str) -> events_pb2.Envelope:
    env = envelope(scope)
    env.turn_received.job_id = job_id
    env.turn_received.turn.CopyFrom(common_pb2.Turn(turn_id=turn_id, role=common_pb2.ROLE_USER, content=content))
    return env


def signed(env: events_pb2.Envelope, key: ApiKey) -> bytes:
    sign(env, key.key_id, key.key_hash)
    return env.SerializeToString()


async def collect_dead_letters(
    bus: EventBus, topic: str, group: str, done: Callable[[list[events_pb2.DeadLetter]], bool], timeout_s: float
) -> list[events_pb2.DeadLetter]:
    """Read a dead-letter topic with a fresh group until ``done`` says enough arrived."""
    found: list[events_pb2.DeadLetter] = []
    enough = asyncio.Event()

    async def handler(record: Record) -> None:
        letter = events_pb2.DeadLetter()
        letter.ParseFromString(record.value)
        found.append(letter)
        if done(found):
            enough.set()

    bus.subscribe(topic, group, handler)
    await bus.start()
    try:
        async with asyncio.timeout(timeout_s):
            await enough.wait()
    finally:
        await bus.stop()
    return found
