"""The gateway's PoolReady handler: warms for a current hint, skips a late one, dead-letters garbage."""

from __future__ import annotations

from datetime import timedelta

import pytest

from acm.domain.models import utcnow
from acm.domain.scope import Scope
from acm.envelopes import envelope
from acm.ports.bus import PermanentError, Record
from acm_gateway.handlers.prefetch_pools import PoolReadyHandler
from tests.support.clock import ShiftedClock

SCOPE = Scope("c1", "acme", "alice", "bot", "s1")


class Warm:
    def __init__(self) -> None:
        self.calls: list[tuple[Scope, str]] = []

    async def __call__(self, scope: Scope, version: str) -> None:
        self.calls.append((scope, version))


def _hint(age_s: float, version: str = "v7") -> Record:
    env = envelope(SCOPE, occurred_at=utcnow() - timedelta(seconds=age_s))
    env.pool_ready.version = version
    return Record(topic="acm.prefetch.pools.v1", key=SCOPE.session_key, value=env.SerializeToString())


async def test_a_current_hint_warms_its_scope_and_version() -> None:
    warm = Warm()
    await PoolReadyHandler(warm)(_hint(0.5))
    assert warm.calls == [(SCOPE, "v7")]


async def test_a_late_hint_is_skipped_and_counted() -> None:
    warm = Warm()
    handler = PoolReadyHandler(warm, max_age_s=30)
    await handler(_hint(31))
    assert warm.calls == [] and handler.skipped_late == 1


async def test_a_hint_is_late_by_the_handlers_clock() -> None:
    warm, clock = Warm(), ShiftedClock()
    handler = PoolReadyHandler(warm, max_age_s=30, now=clock)
    hint = _hint(0)
    clock.advance(29)
    await handler(hint)
    clock.advance(2)
    await handler(hint)
    assert warm.calls == [(SCOPE, "v7")] and handler.skipped_late == 1


async def test_a_record_that_is_not_a_pool_hint_is_a_permanent_error() -> None:
    env = envelope(SCOPE)
    env.schema_changed.agent_id = "bot"
    with pytest.raises(PermanentError, match="pool_ready"):
        await PoolReadyHandler(Warm())(Record(topic="t", key="k", value=env.SerializeToString()))
