"""Consumer-side logic shared by every EventBus adapter: retry and dead-letter (FastStream has neither for
Kafka; docs/faststream.md), and the embedded log's stoppable worker.

An adapter calls `deliver` for each record and commits the record's offset only when it returns; with a
subscription's concurrency above 1 it calls `deliver_batch` on a micro-batch and commits the batch when it
returns.
`deliver` returns once the record was either handled or safely written to the group's dead-letter
topic; it raises only when that dead-letter write failed, so the record is redelivered (nothing lost).
Each delivery is a CONSUMER span, a child of the span that published the event (the envelope's
traceparent), so a turn can be followed from the gateway through every consumer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from google.protobuf.message import DecodeError
from google.protobuf.timestamp_pb2 import Timestamp
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from acm import topics
from acm.metrics import DEAD_LETTERS, HANDLER_DURATION
from acm.ports.bus import EventBus, PermanentError, Record, RecordHandler
from acm.telemetry import context_from_traceparent
from acm.v1 import events_pb2

log = logging.getLogger("acm.bus")
tracer = trace.get_tracer(__name__)


async def deliver(
    bus: EventBus,
    group: str,
    record: Record,
    handler: RecordHandler,
    *,
    system: str,
    attempts: int = 4,
    backoff_s: float = 0.2,
) -> None:
    """Run `handler` on `record` with retries; dead-letter it if it cannot succeed. `system` names the
    transport in the span (OpenTelemetry's messaging.system).

    All attempts share one CONSUMER span, current while the handler runs: the events it publishes
    take it as their parent (acm.envelopes.envelope)."""
    env = _envelope(record.value)
    attributes: dict[str, AttributeValue] = {
        "messaging.system": system,
        "messaging.operation.type": "process",
        "messaging.destination.name": record.topic,
        "messaging.destination.partition.id": str(record.partition),
        "messaging.consumer.group.name": group,
    }
    if env is not None and env.event_id:
        attributes["messaging.message.id"] = env.event_id
    with tracer.start_as_current_span(
        f"{group} process {record.topic}",
        context=context_from_traceparent(env.traceparent if env is not None else ""),
        kind=SpanKind.CONSUMER,
        attributes=attributes,
    ) as span:
        await _with_retries(bus, group, record, handler, span, attempts, backoff_s)


# Records per micro-batch and key in flight: a batch is committed (or, at a stop past the timeout, dropped and
# redelivered) as a whole, so it is kept to a few seconds of work.
BATCH_PER_SLOT = 8


def batch_size(concurrency: int, most: int) -> int:
    """How many records one read takes, at most ``most`` (the adapter's poll size): all of them when records are
    committed one by one (concurrency 1), else a micro-batch."""
    return most if concurrency <= 1 else min(most, concurrency * BATCH_PER_SLOT)


class Batch(Protocol):
    """One micro-batch's handling by a `BatchingHandler`: each record is handled by calling it (retries and
    dead letters as for any handler), and it may leave the part of its work that is cheaper done for many
    records at once (ingest: the embedding, the publishes, the processed marks) to `finish`."""

    async def __call__(self, record: Record) -> None: ...

    async def finish(self) -> Sequence[Record]:
        """The work left by the records handled; returns those whose part failed, in their order (they are
        delivered again one by one, each with its retries and dead letter). Raises only when nothing can be
        said of any record (the batch is then not committed, and comes again)."""


@runtime_checkable
class BatchingHandler(Protocol):
    """A record handler that can also take a micro-batch as a whole (``deliver_batch``)."""

    async def __call__(self, record: Record) -> None: ...

    def batch(self, records: Sequence[Record]) -> Batch:
        """A handling of ``records`` (the micro-batch, for work it can do for all of them at once up front)."""


def wrapped(handler: RecordHandler, wrap: Callable[[RecordHandler], RecordHandler]) -> RecordHandler:
    """``wrap(handler)`` (a step before a handler, as a bus opening sealed records does), keeping a batching
    handler batching: the step then also comes before each record of its batches."""
    return _WrappedBatching(handler, wrap) if isinstance(handler, BatchingHandler) else wrap(handler)


class _WrappedBatching:
    def __init__(self, handler: BatchingHandler, wrap: Callable[[RecordHandler], RecordHandler]) -> None:
        self._handler = handler
        self._wrap = wrap
        self._one = wrap(handler)

    async def __call__(self, record: Record) -> None:
        await self._one(record)

    def batch(self, records: Sequence[Record]) -> Batch:
        return _WrappedBatch(self._handler.batch(records), self._wrap)


class _WrappedBatch:
    def __init__(self, batch: Batch, wrap: Callable[[RecordHandler], RecordHandler]) -> None:
        self._batch = batch
        self._each = wrap(batch)

    async def __call__(self, record: Record) -> None:
        await self._each(record)

    async def finish(self) -> Sequence[Record]:
        return await self._batch.finish()


def ordering_group(key: str) -> str:
    """Records whose keys share this run one after another in a micro-batch: the key without its last "/"
    segment (one user's sessions, for <client>/<customer>/<user>/<session> keys; see EventBus.subscribe)."""
    return key.rpartition("/")[0] or key


async def deliver_batch(
    bus: EventBus,
    group: str,
    records: Sequence[Record],
    handler: RecordHandler,
    *,
    system: str,
    concurrency: int,
    attempts: int = 4,
    backoff_s: float = 0.2,
) -> None:
    """`deliver` each record of a micro-batch: the records of one ordering group in their order, one after
    the other, and up to ``concurrency`` groups at a time (so per-key order holds, as on one partition).
    Returns once every record was handled or dead-lettered, each with its own span, retries and reason; then
    the caller commits the whole batch. Raises when a dead-letter write failed (after the other groups
    finished; that group's later records are not attempted): the caller commits nothing and the batch comes
    again, its handled records included, which consumers skip by event_id.

    A `BatchingHandler` handles the batch through one `Batch`: its records as above, then `Batch.finish` once
    for all of them; a record whose finishing part failed is delivered again alone, with the plain handler
    (its writes are idempotent), before the batch is committed."""
    batch = handler.batch(records) if isinstance(handler, BatchingHandler) else None
    each: RecordHandler = batch if batch is not None else handler
    by_key: dict[str, list[Record]] = {}
    for record in records:
        by_key.setdefault(ordering_group(record.key), []).append(record)
    slots = asyncio.Semaphore(max(1, concurrency))

    async def in_order(chain: list[Record]) -> None:
        async with slots:
            for record in chain:
                await deliver(bus, group, record, each, system=system, attempts=attempts, backoff_s=backoff_s)

    outcomes = await asyncio.gather(*(in_order(chain) for chain in by_key.values()), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    if batch is None:
        return
    for record in await batch.finish():
        log.info("group %s: %s@%d/%d finishes alone", group, record.topic, record.partition, record.offset)
        await deliver(bus, group, record, handler, system=system, attempts=attempts, backoff_s=backoff_s)


async def _with_retries(
    bus: EventBus, group: str, record: Record, handler: RecordHandler, span: Span, attempts: int, backoff_s: float
) -> None:
    attempt = 0
    while True:
        attempt += 1
        started = time.perf_counter()
        try:
            await handler(record)
            _took(record, group, started, "ok")
            return
        except PermanentError as exc:
            # Retrying input that can never succeed only delays the records behind it.
            _took(record, group, started, "dead_letter")
            await _give_up(bus, group, record, span, exc, f"{_describe(exc)} (permanent)", attempt)
            return
        except Exception as exc:  # CancelledError is a BaseException: a stopping bus passes through
            if attempt >= attempts:
                _took(record, group, started, "dead_letter")
                reason = f"{_describe(exc)} (gave up after {attempt} attempts)"
                await _give_up(bus, group, record, span, exc, reason, attempt)
                return
            _took(record, group, started, "retry")
            span.record_exception(exc, attributes={"acm.delivery.attempt": attempt})
            delay = backoff_s * 2 ** (attempt - 1)
            log.info(
                "group %s: %s@%d/%d attempt %d failed (%s), retrying in %.2fs",
                group,
                record.topic,
                record.partition,
                record.offset,
                attempt,
                _describe(exc),
                delay,
            )
            await asyncio.sleep(delay)


def _took(record: Record, group: str, started: float, outcome: str) -> None:
    """acm.bus.handler.duration of one attempt (ok, retry, dead_letter)."""
    elapsed_ms = (time.perf_counter() - started) * 1000
    HANDLER_DURATION.record(elapsed_ms, {"topic": record.topic, "group": group, "outcome": outcome})


async def _give_up(
    bus: EventBus, group: str, record: Record, span: Span, exc: Exception, reason: str, attempts: int
) -> None:
    """The span ends as failed (the record did not reach its handler's goal), then the record is
    dead-lettered; if that raises, the exception also ends the span (recorded by the context manager)."""
    span.record_exception(exc, attributes={"acm.delivery.attempt": attempts})
    span.set_status(Status(StatusCode.ERROR, reason))
    span.set_attribute("acm.dead_letter.topic", topics.dead_letter(group))
    await dead_letter(bus, group, record, reason, attempts)


async def dead_letter(bus: EventBus, group: str, record: Record, reason: str, attempts: int) -> None:
    """Publish `record` (original bytes kept) to the group's dead-letter topic; raise if that fails."""
    failed_at = Timestamp()
    failed_at.FromDatetime(datetime.now(UTC))
    letter = events_pb2.DeadLetter(
        group=group,
        topic=record.topic,
        key=record.key,
        value=record.value,
        reason=reason,
        attempts=attempts,
        failed_at=failed_at,
        event_id=_event_id(record.value),
    )
    target = topics.dead_letter(group)
    try:
        await bus.publish(target, record.key, letter.SerializeToString())
    except Exception:
        # The caller must not commit the offset: the record comes back and nothing is lost.
        log.error(
            "group %s: could not dead-letter %s@%d/%d to %s",
            group,
            record.topic,
            record.partition,
            record.offset,
            target,
            exc_info=True,
        )
        raise
    DEAD_LETTERS.add(1, {"topic": record.topic, "group": group})
    log.warning(
        "group %s: dead-lettered %s@%d/%d (key %r, event_id %r) to %s: %s",
        group,
        record.topic,
        record.partition,
        record.offset,
        record.key,
        letter.event_id,
        target,
        reason,
    )


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _envelope(value: bytes) -> events_pb2.Envelope | None:
    """The value as an Envelope, or None if it is not one (malformed input is dead-lettered too)."""
    try:
        return events_pb2.Envelope.FromString(value)
    except (DecodeError, ValueError):
        return None


def _event_id(value: bytes) -> str:
    env = _envelope(value)
    return env.event_id if env is not None else ""


class Worker:
    """One subscription's consumer task (the embedded log's; FastStream runs Kafka's). stop() lets the
    record being handled finish (so its offset is committed) but does not wait for new records; a handler
    stuck longer than the timeout is cancelled and its record, not committed, is redelivered later."""

    def __init__(self, name: str, run: Callable[[Worker], Awaitable[None]]) -> None:
        self.name = name
        self.stopping = False
        self._run = run
        self._busy = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.stopping = False
        self._task = asyncio.create_task(self._main(), name=self.name)

    @contextmanager
    def busy(self) -> Iterator[None]:
        """Wrap the handling + commit of one record: stop() waits for it instead of cancelling."""
        self._busy = True
        try:
            yield
        finally:
            self._busy = False

    async def stop(self, timeout_s: float) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        self.stopping = True
        if not self._busy:
            task.cancel()  # idle (polling or waiting): nothing to finish
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
        if not done:
            log.warning("%s: handler still running after %.1fs, cancelling it", self.name, timeout_s)
            task.cancel()
            await asyncio.wait({task})

    async def _main(self) -> None:
        try:
            await self._run(self)
        except asyncio.CancelledError:
            pass  # only stop() cancels us
        except Exception:
            log.exception("%s: consumer loop crashed", self.name)
