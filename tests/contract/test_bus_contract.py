"""One contract for every EventBus adapter: Kafka (real broker) and the embedded SQLite log.

Every test uses fresh topic and group names, so tests never see each other's records. Delivery is
at-least-once; the assertions only rely on what that guarantees, plus the absence of duplicates where
no failure or rebalance happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from acm import topics
from acm.adapters.embedded_bus import EmbeddedBus
from acm.adapters.kafka_bus import KafkaBus
from acm.ports.bus import BusUnavailable, EventBus, PermanentError, Record
from acm.v1 import events_pb2

WAIT_S = 30.0  # generous: a Kafka group join takes 1-3 s, but CI machines stall

BusFactory = Callable[..., EventBus]


@pytest.fixture(params=[pytest.param("kafka", marks=pytest.mark.infra), "embedded"])
async def make_bus(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[BusFactory]:
    """A factory of bus instances on one backend (same broker / same file); all stopped at the end."""
    created: list[EventBus] = []
    if request.param == "kafka":
        bootstrap: str = request.getfixturevalue("kafka_bootstrap")

        def make(**overrides: Any) -> EventBus:
            options: dict[str, Any] = {
                "client_id": "acm-contract-test",
                "deliver_backoff_s": 0.05,
                "stop_timeout_s": 5.0,
                "session_timeout_ms": 6000,
            }
            bus = KafkaBus(bootstrap, **(options | overrides))
            created.append(bus)
            return bus
    else:

        def make(**overrides: Any) -> EventBus:
            options: dict[str, Any] = {
                "poll_interval_s": 0.2,
                "deliver_backoff_s": 0.05,
                "stop_timeout_s": 5.0,
            }
            bus = EmbeddedBus(tmp_path / "bus.sqlite", **(options | overrides))
            created.append(bus)
            return bus

    yield make
    for bus in created:
        await bus.stop()


@pytest.fixture
def names() -> Callable[[str], str]:
    """Unique names per test: Kafka topics and groups outlive the test."""
    suffix = uuid.uuid4().hex[:10]
    return lambda base: f"test.{base}.{suffix}"


class Collector:
    """A handler that records what it was given and lets the test wait for it."""

    def __init__(self, behaviour: Callable[[Record], Awaitable[None]] | None = None) -> None:
        self.records: list[Record] = []
        self._behaviour = behaviour
        self._changed = asyncio.Event()

    async def __call__(self, record: Record) -> None:
        if self._behaviour is not None:
            await self._behaviour(record)
        self.records.append(record)
        self._changed.set()

    @property
    def values(self) -> list[bytes]:
        return [r.value for r in self.records]

    async def wait_for(self, predicate: Callable[[list[Record]], bool], timeout_s: float = WAIT_S) -> None:
        async with asyncio.timeout(timeout_s):
            while not predicate(self.records):
                self._changed.clear()
                await self._changed.wait()

    async def wait_count(self, n: int, timeout_s: float = WAIT_S) -> None:
        await self.wait_for(lambda records: len(records) >= n, timeout_s)


def _letters(collector: Collector) -> list[events_pb2.DeadLetter]:
    return [events_pb2.DeadLetter.FromString(r.value) for r in collector.records]


async def _assert_no_dead_letters(bus: EventBus, dlq: Collector, group: str, key: str) -> None:
    """A marker published after the fact, on the same key (so the same partition): once the reader saw
    it, any dead letter written before it would have been seen too."""
    await bus.publish(topics.dead_letter(group), key, b"marker")
    await dlq.wait_for(lambda records: any(r.value == b"marker" for r in records))
    assert dlq.values == [b"marker"]


async def test_publish_reaches_a_subscriber(make_bus: BusFactory, names: Callable[[str], str]) -> None:
    topic, group = names("t"), names("g")
    got = Collector()
    bus = make_bus()
    bus.subscribe(topic, group, got)
    await bus.start()

    await bus.publish(topic, "client/customer/user/session", b"hello")

    await got.wait_count(1)
    [record] = got.records
    assert (record.topic, record.key, record.value) == (topic, "client/customer/user/session", b"hello")


async def test_a_record_published_before_start_is_not_missed(make_bus: BusFactory, names: Callable[[str], str]) -> None:
    topic, group = names("t"), names("g")
    publisher = make_bus()  # publish-only: another process, or before the consumer ever ran
    await publisher.publish(topic, "k", b"early")

    got = Collector()
    consumer = make_bus()
    consumer.subscribe(topic, group, got)
    await consumer.start()

    await got.wait_count(1)
    assert got.values == [b"early"]


async def test_a_new_from_now_group_skips_what_was_there_and_gets_what_follows(
    make_bus: BusFactory, names: Callable[[str], str]
) -> None:
    topic, group = names("t"), names("g")
    publisher = make_bus()
    await publisher.publish(topic, "k", b"before")

    got = Collector()
    consumer = make_bus()
    consumer.subscribe(topic, group, got, from_now=True)
    await consumer.start()

    async def published_until_seen() -> None:
        # Kafka places a new "latest" group when it is assigned its partitions, a moment after start():
        # publish until one arrives, then everything after it arrives in order.
        async with asyncio.timeout(WAIT_S):
            while not got.records:
                await publisher.publish(topic, "k", b"after")
                with contextlib.suppress(TimeoutError):
                    await got.wait_count(1, timeout_s=1.0)

    await published_until_seen()
    await publisher.publish(topic, "k", b"last")
    await got.wait_for(lambda records: records[-1].value == b"last")
    assert b"before" not in got.values and set(got.values) == {b"after", b"last"}


async def test_each_group_gets_every_record(make_bus: BusFactory, names: Callable[[str], str]) -> None:
    topic = names("t")
    first, second = Collector(), Collector()
    bus = make_bus()
    bus.subscribe(topic, names("g1"), first)
    bus.subscribe(topic, names("g2"), second)
    await bus.start()

    sent = [f"record-{i}".encode() for i in range(6)]
    for i, value in enumerate(sent):
        await bus.publish(topic, f"key-{i}", value)  # different keys: spread over partitions

    await first.wait_count(len(sent))
    await second.wait_count(len(sent))
    assert sorted(first.values) == sorted(sent)
    assert sorted(second.values) == sorted(sent)


async def test_records_of_one_key_arrive_in_order(make_bus: BusFactory, names: Callable[[str], str]) -> None:
    topic, group = names("t"), names("g")
    got = Collector()
    bus = make_bus()
    bus.subscribe(topic, group, got)
    await bus.start()

    sent = [f"turn-{i:02d}".encode() for i in range(20)]
    for value in sent:
        await bus.publish(topic, "one-session", value)

    await got.wait_count(len(sent))
    assert got.values == sent


async def test_a_permanent_error_is_dead_lettered_and_the_consumer_goes_on(
    make_bus: BusFactory, names: Callable[[str], str]
) -> None:
    topic, group = names("t"), names("g")

    async def reject_bad(record: Record) -> None:
        if record.value != b"good":
            raise PermanentError("signature does not match the claimed scope")

    handled, dlq = Collector(reject_bad), Collector()
    bus = make_bus()
    bus.subscribe(topic, group, handled)
    bus.subscribe(topics.dead_letter(group), names("dlq-reader"), dlq)
    await bus.start()

    bad = events_pb2.Envelope(event_id="ev-123").SerializeToString()
    await bus.publish(topic, "k", bad)
    await bus.publish(topic, "k", b"good")

    await handled.wait_count(1)
    assert handled.values == [b"good"]  # the record behind the bad one was not held up
    await dlq.wait_count(1)
    [letter] = _letters(dlq)
    assert dlq.records[0].key == "k"
    assert (letter.group, letter.topic, letter.key, letter.value) == (group, topic, "k", bad)
    assert "PermanentError" in letter.reason
    assert "signature does not match the claimed scope" in letter.reason
    assert letter.attempts == 1  # permanent: not retried
    assert letter.event_id == "ev-123"
    assert abs(letter.failed_at.ToSeconds() - time.time()) < 120


async def test_a_transient_failure_is_retried_and_not_dead_lettered(
    make_bus: BusFactory, names: Callable[[str], str]
) -> None:
    topic, group = names("t"), names("g")
    calls = 0

    async def fail_once(record: Record) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ConnectionError("store briefly unreachable")

    handled, dlq = Collector(fail_once), Collector()
    bus = make_bus()
    bus.subscribe(topic, group, handled)
    bus.subscribe(topics.dead_letter(group), names("dlq-reader"), dlq)
    await bus.start()

    await bus.publish(topic, "k", b"payload")

    await handled.wait_count(1)
    assert handled.values == [b"payload"]
    assert calls == 2
    await _assert_no_dead_letters(bus, dlq, group, "k")


async def test_a_record_that_keeps_failing_is_dead_lettered_after_the_retries(
    make_bus: BusFactory, names: Callable[[str], str]
) -> None:
    topic, group = names("t"), names("g")
    calls = 0

    async def always_fail(record: Record) -> None:
        nonlocal calls
        if record.value == b"doomed":
            calls += 1
            raise RuntimeError("still broken")

    handled, dlq = Collector(always_fail), Collector()
    bus = make_bus(deliver_attempts=3, deliver_backoff_s=0.01)
    bus.subscribe(topic, group, handled)
    bus.subscribe(topics.dead_letter(group), names("dlq-reader"), dlq)
    await bus.start()

    await bus.publish(topic, "k", b"doomed")
    await bus.publish(topic, "k", b"next")

    await handled.wait_count(1)
    assert handled.values == [b"next"]
    assert calls == 3
    await dlq.wait_count(1)
    [letter] = _letters(dlq)
    assert letter.value == b"doomed"
    assert letter.attempts == 3
    assert "RuntimeError: still broken" in letter.reason
    assert letter.event_id == ""  # not an envelope


def _fail_first_dead_letter(
    bus: EventBus, group: str, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str, str, bytes], Awaitable[None]]:
    """The bus' first dead-letter write fails, as if the broker / disk were briefly gone; returns the real
    publish."""
    real_publish = bus.publish
    failures = [BusUnavailable("dead-letter topic briefly unreachable")]

    async def flaky_publish(to: str, key: str, value: bytes) -> None:
        if to == topics.dead_letter(group) and failures:
            raise failures.pop()
        await real_publish(to, key, value)

    monkeypatch.setattr(bus, "publish", flaky_publish)
    return real_publish


@pytest.mark.parametrize("concurrency", [1, 4], ids=["one-by-one", "micro-batch"])
async def test_a_failed_dead_letter_write_leaves_the_record_uncommitted(
    make_bus: BusFactory, names: Callable[[str], str], monkeypatch: pytest.MonkeyPatch, concurrency: int
) -> None:
    topic, group = names("t"), names("g")
    seen: list[bytes] = []

    async def reject_bad(record: Record) -> None:
        seen.append(record.value)
        if record.value == b"bad":
            raise PermanentError("malformed")

    handled, dlq = Collector(reject_bad), Collector()
    bus = make_bus(deliver_backoff_s=0.01)
    bus.subscribe(topic, group, handled, concurrency=concurrency)
    bus.subscribe(topics.dead_letter(group), names("dlq-reader"), dlq)
    await bus.start()

    real_publish = _fail_first_dead_letter(bus, group, monkeypatch)
    await real_publish(topic, "k", b"bad")
    await real_publish(topic, "k", b"good")

    await handled.wait_count(1)
    assert seen == [b"bad", b"bad", b"good"]  # redelivered, and still in order
    await dlq.wait_count(1)
    assert [letter.value for letter in _letters(dlq)] == [b"bad"]


async def test_an_unfinished_record_is_redelivered_to_the_next_instance(
    make_bus: BusFactory, names: Callable[[str], str]
) -> None:
    topic, group = names("t"), names("g")
    reached_second = asyncio.Event()

    async def hang_on_second(record: Record) -> None:
        if record.value == b"second":
            reached_second.set()
            await asyncio.Event().wait()  # never finishes: stands for a crash mid-record

    first_run = Collector(hang_on_second)
    bus = make_bus(stop_timeout_s=0.5)
    bus.subscribe(topic, group, first_run)
    await bus.start()
    await bus.publish(topic, "k", b"first")
    await bus.publish(topic, "k", b"second")
    async with asyncio.timeout(WAIT_S):
        await reached_second.wait()
    await bus.stop()  # gives up on the hung handler: "second" is not committed
    assert first_run.values == [b"first"]

    second_run = Collector()
    restarted = make_bus()
    restarted.subscribe(topic, group, second_run)
    await restarted.start()

    await second_run.wait_count(1)
    # "first" was committed before "second" began, so only "second" comes again.
    assert second_run.values[0] == b"second"


async def test_stop_lets_the_current_record_finish_and_commits_it(
    make_bus: BusFactory, names: Callable[[str], str]
) -> None:
    topic, group = names("t"), names("g")
    started = asyncio.Event()

    async def slow(record: Record) -> None:
        started.set()
        await asyncio.sleep(0.5)

    first_run = Collector(slow)
    bus = make_bus()
    bus.subscribe(topic, group, first_run)
    await bus.start()
    await bus.publish(topic, "k", b"slow")
    async with asyncio.timeout(WAIT_S):
        await started.wait()
    await bus.stop()
    assert first_run.values == [b"slow"]  # finished, not cut off

    second_run = Collector()
    restarted = make_bus()
    restarted.subscribe(topic, group, second_run)
    await restarted.start()
    await restarted.publish(topic, "k", b"after")

    await second_run.wait_count(1)
    assert second_run.values == [b"after"]  # "slow" was committed at stop: not redelivered


# -- Kafka only --------------------------------------------------------------------------------------


async def test_kafka_publish_to_a_refused_port_raises_bus_unavailable_quickly(refused_port: int) -> None:
    bus = KafkaBus(f"127.0.0.1:{refused_port}", publish_timeout_s=2.0)
    began = time.monotonic()
    with pytest.raises(BusUnavailable):
        await bus.publish("acm.turns.v1", "k", b"x")
    assert time.monotonic() - began < 3.5
    await bus.stop()


async def test_kafka_publish_to_a_silent_broker_raises_bus_unavailable_within_the_timeout() -> None:
    # Accepts connections and never answers: the case a refused connection does not cover.
    held: list[asyncio.StreamWriter] = []

    async def accept(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    bus = KafkaBus(f"127.0.0.1:{port}", publish_timeout_s=1.5, request_timeout_ms=30000)
    try:
        began = time.monotonic()
        with pytest.raises(BusUnavailable, match="did not acknowledge"):
            await bus.publish("acm.turns.v1", "k", b"x")
        assert time.monotonic() - began < 3.0
        await bus.stop()
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()


# -- micro-batches (subscribe(..., concurrency > 1)) ----------------------------------------------------


async def test_a_batch_keeps_each_keys_order_and_handles_keys_concurrently(
    make_bus: BusFactory, names: Callable[[str], str]
) -> None:
    topic, group = names("t"), names("g")
    in_flight, most = 0, 0

    async def slow(record: Record) -> None:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1

    got = Collector(slow)
    bus = make_bus()
    sent = {f"session-{k}": [f"{k}-{i:02d}".encode() for i in range(8)] for k in range(4)}
    for i in range(8):  # published before start: the first poll sees several keys at once
        for key, values in sent.items():
            await bus.publish(topic, key, values[i])
    bus.subscribe(topic, group, got, concurrency=4)
    await bus.start()

    await got.wait_count(32)
    for key, values in sent.items():
        assert [r.value for r in got.records if r.key == key] == values
    assert most > 1  # the keys' records overlapped
    assert most <= 4


async def test_a_batch_never_runs_two_sessions_of_one_user_at_once(
    make_bus: BusFactory, names: Callable[[str], str]
) -> None:
    """A user's facts are read-modify-write, so their sessions' turns are one ordering group; other users run
    alongside."""
    topic, group = names("t"), names("g")
    running: dict[str, int] = {}
    overlap: dict[str, int] = {}

    async def slow(record: Record) -> None:
        user = record.key.rpartition("/")[0]
        running[user] = running.get(user, 0) + 1
        overlap[user] = max(overlap.get(user, 0), running[user])
        await asyncio.sleep(0.02)
        running[user] -= 1

    got = Collector(slow)
    bus = make_bus()
    keys = [f"c/cu/user-{u}/session-{s}" for u in range(2) for s in range(3)]
    for i in range(4):
        for key in keys:
            await bus.publish(topic, key, f"{key}#{i}".encode())
    bus.subscribe(topic, group, got, concurrency=4)
    await bus.start()

    await got.wait_count(len(keys) * 4)
    assert overlap == {"c/cu/user-0": 1, "c/cu/user-1": 1}
    for key in keys:
        assert [r.value for r in got.records if r.key == key] == [f"{key}#{i}".encode() for i in range(4)]


async def test_a_batch_dead_letters_only_its_bad_record_with_the_reason(
    make_bus: BusFactory, names: Callable[[str], str]
) -> None:
    topic, group = names("t"), names("g")

    async def reject_bad(record: Record) -> None:
        if record.value.startswith(b"bad"):
            raise PermanentError("malformed turn")

    handled, dlq = Collector(reject_bad), Collector()
    bus = make_bus()
    for i in range(6):
        await bus.publish(topic, f"k{i % 3}", b"bad-1" if i == 4 else f"good-{i}".encode())
    bus.subscribe(topic, group, handled, concurrency=3)
    bus.subscribe(topics.dead_letter(group), names("dlq-reader"), dlq)
    await bus.start()

    await handled.wait_count(5)
    assert sorted(handled.values) == [f"good-{i}".encode() for i in (0, 1, 2, 3, 5)]
    await dlq.wait_count(1)
    [letter] = _letters(dlq)
    assert (letter.key, letter.value, letter.attempts) == ("k1", b"bad-1", 1)
    assert "PermanentError: malformed turn" in letter.reason


async def test_a_handled_batch_is_committed(make_bus: BusFactory, names: Callable[[str], str]) -> None:
    topic, group = names("t"), names("g")
    first_run = Collector()
    bus = make_bus()
    for i in range(10):
        await bus.publish(topic, f"k{i % 5}", f"v{i}".encode())
    bus.subscribe(topic, group, first_run, concurrency=5)
    await bus.start()
    await first_run.wait_count(10)
    await bus.stop()

    second_run = Collector()
    restarted = make_bus()
    restarted.subscribe(topic, group, second_run, concurrency=5)
    await restarted.start()
    await restarted.publish(topic, "k0", b"after")
    await second_run.wait_count(1)
    assert second_run.values == [b"after"]  # nothing of the first batch came again
