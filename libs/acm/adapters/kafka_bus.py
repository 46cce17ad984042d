"""EventBus on Kafka, served by FastStream (one KafkaBroker per bus).

Consuming: one FastStream subscriber per (topic, group) registered with subscribe(), each its own consumer in
the group; a partition's records are handled one at a time, in order. With ``concurrency`` > 1 it is a batch
subscriber: what one poll returns (at most max_poll_records, across the consumer's partitions) is a micro-batch
for `deliver_batch` (per-key order, keys in parallel), committed as a whole. Acknowledgement is manual
(AckPolicy.NACK_ON_ERROR): the offset is committed only after `deliver` returned (handled, or written to the
group's dead-letter topic); when `deliver` raises (that dead-letter write failed) the consumer seeks back, so
the record and those after it come again. stop() lets a record in progress finish (FastStream's graceful
timeout) and then cancels it, uncommitted. A rebalance (a replica joining or leaving) hands partitions over the
same way (_HandOff): no record is handled twice because its commit lost a race with the rebalance.
Publishing: FastStream's producer (acks=all, idempotent), connected on first use so that a publish-only bus
needs no broker until then; every publish is bounded by `publish_timeout_s` and raises BusUnavailable.
What FastStream does not do and stays here (docs/faststream.md): retries and dead letters (`deliver`, shared
with the embedded log), creating the topics we publish to with our partition count, the namespace prefix.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, cast

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, ConsumerRecord, TopicPartition
from aiokafka.errors import KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError, RequestTimedOutError
from faststream.kafka import KafkaBroker, Topic
from faststream.kafka.annotations import KafkaMessage
from faststream.message import StreamMessage
from faststream.middlewares import AckPolicy
from faststream.security import BaseSecurity

from acm.adapters.delivery import batch_size, deliver, deliver_batch
from acm.metrics import forget_lag, report_lag
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
MESSAGING_SYSTEM = "kafka"  # the OpenTelemetry name


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
        max_poll_records: int = 100,
        session_timeout_ms: int = 10000,
        heartbeat_interval_ms: int = 1000,
        deliver_attempts: int = 4,
        deliver_backoff_s: float = 0.2,
        namespace: str = "",
        description: str | None = None,
        lag_every_s: float = 15.0,
        security: BaseSecurity | None = None,
    ) -> None:
        self._bootstrap = bootstrap_servers
        # Prefixed to every topic and consumer group: several ACM deployments (or test runs) can share
        # one Kafka cluster without reading each other's events.
        self._namespace = namespace
        self._num_partitions = num_partitions
        self._replication_factor = replication_factor
        self._create_topics = create_topics
        self._publish_timeout_s = publish_timeout_s
        self._start_timeout_s = start_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._consumer_options: dict[str, Any] = {
            "max_poll_records": max_poll_records,
            "session_timeout_ms": session_timeout_ms,
            "heartbeat_interval_ms": heartbeat_interval_ms,
        }
        self._deliver_attempts = deliver_attempts
        self._deliver_backoff_s = deliver_backoff_s
        self.broker = KafkaBroker(
            bootstrap_servers,
            client_id=client_id,
            # One timeout for producer and consumers: a consumer's group join waits up to the session
            # timeout on the broker, so it must exceed that. A publish is bounded by publish_timeout_s anyway.
            request_timeout_ms=max(request_timeout_ms, session_timeout_ms + 5000),
            metadata_max_age_ms=60000,  # notice added partitions within a minute
            acks="all",
            enable_idempotence=True,
            graceful_timeout=stop_timeout_s,
            logger=log,
            log_level=logging.DEBUG,  # FastStream's per-message lines; failures are logged by deliver
            description=description,
            security=security,  # TLS / SASL for producer, consumers and admin alike (kafka_security)
        )
        self._subscribed: set[tuple[str, str]] = set()
        # (group, FastStream subscriber) per subscription, for the lag sampler; lag_every_s 0: no sampling.
        self._subscribers: list[tuple[str, Any]] = []
        self._lag_every_s = lag_every_s
        self._lag_task: asyncio.Task[None] | None = None
        self._connect_lock: asyncio.Lock | None = None  # made lazily: it must belong to the running loop
        self._connected = False
        self._known_topics: set[str] = set()
        self._started = False

    # -- EventBus --------------------------------------------------------------------------------

    async def publish(self, topic: str, key: str, value: bytes) -> None:
        topic = self._namespace + topic
        try:
            async with asyncio.timeout(self._publish_timeout_s):
                await self._connect()
                await self._ensure_topics([topic])
                await self.broker.publish(value, topic, key=key.encode())  # waits for the broker's ack
        except _UNREACHABLE as exc:
            # On a timeout the record may still be sent later; a retry can duplicate it (at-least-once).
            raise BusUnavailable(
                f"Kafka at {self._bootstrap} did not acknowledge a record on {topic} "
                f"within {self._publish_timeout_s}s: {type(exc).__name__}: {exc}"
            ) from exc

    def subscribe(
        self,
        topic: str,
        group: str,
        handler: RecordHandler,
        *,
        from_now: bool = False,
        concurrency: int = 1,
        description: str | None = None,
    ) -> None:
        """``description`` only goes to the AsyncAPI document (acm.asyncapi)."""
        if self._started:
            raise RuntimeError("subscribe() must be called before start()")
        if (topic, group) in self._subscribed:
            raise ValueError(f"group {group!r} is already subscribed to {topic!r}")
        self._subscribed.add((topic, group))
        hand_off = _HandOff(self._stop_timeout_s)
        subscriber = self.broker.subscriber(
            self._topic(self._namespace + topic),
            group_id=self._namespace + group,
            # A new group starts at the beginning (nothing is skipped), or for hints at the end.
            auto_offset_reset="latest" if from_now else "earliest",
            ack_policy=AckPolicy.NACK_ON_ERROR,  # commit after success, seek back after an exception
            title=f"{topic}:{group}",
            description=description,
            listener=hand_off,
            **self._consumer_options,
            **self._batching(concurrency),
        )
        hand_off.subscriber = subscriber
        consume = (
            self._batch_consumer(group, handler, concurrency) if concurrency > 1 else self._consumer(group, handler)
        )
        subscriber(consume, decoder=_raw_body)
        self._subscribers.append((group, subscriber))

    async def start(self) -> None:
        """Create the subscribed topics and start consuming. The producer connects here or on the first
        publish, whichever comes first."""
        if self._started:
            return
        try:
            async with asyncio.timeout(self._start_timeout_s):
                await self._connect()
                await self.broker.start()
        except _UNREACHABLE as exc:
            await self.stop()
            raise BusUnavailable(f"Kafka at {self._bootstrap} unavailable at start: {exc!r}") from exc
        except BaseException:
            await self.stop()
            raise
        self._started = True
        if self._lag_every_s > 0 and self._subscribers:
            self._lag_task = asyncio.create_task(self._sample_lag_forever(), name="kafka consumer lag")

    async def ping(self) -> None:
        """Return when the broker answers a metadata request; raise BusUnavailable otherwise (readiness)."""
        if not self._connected:
            raise BusUnavailable(f"Kafka at {self._bootstrap}: not connected")
        if not await self.broker.ping(timeout=self._publish_timeout_s):
            raise BusUnavailable(f"Kafka at {self._bootstrap} did not answer within {self._publish_timeout_s}s")

    async def stop(self) -> None:
        """Stop the consumers (the record being handled finishes and is committed, within stop_timeout_s),
        leave their groups, then close the producer."""
        if self._lag_task is not None:
            self._lag_task.cancel()
            await asyncio.gather(self._lag_task, return_exceptions=True)
            self._lag_task = None
        forget_lag(self)
        try:
            async with asyncio.timeout(self._stop_timeout_s * 2):
                await self.broker.stop()
        except Exception as exc:  # a dead broker must not hang or fail shutdown
            log.warning("stopping the Kafka bus failed: %r", exc)
        self._connected = False
        self._started = False

    # -- consuming -------------------------------------------------------------------------------

    def _consumer(self, group: str, handler: RecordHandler) -> Callable[[bytes, KafkaMessage], Awaitable[None]]:
        # `body` is unused (the record is built from the raw message) but typed: the AsyncAPI payload.
        async def consume(body: bytes, message: KafkaMessage) -> None:
            record = _record(cast("ConsumerRecord[bytes | None, bytes | None]", message.raw_message))
            await self._or_seek_back(
                deliver(
                    self,
                    group,
                    record,
                    handler,
                    system=MESSAGING_SYSTEM,
                    attempts=self._deliver_attempts,
                    backoff_s=self._deliver_backoff_s,
                )
            )

        return consume

    async def _or_seek_back(self, delivering: Awaitable[None]) -> None:
        try:
            await delivering
        except Exception:
            # Neither handled nor dead-lettered (logged by deliver): raising seeks back (no commit; a batch: each
            # of its partitions to its first record), so it comes again; wait a little so a broker that is down
            # is not hammered.
            await asyncio.sleep(max(self._deliver_backoff_s, 1.0))
            raise

    def _batching(self, concurrency: int) -> dict[str, Any]:
        """A batch subscriber's options: whatever is there after a short wait, up to delivery.batch_size."""
        if concurrency <= 1:
            return {}
        most = batch_size(concurrency, self._consumer_options["max_poll_records"])
        return {"batch": True, "max_records": most, "batch_timeout_ms": 50}

    def _batch_consumer(
        self, group: str, handler: RecordHandler, concurrency: int
    ) -> Callable[[list[bytes], KafkaMessage], Awaitable[None]]:
        async def consume(body: list[bytes], message: KafkaMessage) -> None:
            raws = cast("tuple[ConsumerRecord[bytes | None, bytes | None], ...]", message.raw_message)
            await self._or_seek_back(
                deliver_batch(
                    self,
                    group,
                    [_record(raw) for raw in raws],
                    handler,
                    system=MESSAGING_SYSTEM,
                    concurrency=concurrency,
                    attempts=self._deliver_attempts,
                    backoff_s=self._deliver_backoff_s,
                )
            )

        return consume

    # -- consumer lag ----------------------------------------------------------------------------

    async def _sample_lag_forever(self) -> None:
        while True:
            lags: dict[tuple[str, str, int], int] = {}
            try:
                lags = await self.sample_lag()
            except Exception as exc:  # a broker that is down: the next period tries again
                log.debug("sampling consumer lag failed: %r", exc)
            # Until the group assigned partitions (a join takes seconds after start), look again soon.
            await asyncio.sleep(self._lag_every_s if lags else min(self._lag_every_s, 1.0))

    async def sample_lag(self) -> dict[tuple[str, str, int], int]:
        """Report acm.consumer.lag for each partition this process' consumers own: the partition's end offset
        minus the group's committed offset (its first offset when the group committed nothing yet), the lag
        KEDA's Kafka scaler reads. Returns {(group, topic, partition): lag}."""
        lags: dict[tuple[str, str, int], int] = {}
        for group, subscriber in self._subscribers:
            consumer: AIOKafkaConsumer | None = subscriber.consumer
            partitions: list[TopicPartition] = list(consumer.assignment()) if consumer is not None else []
            if consumer is None or not partitions:
                continue
            async with asyncio.timeout(self._publish_timeout_s):
                ends = await consumer.end_offsets(partitions)
                committed = {tp: await consumer.committed(tp) for tp in partitions}
                never = [tp for tp, offset in committed.items() if offset is None]
                firsts = await consumer.beginning_offsets(never) if never else {}
            for tp in partitions:
                start = committed[tp]
                lag = max(0, ends[tp] - (start if start is not None else firsts[tp]))
                lags[(group, tp.topic, tp.partition)] = lag
        report_lag(self, lags)
        return lags

    # -- clients ---------------------------------------------------------------------------------

    def _topic(self, name: str) -> Topic:
        return Topic(
            name,
            num_partitions=self._num_partitions,
            replication_factor=self._replication_factor,
            declare=self._create_topics,
        )

    async def _connect(self) -> None:
        if self._connected:
            return
        if self._connect_lock is None:
            self._connect_lock = asyncio.Lock()
        async with self._connect_lock:
            if self._connected:
                return
            try:
                await self.broker.connect()
            except BaseException:
                # Drop what did start (producer, admin client): the next publish connects afresh.
                await _quietly(self.broker.config.broker_config.disconnect(), self._stop_timeout_s)
                raise
            self._connected = True

    async def _ensure_topics(self, names: Iterable[str]) -> None:
        """Create missing topics with our partition count: FastStream never creates the topics it publishes
        to, and the broker's auto-create would use its own default. Once per topic per bus; off when topics
        are managed outside (create_topics=False)."""
        missing = [n for n in names if n not in self._known_topics]
        if not missing or not self._create_topics:
            return
        results = await self.broker.config.broker_config.admin.create_topics([self._topic(n) for n in missing])
        for result in results:  # "already exists" is not an error here
            if result.error is not None:
                raise result.error
        self._known_topics.update(missing)


