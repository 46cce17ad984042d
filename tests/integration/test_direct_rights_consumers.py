"""Every consumer of an event an agent publishes itself keeps the signing key to the gateway's right of the same
request (issue 18, docs/security.md "Direct publishers"), on the embedded log and on the real Kafka + Postgres
(every service in one process over them, as test_direct_rights.py), with an agent key of customer acme:

- a turn for customer globex from a first-seen agent: the architect's dead-letter topic gets it with the reason
  (Ingest's right), its audit log a `request.denied`, and the agent has no schema; the same key's turn for acme
  from another first-seen agent gives that agent its schema;
- a prefetch signal for a globex session anticipate knows: anticipate's dead-letter topic (Fetch's right), and no
  pool is built from it; the same key's signal for its acme session builds one;
- a signed compaction request for a globex session over the request's budget: compact's dead-letter topic
  (Compact's right), and nothing compacted; the same key's request for its acme session compacts it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest

from acm import topics
from acm.auth import key_id_of
from acm.domain.compaction.record import CompactionRecord
from acm.domain.scope import Grant, KeyRole, Scope
from acm.prefetch_state import read_generations
from acm.read.pool import PrefetchPool, load_pool
from acm.v1 import events_pb2
from acm_cli.embedded import DEV_CLIENT
from acm_client import AsyncClient
from tests.integration.test_direct_rights import key_for, publish_direct, publish_turn, wait_stored
from tests.integration.test_direct_sealing import MODES, Running, started
from tests.support.events import collect_dead_letters, turn_envelope
from tests.unit.test_direct_rights_consumers import compaction_request, prefetch_signal

ACME = Scope(DEV_CLIENT, "acme", "alice", "helpdesk", "s1")
GLOBEX = Scope(DEV_CLIENT, "globex", "bob", "helpdesk", "s1")
T = TypeVar("T")
TURNS = (
    "I ordered a blue standing desk last Monday and it arrived with a cracked leg.",
    "The courier said the replacement leg ships from the Rotterdam warehouse on Friday.",
    "Please keep the invoice number INV-5521 with the ticket, my manager needs it for the refund.",
)


async def dead_letter_reasons(run: Running, group: str, events: list[events_pb2.Envelope]) -> dict[str, str]:
    """The reasons ``group``'s dead-letter topic gives for ``events``, by event id (waits until each has one)."""
    wanted = {env.event_id for env in events}
    letters = await collect_dead_letters(
        run.reader(),
        topics.dead_letter(group),
        f"test-{uuid.uuid4().hex}",
        lambda found: wanted <= {letter.event_id for letter in found},
        60,
    )
    return {letter.event_id: letter.reason for letter in letters if letter.event_id in wanted}


async def until(probe: Callable[[], Awaitable[T | None]], what: str, timeout_s: float = 60.0) -> T:
    """``probe``'s first answer that is not None (nothing to wait on from here: polled)."""
    async with asyncio.timeout(timeout_s):
        # What is waited for happens in other services' stores: there is no event to wait on here.
        while (found := await probe()) is None:  # noqa: ASYNC110
            await asyncio.sleep(0.2)
    assert found is not None, what
    return found


async def denied_in_audit(run: Running, service: str, where: Scope, event_id: str) -> bool:
    return any(
        e.action == "request.denied" and event_id in e.detail
        for e in await run.acm.stores[service].audit.list(where, 100)
    )


async def session_with_turns(run: Running, admin: str, reader: AsyncClient, where: Scope) -> None:
    """A few turns in ``where``'s session (through ingest, signed with the admin key), until retrieve has them."""
    for text in TURNS:
        await publish_turn(run, admin, where, text)
    await wait_stored(reader, where, "INV-5521")


async def current_pool(run: Running, where: Scope) -> PrefetchPool:
    """The session's pool once anticipate built it at the scope's current write generations."""

    async def probe() -> PrefetchPool | None:
        pool = await load_pool(run.acm.cache, where)
        current = pool is not None and list(pool.generations) == await read_generations(run.acm.cache, where)
        return pool if current else None

    return await until(probe, f"a current pool for {where.session_key}")


