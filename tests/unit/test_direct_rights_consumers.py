"""The architect's turns, anticipate's prefetch signals and compact's compaction requests ask verify_envelope for the
gateway's right of the same request (Ingest, Fetch, Compact): a key outside it makes the record permanent (dead
letter), audited as request.denied, and the handler's step never runs. Compact's requests from ingest, unsigned as
every service's own events, are handled as before. Against real servers: tests/integration/
test_direct_rights_consumers.py."""

from __future__ import annotations

from typing import Any, cast

import pytest

from acm.domain.scope import Grant, KeyRole, Scope
from acm.envelopes import envelope, key_hash, sign
from acm.ports.bus import PermanentError, Record
from acm.v1 import events_pb2
from acm_anticipate.handlers.prefetch_signals import PrefetchSignalsHandler
from acm_anticipate.usecases import WarmSession
from acm_architect.handlers.turns import TurnsHandler
from acm_architect.usecases import EnsureAgent
from acm_compact.handlers.compaction_requests import CompactionRequestsHandler
from acm_compact.usecases import CompactSession
from tests.unit.test_direct_rights import ACME_BOB, GLOBEX_BOB, SECRET, Audit, Keys

AGENT = Grant(KeyRole.AGENT, ("acme",))


class Step:
    """Stands for a handler's use case (EnsureAgent, WarmSession, CompactSession): records every call."""

    def __init__(self) -> None:
        self.calls: list[Scope] = []

    async def __call__(self, scope: Scope, *args: Any, **kwargs: Any) -> None:
        self.calls.append(scope)

    async def known(self, scope: Scope) -> bool:
        return True

    async def if_due(self, scope: Scope, budget_tokens: int, turn_id: str = "") -> None:
        self.calls.append(scope)


class NoKeys:
    """A key source that must not be asked (an unsigned service event)."""

    async def by_id(self, client_id: str, key_id: str) -> None:
        raise AssertionError(f"key {key_id!r} looked up for an unsigned event")


def turn(scope: Scope) -> events_pb2.Envelope:
    env = envelope(scope)
    env.turn_received.job_id = "j1"
    return env


def prefetch_signal(scope: Scope, query: str = "refund") -> events_pb2.Envelope:
    env = envelope(scope)
    env.prefetch_signal.query = query
    return env


def compaction_request(scope: Scope, budget_tokens: int = 300) -> events_pb2.Envelope:
    env = envelope(scope)
    env.compaction_requested.budget_tokens = budget_tokens
    return env


def handler(kind: str, step: Step, keys: object, audit: Audit) -> Any:
    if kind == "turn":
        return TurnsHandler(cast(EnsureAgent, step), cast(Any, keys), audit)
    if kind == "prefetch_signal":
        return PrefetchSignalsHandler(cast(WarmSession, step), cast(Any, keys), audit)
    return CompactionRequestsHandler(cast(CompactSession, step), cast(Any, keys), audit)


BUILD = {"turn": turn, "prefetch_signal": prefetch_signal, "compaction_request": compaction_request}
ACTIONS = {"turn": "ingest", "prefetch_signal": "fetch", "compaction_request": "compact"}


def record(env: events_pb2.Envelope, signed: bool = True) -> Record:
    if signed:
        sign(env, "k1", key_hash(SECRET))
    return Record("t", "k", env.SerializeToString())


@pytest.mark.parametrize("kind", list(BUILD))
async def test_another_customers_agent_key_is_denied_and_nothing_runs(kind: str) -> None:
    step, audit = Step(), Audit()
    env = BUILD[kind](GLOBEX_BOB)
    with pytest.raises(PermanentError, match=f"key k1 may not {ACTIONS[kind]} for customer 'globex'"):
        await handler(kind, step, Keys(AGENT), audit)(record(env))
    assert step.calls == []
    [(client, what, detail)] = audit.entries
    assert (client, what) == ("c1", "request.denied") and env.event_id in detail


@pytest.mark.parametrize("kind", list(BUILD))
@pytest.mark.parametrize("grant", [AGENT, Grant()], ids=["agent-own-customer", "admin"])
async def test_a_key_within_its_rights_runs_the_step(kind: str, grant: Grant) -> None:
    step, audit = Step(), Audit()
    await handler(kind, step, Keys(grant), audit)(record(BUILD[kind](ACME_BOB)))
    assert step.calls == [ACME_BOB] and audit.entries == []


async def test_ingests_unsigned_compaction_request_is_handled_without_a_key() -> None:
    step, audit = Step(), Audit()
    await handler("compaction_request", step, NoKeys(), audit)(record(compaction_request(GLOBEX_BOB), signed=False))
    assert step.calls == [GLOBEX_BOB] and audit.entries == []


async def test_a_compaction_request_with_a_signature_but_no_key_id_does_not_verify() -> None:
    step, audit = Step(), Audit()
    env = compaction_request(ACME_BOB)
    env.signature = "00" * 32
    with pytest.raises(PermanentError, match="signature does not verify"):
        await handler("compaction_request", step, Keys(AGENT), audit)(record(env, signed=False))
    assert step.calls == [] and [what for _, what, _ in audit.entries] == ["event.rejected"]


@pytest.mark.parametrize("kind", ["turn", "prefetch_signal"])
async def test_an_unsigned_turn_or_signal_is_still_refused(kind: str) -> None:
    # Agents publish these topics: unlike compact's, no unsigned event on them is a service's.
    step, audit = Step(), Audit()
    with pytest.raises(PermanentError, match="signature does not verify"):
        await handler(kind, step, Keys(AGENT), audit)(record(BUILD[kind](ACME_BOB), signed=False))
    assert step.calls == []
