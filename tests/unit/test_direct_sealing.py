"""A direct publisher's sealing (acm.sealing.seal_for_publishing), the gateway's GetSealingKey use case
(acm_gateway.sealing_keys) and the Python SDK's keeping of the keys (acm_client._calls.SealingKeys); end to end
against the real buses: tests/integration/test_direct_sealing.py."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest

from acm.domain.errors import Unavailable
from acm.domain.scope import Scope
from acm.envelopes import envelope, sign, signature_valid
from acm.ports.bus import PermanentError
from acm.sealing import DataKey, Owner, key_owner, open_with, seal_for_publishing
from acm.v1 import common_pb2, events_pb2
from acm_client import Scope as SdkScope
from acm_client import SealingKey as SdkSealingKey
from acm_client._calls import SealingKeys
from acm_gateway.sealing_keys import IssueSealingKey

ALICE = Scope("c1", "acme", "alice", "bot", "s1")
NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
SECRET = os.urandom(32)


def turn(scope: Scope = ALICE) -> events_pb2.Envelope:
    env = envelope(scope)
    env.turn_received.turn.CopyFrom(common_pb2.Turn(turn_id="t1", role=common_pb2.ROLE_USER, content="my qbadiko"))
    return env


def test_a_turn_sealed_for_publishing_is_signed_over_its_sealed_bytes_and_opens_with_the_key() -> None:
    env = turn()
    seal_for_publishing(env, "k1", SECRET, NOW + timedelta(seconds=60), NOW)
    assert env.WhichOneof("body") is None and env.data_key_id == "k1" and b"qbadiko" not in env.SerializeToString()
    sign(env, "agent-key", "hash")
    assert signature_valid(env, "hash")
    open_with(env, DataKey("k1", key_owner(env.scope), SECRET))
    assert env.turn_received.turn.content == "my qbadiko"
    assert signature_valid(env, "hash")  # still: the signature covers what was sent


def test_a_turn_sealed_for_one_scope_does_not_open_under_another() -> None:
    env = turn()
    seal_for_publishing(env, "k1", SECRET, NOW + timedelta(seconds=60), NOW)
    env.scope.user_id = "bob"  # the key of alice's session, the envelope moved to bob
    with pytest.raises(PermanentError):
        open_with(env, DataKey("k1", key_owner(env.scope), SECRET))


def test_a_key_past_its_valid_until_or_a_body_acm_does_not_seal_is_refused() -> None:
    with pytest.raises(ValueError, match="GetSealingKey again"):
        seal_for_publishing(turn(), "k1", SECRET, NOW, NOW)
    env = turn()
    seal_for_publishing(env, "k1", SECRET, NOW + timedelta(seconds=1), NOW)
    with pytest.raises(ValueError, match="not sealed"):  # sealed twice
        seal_for_publishing(env, "k1", SECRET, NOW + timedelta(seconds=1), NOW)
    forget = envelope(ALICE)
    forget.forget_requested.level = events_pb2.FORGET_LEVEL_USER
    with pytest.raises(ValueError, match="not sealed"):
        seal_for_publishing(forget, "k1", SECRET, NOW + timedelta(seconds=1), NOW)


class Ring:
    """The current key of each owner asked for (a Keyring's ``current``)."""

    def __init__(self) -> None:
        self.asked: list[Owner] = []

    async def current(self, owner: Owner) -> DataKey:
        self.asked.append(owner)
        return DataKey(f"key-{len(self.asked)}", owner, SECRET)

    async def by_id(self, owner: Owner, key_id: str) -> DataKey | None:
        raise AssertionError("GetSealingKey only asks for the current key")

    def forgotten(self, prefix: Owner) -> None:
        raise AssertionError("not a Forget")


async def test_get_sealing_key_gives_the_session_key_the_gateway_seals_with_valid_for_the_ttl() -> None:
    ring = Ring()
    issue = IssueSealingKey(ring, 60.0, now=lambda: NOW)
    issued = await issue(ALICE)
    assert issued.valid_until == NOW + timedelta(seconds=60)
    assert issued.key.secret == SECRET
    await issue(Scope("c1", "acme", "alice", "bot"))  # no session: the user's key (as the gateway seals)
    assert ring.asked == [("c1", "acme", "alice", "s1"), ("c1", "acme", "alice", "")]
    with pytest.raises(Unavailable):
        await IssueSealingKey(None, 60.0)(ALICE)


def test_the_sdk_keeps_a_sealing_key_until_shortly_before_its_valid_until() -> None:
    clock = [NOW]
    kept = SealingKeys(margin_s=5.0, max_kept=2, now=lambda: clock[0])
    alice, bob, carol = (SdkScope(customer_id="acme", user_id=u, session_id="s1") for u in ("alice", "bob", "carol"))
    key = SdkSealingKey("k1", SECRET, NOW + timedelta(seconds=60))
    assert kept.get(alice) is None
    assert kept.keep(alice, key) is key
    assert kept.get(alice) is key
    assert kept.get(SdkScope(customer_id="acme", user_id="alice", session_id="s2")) is None  # another owner
    clock[0] = NOW + timedelta(seconds=55)  # within the margin: asked again
    assert kept.get(alice) is None
    clock[0] = NOW
    kept.keep(bob, key)
    kept.keep(carol, key)  # past max_kept: the others dropped
    assert kept.get(alice) is None and kept.get(carol) is key
