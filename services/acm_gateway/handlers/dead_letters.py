"""acm.dlq.<group>.v1 → the gateway's dead letters (ListDeadLetters): where, when, why and how large each event a
consumer gave up on was, never the event itself (it can hold a user's data). The letter's id is the dead-letter
record's own position, so a redelivery is the same row (insert if absent); the offset is committed after the
write (acm.adapters.delivery)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC

from google.protobuf.message import DecodeError

from acm.convert import fields_of
from acm.ports.bus import PermanentError, Record
from acm.ports.stores import DeadLetterEntry, DeadLetterRepo
from acm.v1 import common_pb2, events_pb2

GROUP = "gateway-dead-letters"  # one group for every replica: each letter is kept once
# What an entry takes as it is from the DeadLetter, and from the scope its event claims.
_LETTER_FIELDS = ("group", "topic", "key", "reason", "attempts", "event_id")
_SCOPE_FIELDS = ("client_id", "customer_id", "user_id", "session_id")


def _scope_of(value: bytes) -> common_pb2.Scope:
    """The scope the event claims (the envelope's scope is in clear even when its body is sealed); empty when the
    event is not an envelope at all (then no client's admin lists it)."""
    try:
        return events_pb2.Envelope.FromString(value).scope
    except (DecodeError, ValueError):
        return common_pb2.Scope()


@dataclass
class DeadLetterHandler:
    letters: DeadLetterRepo

    async def __call__(self, record: Record) -> None:
        try:
            letter = events_pb2.DeadLetter.FromString(record.value)
        except (DecodeError, ValueError) as exc:
            raise PermanentError(f"not an acm.v1.DeadLetter: {exc}") from exc
        scope = _scope_of(letter.value)
        await self.letters.add(
            DeadLetterEntry(
                letter_id=f"{record.topic}/{record.partition}/{record.offset}",
                **fields_of(letter, _LETTER_FIELDS),
                **fields_of(scope, _SCOPE_FIELDS),
                size_bytes=len(letter.value),
                failed_at=letter.failed_at.ToDatetime(tzinfo=UTC),
            )
        )
