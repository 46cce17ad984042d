"""Event bus port. Delivery is at-least-once: a record is acknowledged (its offset committed) only
after its handler returned, or after it was safely written to the group's dead-letter topic."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Record:
    topic: str
    key: str
    value: bytes
    partition: int = 0
    offset: int = 0


# A consumer: raise PermanentError for input that can never succeed (straight to the dead-letter
# topic); any other exception is retried a few times first.
RecordHandler = Callable[[Record], Awaitable[None]]


class PermanentError(Exception):
    """This record can never be processed (malformed, unauthenticated, invalid)."""


class BusUnavailable(Exception):
    """The bus could not take the record in time (broker unreachable, embedded log locked). The record
    was not acknowledged; it may still arrive later, so a retry can duplicate it (consumers are
    idempotent on event_id)."""


class EventBus(Protocol):
    async def publish(self, topic: str, key: str, value: bytes) -> None:
        """Returns once the record is durable (broker ack / committed to disk); raises otherwise."""

    def subscribe(
        self, topic: str, group: str, handler: RecordHandler, *, from_now: bool = False, concurrency: int = 1
    ) -> None:
        """Register before start(); each group gets every record of the topic once (at least). A group seen
        for the first time starts at the beginning of the topic, or with ``from_now`` after the records
        already there (for hints that are worthless late, e.g. each gateway replica's warm-up group).

        ``concurrency`` > 1 takes records in micro-batches (what one poll returns): records of one ordering
        group are handled one after the other, in order, up to ``concurrency`` groups at a time, and the batch's offsets
        are committed once every record in it was handled or dead-lettered (acm.adapters.delivery.
        deliver_batch). A handler's IO waits then overlap, and its own work can batch across records (ingest
        embeds the turns of a batch together). 1: one record at a time, committed after each. A key's ordering
        group is the key without its last "/" segment: ACM's keys are <client>/<customer>/<user>/<session>
        (Scope.session_key), so one user's records never run at the same time (a user's facts are
        read-modify-write: mentions, superseding), while different users' do."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...
