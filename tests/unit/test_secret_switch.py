"""ACM_SECRET_MODEL: the learned second opinion for secrets is on by default in the gateway and ingest, and off
means the rules alone, in both places a turn is redacted."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from acm.domain.models import Job, Role, Turn
from acm.domain.schema import AgentSchema, default_schema
from acm.domain.scope import Scope
from acm.ports.stores import ApiKey
from acm_gateway.settings import GatewaySettings
from acm_gateway.usecases import AcceptTurn
from acm_ingest.pipeline import pii_rules, plan_turn
from acm_ingest.settings import IngestSettings

SCOPE = Scope("c", "acme", "u1", "agent", "s1")
# No rule has a cue for this phrasing; only the model redacts it (tests/unit/test_secret_model.py).
SAID = "the wifi one is Harbor2291!"
RULED = "my card is 4539 1488 0343 6467"  # the rules' own: redacted with the model off too


def _turn(content: str) -> Turn:
    return Turn(
        turn_id="t1", scope=SCOPE, role=Role.USER, content=content, occurred_at=datetime(2026, 12, 1, tzinfo=UTC)
    )


@pytest.mark.parametrize(("env", "expected"), [(None, True), ("false", False), ("true", True)])
def test_both_services_read_acm_secret_model(monkeypatch: pytest.MonkeyPatch, env: str | None, expected: bool) -> None:
    if env is None:
        monkeypatch.delenv("ACM_SECRET_MODEL", raising=False)
    else:
        monkeypatch.setenv("ACM_SECRET_MODEL", env)
    ingest = IngestSettings(database_url="sqlite://", bus_url="embedded://x", cache_url="memory://")
    gateway = GatewaySettings(
        database_url="sqlite://", bus_url="embedded://x", retrieve_addr="x:1", architect_addr="x:2", cache_url="m://"
    )
    assert ingest.secret_model is expected and gateway.secret_model is expected


@dataclass
class _Published:
    turns: list[Turn] = field(default_factory=list)

    async def turn_received(self, key: ApiKey, turn: Turn, job_id: str, event_id: str, traceparent: str) -> None:
        self.turns.append(turn)

    async def forget_requested(self, *args: object) -> None:
        raise AssertionError("not a Forget")


class _Jobs:
    async def create(self, job: Job) -> None:
        pass


class _Schemas:
    async def latest(self, scope: Scope) -> AgentSchema:
        return default_schema(scope.agent_id)


async def _published(secret_model: bool, content: str) -> str:
    events = _Published()
    accept = AcceptTurn(events, _Jobs(), _Schemas(), 65536, secret_model)  # type: ignore[arg-type]
    key = ApiKey(key_id="k", client_id="c", key_hash="h", name="test", created_at=datetime(2026, 12, 1, tzinfo=UTC))
    await accept(key, _turn(content), "e1", "")
    [turn] = events.turns
    return turn.content


async def test_gateway_off_publishes_what_only_the_model_would_redact() -> None:
    assert "Harbor2291!" not in await _published(True, SAID)
    assert await _published(False, SAID) == SAID
    assert "4539" not in await _published(False, RULED)


def test_ingest_off_plans_with_the_rules_alone() -> None:
    schema = default_schema("agent")
    assert pii_rules(schema).secret_model and not pii_rules(schema, secret_model=False).secret_model
    on = plan_turn(_turn(SAID), schema, frozenset())
    off = plan_turn(_turn(SAID), schema, frozenset(), secret_model=False)
    assert on.redactions == {"secret": 1} and "Harbor2291!" not in on.text
    assert not off.redactions and "Harbor2291!" in off.text
    ruled = plan_turn(_turn(RULED), schema, frozenset(), secret_model=False)
    assert ruled.redactions == {"card": 1}