class _HandOff(ConsumerRebalanceListener):  # type: ignore[misc]  # aiokafka is untyped
    """Before the group takes a consumer's partitions (eager rebalancing revokes them all, from every member):
    stop taking records from them, and wait for the record in flight to be handled and committed (FastStream's
    lock covers handler and commit). aiokafka awaits this before rejoining, while the member's generation still
    commits; without it that commit fails and the partition's next owner handles the record a second time."""

    def __init__(self, timeout_s: float) -> None:
        self.subscriber: Any = None  # the FastStream subscriber, set once it is made
        self._timeout_s = timeout_s

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        consumer: AIOKafkaConsumer | None = getattr(self.subscriber, "consumer", None)
        if consumer is None or not revoked:
            return
        consumer.pause(*revoked)  # the next assignment starts unpaused
        await self.subscriber.lock.wait_release(self._timeout_s)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        return None


def _record(raw: ConsumerRecord[bytes | None, bytes | None]) -> Record:
    return Record(
        topic=raw.topic,
        key=raw.key.decode("utf-8", "replace") if raw.key is not None else "",
        value=raw.value if raw.value is not None else b"",
        partition=raw.partition,
        offset=raw.offset,
    )


async def _raw_body(message: StreamMessage[Any]) -> bytes:
    """The value as it is: FastStream would otherwise decode it by its content-type header."""
    return message.body


async def _quietly(closing: Awaitable[Any], timeout_s: float) -> None:
    """Close a client without letting a dead broker hang or fail shutdown."""
    try:
        async with asyncio.timeout(timeout_s):
            await closing
    except Exception as exc:
        log.warning("closing a Kafka client failed: %r", exc)
