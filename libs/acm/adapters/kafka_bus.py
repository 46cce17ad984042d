"""EventBus on Kafka, with aiokafka directly.

Publishing: one idempotent producer (acks=all), started on first use; every publish is bounded by
`publish_timeout_s` and raises BusUnavailable when the broker cannot take the record in time.
Consuming: one consumer per (group, topic) subscription, manual commits: a record's offset is committed
only after `deliver` returned (handled, or written to the group's dead-letter topic). Records of one
partition are handled one at a time, in order; different subscriptions run concurrently.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import (
    IllegalStateError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    NodeNotReadyError,
    RequestTimedOutError,
    TopicAlreadyExistsError,
    for_code,
)

from acm import topics
from acm.adapters.delivery import Worker, deliver
from acm.ports.bus import BusUnavailable, Record, RecordHandler

log = logging.getLogger("acm.bus")

# Errors that mean "the broker is not reachable (in time)", as opposed to a bad request.
_UNREACHABLE = (
    TimeoutError,
    KafkaConnectionError,
    KafkaTimeoutError,
    NodeNotReadyError,
    RequestTimedOutError,
)


@dataclass(eq=False)
class _Subscription:
    topic: str
    group: str
    handler: RecordHandler
    worker: Worker
    from_now: bool = False
    consumer: Any = field(default=None)  # AIOKafkaConsumer while started


class KafkaBus:
    def __init__(
        self,
        bootstrap_servers: str,
        *,
        client_id: str = "acm",
        num_partitions: int = 2,
        replication_factor: int = 1,
        create_topics: bool = True,
        publish_timeout_s: float = 5.0,
        start_timeout_s: float = 15.0,
        stop_timeout_s: float = 10.0,
        request_timeout_ms: int = 5000,
        poll_timeout_ms: int = 500,
        max_poll_records: int = 100,
        session_timeout_ms: int = 10000,
        heartbeat_interval_ms: int = 1000,
        deliver_attempts: int = 4,
        deliver_backoff_s: float = 0.2,
        namespace: str = "",
    ) -> None:
        self._bootstrap = bootstrap_servers
        # Prefixed to every topic and consumer group: several ACM deployments (or test runs) can share
        # one Kafka cluster without reading each other's events.
        self._namespace = namespace
        self._client_id = client_id
        self._num_partitions = num_partitions
        self._replication_factor = replication_factor
        self._create_topics = create_topics
        self._publish_timeout_s = publish_timeout_s
        self._start_timeout_s = start_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._request_timeout_ms = request_timeout_ms
        self._poll_timeout_ms = poll_timeout_ms
        self._max_poll_records = max_poll_records
        self._session_timeout_ms = session_timeout_ms
        self._heartbeat_interval_ms = heartbeat_interval_ms
        self._deliver_attempts = deliver_attempts
        self._deliver_backoff_s = deliver_backoff_s
        self._subscriptions: list[_Subscription] = []
        self._producer: Any = None  # AIOKafkaProducer once started
        self._admin: Any = None  # AIOKafkaAdminClient once started
        self._connect_lock: asyncio.Lock | None = None  # made lazily: it must belong to the running loop
        self._known_topics: set[str] = set()
        self._started = False

    # -- EventBus --------------------------------------------------------------------------------

    async def publish(self, topic: str, key: str, value: bytes) -> None:
        topic = self._namespace + topic
        try:
            async with asyncio.timeout(self._publish_timeout_s):
                producer = await self._get_producer()
                await self._ensure_topics([topic])
                await producer.send_and_wait(topic, value=value, key=key.encode())
        except _UNREACHABLE as exc:
            # On a timeout the record may still be sent later; a retry can duplicate it (at-least-once).
            raise BusUnavailable(
                f"Kafka at {self._bootstrap} did not acknowledge a record on {topic} "
                f"within {self._publish_timeout_s}s: {type(exc).__name__}: {exc}"
            ) from exc

    def subscribe(self, topic: str, group: str, handler: RecordHandler, *, from_now: bool = False) -> None:
        if self._started:
            raise RuntimeError("subscribe() must be called before start()")
        if any(s.topic == topic and s.group == group for s in self._subscriptions):
            raise ValueError(f"group {group!r} is already subscribed to {topic!r}")
        topic = self._namespace + topic
        sub = _Subscription(
            topic, group, handler, Worker(f"kafka:{group}:{topic}", lambda w: self._consume(sub, w)), from_now
        )
        self._subscriptions.append(sub)

    async def start(self) -> None:
        """Create the subscribed topics and their dead-letter topics, then start consuming. The producer
        starts on the first publish, so a publish-only bus needs no broker until then."""
        if self._started:
            return
        try:
            async with asyncio.timeout(self._start_timeout_s):
                wanted = {s.topic for s in self._subscriptions} | {
                    self._namespace + topics.dead_letter(s.group) for s in self._subscriptions
                }
                await self._ensure_topics(sorted(wanted))
                for sub in self._subscriptions:
                    sub.consumer = self._new_consumer(sub)
                    await sub.consumer.start()
        except _UNREACHABLE as exc:
            await self._close_clients()
            raise BusUnavailable(f"Kafka at {self._bootstrap} unavailable at start: {exc!r}") from exc
        except BaseException:
            await self._close_clients()
            raise
        for sub in self._subscriptions:
            sub.worker.start()
        self._started = True

    async def stop(self) -> None:
        """Stop the consumers (the record being handled finishes and is committed), then the producer."""
        await asyncio.gather(*(s.worker.stop(self._stop_timeout_s) for s in self._subscriptions))
        await self._close_clients()
        self._started = False

    # -- consuming -------------------------------------------------------------------------------

    def _new_consumer(self, sub: _Subscription) -> Any:
        return AIOKafkaConsumer(
            sub.topic,
            bootstrap_servers=self._bootstrap,
            client_id=self._client_id,
            group_id=self._namespace + sub.group,
            enable_auto_commit=False,
            # A new group starts at the beginning (nothing is skipped), or for hints at the end.
            auto_offset_reset="latest" if sub.from_now else "earliest",
            request_timeout_ms=max(self._request_timeout_ms, self._session_timeout_ms + 5000),
            session_timeout_ms=self._session_timeout_ms,
            heartbeat_interval_ms=self._heartbeat_interval_ms,
            max_poll_records=self._max_poll_records,
            metadata_max_age_ms=60000,  # notice added partitions within a minute
        )

    async def _consume(self, sub: _Subscription, worker: Worker) -> None:
        consumer = sub.consumer
        while not worker.stopping:
            try:
                batches = await consumer.getmany(timeout_ms=self._poll_timeout_ms)
            except KafkaError as exc:
                log.warning("%s: poll failed (%r), retrying", worker.name, exc)
                await asyncio.sleep(1.0)
                continue
            for tp, messages in batches.items():
                for msg in messages:
                    # Stop between records; skip what is left of a partition taken away by a rebalance
                    # (its new owner starts from the committed offset).
                    if worker.stopping or tp not in consumer.assignment():
                        break
                    if not await self._handle(sub, worker, tp, msg):
                        break

    async def _handle(self, sub: _Subscription, worker: Worker, tp: TopicPartition, msg: Any) -> bool:
        """Deliver one record and commit it; False if the rest of its partition's batch must wait."""
        record = Record(
            topic=msg.topic,
            key=msg.key.decode("utf-8", "replace") if msg.key is not None else "",
            value=msg.value if msg.value is not None else b"",
            partition=msg.partition,
            offset=msg.offset,
        )
        consumer = sub.consumer
        with worker.busy():
            try:
                await deliver(
                    self,
                    sub.group,
                    record,
                    sub.handler,
                    attempts=self._deliver_attempts,
                    backoff_s=self._deliver_backoff_s,
                )
            except Exception:
                failed = True
            else:
                failed = False
                try:
                    await consumer.commit({tp: msg.offset + 1})
                except KafkaError as exc:
                    # Handled but not committed: a later commit covers it, or (after a rebalance) the new
                    # owner redelivers it. At-least-once either way.
                    log.warning("%s: commit of %s@%d failed: %r", worker.name, tp, msg.offset, exc)
        if failed:
            # Neither handled nor dead-lettered (the dead-letter publish failed, logged by deliver):
            # rewind so that this record, and the ones after it in order, come again.
            with suppress(IllegalStateError):  # partition no longer ours: its new owner redelivers
                consumer.seek(tp, msg.offset)
            await asyncio.sleep(max(self._deliver_backoff_s, 1.0))
            return False
        return True

    # -- clients ---------------------------------------------------------------------------------

    def _lock(self) -> asyncio.Lock:
        if self._connect_lock is None:
            self._connect_lock = asyncio.Lock()
        return self._connect_lock

    async def _get_producer(self) -> Any:
        if self._producer is not None:
            return self._producer
        async with self._lock():
            if self._producer is None:
                producer = AIOKafkaProducer(
                    bootstrap_servers=self._bootstrap,
                    client_id=self._client_id,
                    acks="all",
                    enable_idempotence=True,
                    request_timeout_ms=self._request_timeout_ms,
                )
                try:
                    await producer.start()
                except BaseException:
                    # A half-started producer cannot be restarted: drop it, the next publish makes a new one.
                    await _quietly(producer.stop(), self._stop_timeout_s)
                    raise
                self._producer = producer
        return self._producer

    async def _get_admin(self) -> Any:
        if self._admin is not None:
            return self._admin
        async with self._lock():
            if self._admin is None:
                admin = AIOKafkaAdminClient(
                    bootstrap_servers=self._bootstrap,
                    client_id=self._client_id,
                    request_timeout_ms=self._request_timeout_ms,
                )
                try:
                    await admin.start()
                except BaseException:
                    await _quietly(admin.close(), self._stop_timeout_s)
                    raise
                self._admin = admin
        return self._admin

    async def _ensure_topics(self, names: Iterable[str]) -> None:
        """Create missing topics with our partition count (the broker's auto-create would use its own
        default). Done once per topic per bus; off when topics are managed outside (create_topics=False)."""
        missing = [n for n in names if n not in self._known_topics]
        if not missing or not self._create_topics:
            return
        admin = await self._get_admin()
        response = await admin.create_topics(
            [NewTopic(n, self._num_partitions, self._replication_factor) for n in missing],
            timeout_ms=self._request_timeout_ms,
        )
        for topic_error in response.topic_errors:
            name, code = topic_error[0], topic_error[1]
            if code and for_code(code) is not TopicAlreadyExistsError:
                error = for_code(code)
                raise error(f"could not create topic {name}: {topic_error[2:]}")
        self._known_topics.update(missing)

    async def _close_clients(self) -> None:
        for sub in self._subscriptions:
            consumer, sub.consumer = sub.consumer, None
            if consumer is not None:
                await _quietly(consumer.stop(), self._stop_timeout_s)  # leaves the group: fast rebalance
        producer, self._producer = self._producer, None
        if producer is not None:
            await _quietly(producer.stop(), self._stop_timeout_s)
        admin, self._admin = self._admin, None
        if admin is not None:
            await _quietly(admin.close(), self._stop_timeout_s)


async def _quietly(closing: Any, timeout_s: float) -> None:
    """Close a client without letting a dead broker hang or fail shutdown."""
    try:
        async with asyncio.timeout(timeout_s):
            await closing
    except Exception as exc:
        log.warning("closing a Kafka client failed: %r", exc)
