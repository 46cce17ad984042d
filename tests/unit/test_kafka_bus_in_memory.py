"""The Kafka adapter's delivery semantics on FastStream's in-memory TestKafkaBroker: fast, no broker.

TestKafkaBroker hands a published record straight to the subscribers of its topic, inside publish(). What
the adapter acknowledges is seen on FastStream's stand-in consumer (commit = ack, seek = nack: redeliver).
The same semantics on a real broker: tests/contract/test_bus_contract.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiokafka import TopicPartition
from faststream.kafka import TestKafkaBroker
from faststream.kafka.message import FakeConsumer

from acm import topics
from acm.adapters.kafka_bus import KafkaBus
from acm.envelopes import decode
from acm.ports.bus import BusUnavailable, Record
from acm.v1 import events_pb2

TOPIC, GROUP = "acm.test.v1", "tester"


class Acks:
    """What the adapter told the consumer, in order, with what the handler did in between."""

    def __init__(self) -> None:
        self.events: list[str] = []

    # Set on the class as bound methods of this object: called without FastStream's consumer.
    async def commit(self) -> None:
        self.events.append("commit")

    def seek(self, partition: TopicPartition, offset: int) -> None:
        self.events.append(f"seek {partition.topic}@{offset}")


@pytest.fixture
def acks(monkeypatch: pytest.MonkeyPatch) -> Acks:
    acks = Acks()
    monkeypatch.setattr(FakeConsumer, "commit", acks.commit)
    monkeypatch.setattr(FakeConsumer, "seek", acks.seek)
    return acks


@pytest.fixture
async def bus() -> AsyncIterator[KafkaBus]:
    yield KafkaBus("in-memory:9092", create_topics=False, deliver_attempts=3, deliver_backoff_s=0.001)


class DeadLetters:
    def __init__(self) -> None:
        self.letters: list[events_pb2.DeadLetter] = []

    async def __call__(self, record: Record) -> None:
        self.letters.append(events_pb2.DeadLetter.FromString(record.value))


def _read_dead_letters(bus: KafkaBus) -> DeadLetters:
    reader = DeadLetters()
    bus.subscribe(topics.dead_letter(GROUP), "dlq-reader", reader)
    return reader


async def test_a_handled_record_is_acknowledged_after_its_handler_returned(bus: KafkaBus, acks: Acks) -> None:
    async def handle(record: Record) -> None:
        acks.events.append(f"handled {record.value.decode()} key {record.key}")

    bus.subscribe(TOPIC, GROUP, handle)
    async with TestKafkaBroker(bus.broker):
        await bus.publish(TOPIC, "session-1", b"turn")

    assert acks.events == ["handled turn key session-1", "commit"]


async def test_a_failing_record_is_retried_then_dead_lettered_with_the_reason(bus: KafkaBus, acks: Acks) -> None:
    calls = 0

    async def always_fail(record: Record) -> None:
        nonlocal calls
        calls += 1
        raise ConnectionError("store unreachable")

    bus.subscribe(TOPIC, GROUP, always_fail)
    dead = _read_dead_letters(bus)
    async with TestKafkaBroker(bus.broker):
        value = events_pb2.Envelope(event_id="ev-1").SerializeToString()
        await bus.publish(TOPIC, "session-1", value)

    assert calls == 3
    [letter] = dead.letters
    assert (letter.group, letter.topic, letter.key, letter.value) == (GROUP, TOPIC, "session-1", value)
    assert letter.reason == "ConnectionError: store unreachable (gave up after 3 attempts)"
    assert (letter.attempts, letter.event_id) == (3, "ev-1")
    # Dead-lettered counts as done: the dead-letter reader's commit, then the failed record's.
    assert acks.events == ["commit", "commit"]


async def test_a_malformed_record_goes_straight_to_the_dead_letter_topic(bus: KafkaBus, acks: Acks) -> None:
    calls = 0

    async def turns(record: Record) -> None:  # as every service handler starts
        nonlocal calls
        calls += 1
        decode(record.value, "turn_received")

    bus.subscribe(TOPIC, GROUP, turns)
    dead = _read_dead_letters(bus)
    async with TestKafkaBroker(bus.broker):
        await bus.publish(TOPIC, "session-1", b"\xff not protobuf")

    assert calls == 1  # a permanent error is not retried
    [letter] = dead.letters
    assert letter.value == b"\xff not protobuf" and letter.attempts == 1
    assert letter.reason.startswith("PermanentError: not an acm.v1.Envelope") and letter.reason.endswith("(permanent)")
    assert acks.events == ["commit", "commit"]


async def test_a_record_whose_dead_letter_write_failed_is_not_acknowledged(
    bus: KafkaBus, acks: Acks, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def reject(record: Record) -> None:
        decode(record.value, "turn_received")

    bus.subscribe(TOPIC, GROUP, reject)
    real_publish = bus.publish

    async def dead_letter_topic_down(topic: str, key: str, value: bytes) -> None:
        if topic == topics.dead_letter(GROUP):
            raise BusUnavailable("dead-letter topic unreachable")
        await real_publish(topic, key, value)

    monkeypatch.setattr(bus, "publish", dead_letter_topic_down)
    async with TestKafkaBroker(bus.broker):
        with pytest.raises(BusUnavailable):  # in memory, the consumer's failure reaches the publisher
            await real_publish(TOPIC, "session-1", b"malformed")

    assert acks.events == [f"seek {TOPIC}@0"]  # rewound for redelivery, never committed
