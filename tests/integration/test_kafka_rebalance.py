"""Graceful shutdown and rebalances on the real broker lose and duplicate nothing.

Two KafkaBus replicas in one consumer group on a 4-partition topic (a namespace of their own), through the
EventBus port. The handler records each record's id as it completes, so a record handled twice (its offset not
committed before its partition moved) or never shows in the counts. At-least-once allows a redelivery after a
crash; a graceful stop or a rebalance must hand the partitions over with every handled record committed, so here
every id is handled exactly once.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from acm.adapters.kafka_bus import KafkaBus
from acm.ports.bus import Record

pytestmark = pytest.mark.infra

TOPIC = "acm.rebalance-test.v1"
GROUP = "rebalance-test"
WAIT_S = 60.0


class Effects:
    """What the replicas did: ids handled (a Counter, so a duplicate shows) and by which replica."""

    def __init__(self) -> None:
        self.handled: Counter[str] = Counter()
        self.by_replica: Counter[str] = Counter()
        self._changed = asyncio.Condition()

    def handler(self, replica: str, work_s: float = 0.01) -> Callable[[Record], Awaitable[None]]:
        async def handle(record: Record) -> None:
            await asyncio.sleep(work_s)  # some work, so a stop or a rebalance finds records in flight
            async with self._changed:
                self.handled[record.value.decode()] += 1
                self.by_replica[replica] += 1
                self._changed.notify_all()

        return handle

    async def wait_until(self, done: Callable[[], bool], within_s: float = WAIT_S) -> None:
        async with asyncio.timeout(within_s), self._changed:
            await self._changed.wait_for(done)

    async def wait_for(self, count: int) -> None:
        """Until ``count`` distinct records were handled."""
        await self.wait_until(lambda: len(self.handled) >= count)


@pytest.fixture
async def replicas(kafka_bootstrap: str) -> AsyncIterator[Callable[[], KafkaBus]]:
    namespace = f"rebalance-{uuid.uuid4().hex[:8]}."
    made: list[KafkaBus] = []

    def make() -> KafkaBus:
        bus = KafkaBus(
            kafka_bootstrap,
            client_id="rebalance-test",
            namespace=namespace,
            num_partitions=4,
            session_timeout_ms=6000,
            stop_timeout_s=10.0,
            lag_every_s=0,
        )
        made.append(bus)
        return bus

    yield make
    for bus in made:
        await bus.stop()


# One record at a time, and micro-batches (each batch committed as a whole) of up to 4 keys at a time.
CONCURRENCY = pytest.mark.parametrize("concurrency", [1, 4], ids=["one-by-one", "micro-batch"])


async def _publish(bus: KafkaBus, ids: list[str], pause_s: float = 0.0) -> None:
    for n, event_id in enumerate(ids):
        await bus.publish(TOPIC, f"session-{n % 16}", event_id.encode())  # keys spread over the partitions
        if pause_s:
            await asyncio.sleep(pause_s)


def _assert_exactly_once(effects: Effects, ids: list[str]) -> None:
    missing = [i for i in ids if i not in effects.handled]
    twice = {i: n for i, n in effects.handled.items() if n > 1}
    assert not missing, f"{len(missing)} records never handled, e.g. {missing[:5]}"
    assert not twice, f"{len(twice)} records handled more than once: {dict(list(twice.items())[:5])}"
    assert set(effects.handled) == set(ids)


@CONCURRENCY
async def test_a_replica_stopped_mid_stream_loses_and_duplicates_nothing(
    replicas: Callable[[], KafkaBus], concurrency: int
) -> None:
    effects = Effects()
    first, second, publisher = replicas(), replicas(), replicas()
    first.subscribe(TOPIC, GROUP, effects.handler("first"), concurrency=concurrency)
    second.subscribe(TOPIC, GROUP, effects.handler("second"), concurrency=concurrency)
    await first.start()
    await second.start()
    ids = [f"stop-{n}" for n in range(400)]
    await _publish(publisher, ids)

    await effects.wait_for(100)
    await first.stop()  # graceful: its record in flight finishes and is committed, its partitions go to second
    stopped_at = effects.by_replica["first"]
    await effects.wait_for(len(ids))
    await asyncio.sleep(3)  # a late redelivery would show here

    assert effects.by_replica["first"] == stopped_at
    assert effects.by_replica["second"] > 0
    _assert_exactly_once(effects, ids)


@CONCURRENCY
async def test_a_rebalance_from_one_to_two_replicas_and_back_loses_and_duplicates_nothing(
    replicas: Callable[[], KafkaBus], concurrency: int
) -> None:
    effects = Effects()
    first, publisher = replicas(), replicas()
    first.subscribe(TOPIC, GROUP, effects.handler("first"), concurrency=concurrency)
    await first.start()
    ids = [f"rebalance-{n}" for n in range(600)]
    publishing = asyncio.create_task(_publish(publisher, ids, pause_s=0.005))  # a steady stream throughout

    await effects.wait_for(100)
    second = replicas()
    second.subscribe(TOPIC, GROUP, effects.handler("second"), concurrency=concurrency)
    await second.start()  # 1 -> 2: the group rebalances while first has records in flight
    await effects.wait_until(lambda: effects.by_replica["second"] >= 50)
    await second.stop()  # 2 -> 1: second's partitions go back to first
    await publishing
    await effects.wait_for(len(ids))
    await asyncio.sleep(3)

    assert effects.by_replica["second"] >= 50
    _assert_exactly_once(effects, ids)
