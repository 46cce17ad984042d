"""verify_envelope checks the signing key's rights as the gateway does (acm.domain.scope.denial), and ingest's
handlers ask it for the gateway's action of the same request. Against real servers: tests/integration/
test_direct_rights.py."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from acm.auth import verify_envelope
from acm.domain.scope import Action, Grant, KeyRole, Scope, Tier, edit_denial
from acm.envelopes import envelope, key_hash, sign
from acm.ports.bus import PermanentError
from acm.ports.stores import ApiKey, AuditEntry
from acm.v1 import events_pb2
from acm_ingest.handlers.memory_edits import MemoryEditsHandler
from acm_ingest.handlers.turns import TurnsHandler

SECRET = "acm_k1_secret"
ACME_BOB = Scope("c1", "acme", "bob", "helpdesk", "s1")
GLOBEX_BOB = Scope("c1", "globex", "bob", "helpdesk", "s1")


class Keys:
    def __init__(self, grant: Grant) -> None:
        self.key = ApiKey("k1", "c1", key_hash(SECRET), "test", datetime(2026, 1, 1, tzinfo=UTC), grant=grant)

    async def by_id(self, client_id: str, key_id: str) -> ApiKey | None:
        return self.key if (client_id, key_id) == ("c1", "k1") else None


class Audit:
    def __init__(self) -> None:
        self.entries: list[tuple[str, str, str]] = []

    async def record(self, client_id: str, action: str, detail: str) -> None:
        self.entries.append((client_id, action, detail))

    async def list(self, scope: Scope, limit: int = 100) -> list[AuditEntry]:
        raise NotImplementedError  # never read here


def signed(scope: Scope) -> events_pb2.Envelope:
    env = envelope(scope)
    env.turn_received.job_id = "j1"
    sign(env, "k1", key_hash(SECRET))
    return env


@pytest.mark.parametrize(
    ("grant", "scope"),
    [
        (Grant(), GLOBEX_BOB),
        (Grant(KeyRole.AGENT, ("acme",)), ACME_BOB),
        (Grant(KeyRole.AGENT, ("acme",), ("bob",)), ACME_BOB),
    ],
    ids=["admin-any-customer", "agent-own-customer", "agent-own-user"],
)
async def test_a_key_within_its_rights_verifies(grant: Grant, scope: Scope) -> None:
    audit = Audit()
    await verify_envelope(signed(scope), scope, Keys(grant), audit, Action.INGEST)
    assert audit.entries == []


@pytest.mark.parametrize(
    ("grant", "scope", "action", "said"),
    [
        (Grant(KeyRole.AGENT, ("acme",)), GLOBEX_BOB, Action.INGEST, "may not ingest for customer 'globex'"),
        (Grant(KeyRole.AGENT, ("acme",), ("alice",)), ACME_BOB, Action.INGEST, "customer 'acme', user 'bob'"),
        (Grant(KeyRole.AGENT, ("acme",)), GLOBEX_BOB, Action.FORGET_USER, "may not forget_user"),
    ],
    ids=["other-customer", "other-user", "delete-in-other-customer"],
)
async def test_a_key_outside_its_rights_is_permanent_and_audited(
    grant: Grant, scope: Scope, action: Action, said: str
) -> None:
    audit = Audit()
    env = signed(scope)
    with pytest.raises(PermanentError, match="key k1 may not") as raised:
        await verify_envelope(env, scope, Keys(grant), audit, action)
    assert said in str(raised.value)
    [(client, what, detail)] = audit.entries
    assert (client, what) == ("c1", "request.denied")
    assert "key k1 (agent)" in detail and env.event_id in detail


async def test_without_an_action_only_the_signature_counts() -> None:
    # A caller that names no action (e.g. a consumer of a service-only topic) asks only who signed.
    await verify_envelope(signed(GLOBEX_BOB), GLOBEX_BOB, Keys(Grant(KeyRole.AGENT, ("acme",))), Audit())


def edit(kind: str) -> events_pb2.Envelope:
    env = envelope(ACME_BOB)
    getattr(env.memory_edit_requested, kind).SetInParent()
    return env


@pytest.mark.parametrize(
    ("kind", "action"),
    [("update", Action.INGEST), ("imported", Action.INGEST), ("delete", Action.FORGET_USER)],
)
def test_a_memory_edit_asks_for_the_gateways_right_of_the_same_request(kind: str, action: Action) -> None:
    # Called unbound: the action depends on the event only, not on the handler's stores.
    assert MemoryEditsHandler.action(None, edit(kind)) is action  # type: ignore[arg-type]


def test_a_turn_asks_for_ingest() -> None:
    assert TurnsHandler.action(None, signed(ACME_BOB)) is Action.INGEST  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("grant", "tier", "denied"),
    [
        (Grant(), Tier.CUSTOMER, False),
        (Grant(), Tier.CLIENT, False),
        (Grant(KeyRole.AGENT, ("acme",)), Tier.USER, False),
        (Grant(KeyRole.AGENT, ("acme",)), Tier.CUSTOMER, True),
        (Grant(KeyRole.AGENT, ("acme",)), Tier.CLIENT, True),
    ],
)
def test_only_an_admin_key_changes_a_shared_tier_memory(grant: Grant, tier: Tier, denied: bool) -> None:
    reason = edit_denial(grant, tier, "update", "m1")
    assert bool(reason) is denied
    if denied:
        assert f"memory 'm1' is {tier}-tier: use an admin key" in reason
