"""acm.turns.v1 → memories. Verifies the envelope's signature and is idempotent on event_id. A turn it cannot
process fails its job (acm.jobs.v1); else the use case publishes what it wrote with the job's counts, and retrieve
reports the job DONE once that is retrievable.

A micro-batch (the subscription's concurrency above 1) goes through `TurnsBatch`: one processed-events query
for the batch; each turn's writes as it is delivered, its facts' vectors asked for at once (requests waiting
while an embedder call runs go as the next one: one ONNX batch for several turns, on the embedding thread while
the next turns' store round trips go on); then, for all of them, their events (one session's in order, sessions
at once) and one processed-events statement. Only then is the batch committed (acm.adapters.delivery.
deliver_batch), so a turn is acknowledged after its writes and its event; a turn whose event could not go out
is delivered again alone (its writes are idempotent)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from acm.auth import verify_envelope
from acm.convert import InvalidTurn, turn_from_pb
from acm.domain.models import JobStatus, Turn
from acm.domain.scope import Action, Scope
from acm.envelopes import decode
from acm.metrics import job_reached
from acm.ports.bus import Record
from acm.ports.stores import ApiKey
from acm.v1 import events_pb2
from acm_ingest import GROUP
from acm_ingest.handlers.job_event import JobEventHandler
from acm_ingest.usecases import IngestTurn, TurnWrites

log = logging.getLogger("acm.ingest")
CLEAR_TURN = (
    "turn body sent in clear, and ACM_REQUIRE_SEALED_TURNS is on: seal it with the scope's key from the gateway's "
    "GetSealingKey before signing (acm.sealing.seal_for_publishing; docs/privacy.md)"
)


class ClearTurn(ValueError):
    """A direct publisher's turn with a clear body, while sealed turns are required."""


@dataclass
class TurnsHandler(JobEventHandler):
    body = "turn_received"
    ingest: IngestTurn
    max_turn_bytes: int
    # ACM_REQUIRE_SEALED_TURNS: a turn whose body came in clear (a direct publisher that did not seal it) is refused.
    require_sealed: bool = False

    def action(self, env: events_pb2.Envelope) -> Action:
        return Action.INGEST

    async def handle(self, env: events_pb2.Envelope, scope: Scope, key: ApiKey) -> None:
        turn = await self.turn(env, scope)
        counts = await self.ingest(turn, env.turn_received.job_id, env.traceparent)
        job_reached("ingest", JobStatus.DONE)  # ingest's part is done; retrieve reports the job DONE
        log.debug("ingested turn %s (job %s): %s", turn.turn_id, env.turn_received.job_id, counts)

    async def turn(self, env: events_pb2.Envelope, scope: Scope) -> Turn:
        """The envelope's turn; one that is not valid, or is clear when sealed turns are required, fails its job
        and goes to the dead letters."""
        body = env.turn_received
        if self.require_sealed and not env.sealed:  # `sealed` stays set on a delivered (opened) envelope
            await self.fail(scope, body.job_id, "ingest", ClearTurn(CLEAR_TURN))
        try:
            return turn_from_pb(body.turn, scope, self.max_turn_bytes, body.turn.turn_id or env.event_id)
        except InvalidTurn as exc:
            await self.fail(scope, body.job_id, "ingest", exc)

    def batch(self, records: Sequence[Record]) -> TurnsBatch:
        return TurnsBatch(self, records)


@dataclass
class _Written:
    record: Record
    event_id: str
    turn: TurnWrites
    embedded: asyncio.Future[None]  # its facts' vectors, computed while the batch goes on


class TurnsBatch:
    """One micro-batch of turns (acm.adapters.delivery.Batch)."""

    def __init__(self, handler: TurnsHandler, records: Sequence[Record]) -> None:
        self._h = handler
        self._records = records
        self._seen: set[str] | None = None  # the batch's events applied before, or written in this batch
        self._written: list[_Written] = []

    async def __call__(self, record: Record) -> None:
        h = self._h
        env, scope = decode(record.value, h.body)
        if self._seen is None:
            self._seen = await h.processed.seen_among(GROUP, _event_ids(self._records))
        if env.event_id in self._seen:
            return
        await verify_envelope(env, scope, h.keys, h.audit, h.action(env))
        turn = await h.turn(env, scope)
        written = await h.ingest.write(turn, env.turn_received.job_id, env.traceparent)
        self._seen.add(env.event_id)  # the same event twice in a batch is written once
        self._written.append(_Written(record, env.event_id, written, asyncio.ensure_future(h.ingest.embed([written]))))

    async def finish(self) -> list[Record]:
        written, self._written = self._written, []
        if not written:
            return []
        h = self._h
        outcomes = await asyncio.gather(*(w.embedded for w in written), return_exceptions=True)
        if any(isinstance(o, BaseException) for o in outcomes):  # each turn again alone: retries, dead letter
            log.warning("embedding a micro-batch of %d turns failed (%r); each again alone", len(written), outcomes)
            return [w.record for w in written]
        chains: dict[str, list[_Written]] = {}
        for w in written:  # in the order they were written: one session's in its order
            chains.setdefault(w.turn.scope.session_key, []).append(w)
        failed = {id(w) for lost in await asyncio.gather(*(self._publish(c) for c in chains.values())) for w in lost}
        published = [w for w in written if id(w) not in failed]
        try:
            await h.processed.mark_all(GROUP, [w.event_id for w in published])
        except Exception as exc:  # unmarked: each again alone (its event goes again, deduplicated downstream)
            log.warning("marking %d turns processed failed (%r); each again alone", len(published), exc)
            return [w.record for w in written]
        for w in published:
            job_reached("ingest", JobStatus.DONE)
            log.debug("ingested turn (job %s): %s", w.turn.job_id, w.turn.counts)
        return [w.record for w in written if id(w) in failed]

    async def _publish(self, chain: list[_Written]) -> list[_Written]:
        """One session's events in order; from the first that fails, it and the rest (to go again, in order)."""
        for at, w in enumerate(chain):
            try:
                await self._h.ingest.publish(w.turn)
            except Exception as exc:
                log.warning("publishing turn %s's event failed (%r)", w.event_id, exc)
                return chain[at:]
        return []


def _event_ids(records: Sequence[Record]) -> list[str]:
    """The records' event ids (in the clear on a sealed envelope too); a record that is no envelope has none (its
    own delivery dead-letters it)."""
    ids = []
    for record in records:
        try:
            ids.append(events_pb2.Envelope.FromString(record.value).event_id)
        except DecodeError:
            continue
    return ids