def signal(where: Scope) -> events_pb2.Envelope:
    return prefetch_signal(where, "replacement leg courier")


def compaction(where: Scope) -> events_pb2.Envelope:
    return compaction_request(where, 60)  # the three turns are well over its soft limit


@pytest.mark.parametrize("mode", MODES)
async def test_an_agent_key_gets_no_schema_pool_or_compaction_for_another_customer(
    mode: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async with started(mode, tmp_path, request) as run:
        agent = await key_for(run.acm, Grant(KeyRole.AGENT, ("acme",)))
        admin = await key_for(run.acm, Grant(KeyRole.ADMIN))
        said = f"key {key_id_of(agent)} may not"
        schemas = run.acm.stores["architect"].schemas

        # Architect: a first-seen agent's turn for another customer gives it no schema.
        stranger, own = f"bot-{uuid.uuid4().hex[:6]}", f"bot-{uuid.uuid4().hex[:6]}"
        denied_turn = await publish_direct(
            run, topics.TURNS, turn_envelope(replace(GLOBEX, agent_id=stranger), "hello", "t-x", "j-x"), agent
        )
        reasons = await dead_letter_reasons(run, "architect", [denied_turn])
        assert f"{said} ingest for customer 'globex'" in reasons[denied_turn.event_id]
        assert await schemas.latest(GLOBEX, stranger) is None
        assert await denied_in_audit(run, "architect", GLOBEX, denied_turn.event_id)
        await publish_direct(run, topics.TURNS, turn_envelope(replace(ACME, agent_id=own), "hi", "t-o", "j-o"), agent)
        schema = await until(lambda: schemas.latest(ACME, own), f"agent {own}'s schema")
        assert schema.version == 1

        async with AsyncClient(run.addr, admin) as reader:
            for where in (GLOBEX, ACME):
                await session_with_turns(run, admin, reader, where)

        # Anticipate: another customer's known session gets no pool from the key's signal.
        await current_pool(run, GLOBEX)
        accepted = run.acm.anticipate.signals.accepted
        denied_signal = await publish_direct(run, topics.PREFETCH_SIGNALS, signal(GLOBEX), agent)
        reasons = await dead_letter_reasons(run, "anticipate", [denied_signal])
        assert f"{said} fetch for customer 'globex'" in reasons[denied_signal.event_id]
        pool = await load_pool(run.acm.cache, GLOBEX)
        assert pool is not None and "signal" not in pool.predicted_from
        assert run.acm.anticipate.signals.accepted == accepted
        assert await denied_in_audit(run, "anticipate", GLOBEX, denied_signal.event_id)
        await current_pool(run, ACME)
        await publish_direct(run, topics.PREFETCH_SIGNALS, signal(ACME), agent)

        async def signalled() -> PrefetchPool | None:
            pool = await load_pool(run.acm.cache, ACME)
            return pool if pool is not None and "signal" in pool.predicted_from else None

        await until(signalled, "a pool built from the acme signal")

        # Compact: another customer's session, over the request's budget, is not compacted.
        working = run.acm.stores["compact"].working
        denied_compaction = await publish_direct(run, topics.COMPACTION_REQUESTS, compaction(GLOBEX), agent)
        reasons = await dead_letter_reasons(run, "compact", [denied_compaction])
        assert f"{said} compact for customer 'globex'" in reasons[denied_compaction.event_id]
        assert await working.compactions(GLOBEX) == [] and await working.get(GLOBEX) is None
        assert await denied_in_audit(run, "compact", GLOBEX, denied_compaction.event_id)
        await publish_direct(run, topics.COMPACTION_REQUESTS, compaction(ACME), agent)
        [record] = await until(lambda: _compactions(run, ACME), "the acme session's compaction")
        assert record.outcome in ("compacted", "degraded"), record


async def _compactions(run: Running, where: Scope) -> list[CompactionRecord] | None:
    found = await run.acm.stores["compact"].working.compactions(where)
    return list(found) or None
