import pytest

from acm.auth import key_id_of, new_api_key
from acm.convert import InvalidTurn, turn_from_pb
from acm.domain.scope import Scope
from acm.envelopes import decode, envelope, key_hash, sign, signature_valid
from acm.ports.bus import PermanentError
from acm.v1 import common_pb2

SCOPE = Scope("c1", "cust1", "alice", "agent", "s1")


def _turn_envelope() -> bytes:
    env = envelope(SCOPE)
    env.turn_received.job_id = "j1"
    env.turn_received.turn.content = "hello"
    return env.SerializeToString()


def test_signature_covers_scope() -> None:
    key_id, secret = new_api_key()
    assert key_id_of(secret) == key_id
    env, _ = decode(_turn_envelope(), "turn_received")
    sign(env, key_id, key_hash(secret))
    assert signature_valid(env, key_hash(secret))
    env.scope.user_id = "mallory"  # claim someone else's scope
    assert not signature_valid(env, key_hash(secret))


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b"\xff\xfe garbage", "not an acm.v1.Envelope"),
        (b"", "no event_id"),
    ],
)
def test_decode_rejects_garbage_with_a_reason(value: bytes, reason: str) -> None:
    with pytest.raises(PermanentError, match=reason):
        decode(value, "turn_received")


def test_decode_rejects_wrong_body_and_bad_scope() -> None:
    with pytest.raises(PermanentError, match="expected a forget_requested body"):
        decode(_turn_envelope(), "forget_requested")
    env = envelope(SCOPE)
    env.turn_received.job_id = "j"
    env.scope.customer_id = ""
    with pytest.raises(PermanentError, match="customer_id is required"):
        decode(env.SerializeToString(), "turn_received")


def test_turn_validation_messages() -> None:
    ok = common_pb2.Turn(role=common_pb2.ROLE_USER, content="hi")
    assert turn_from_pb(ok, SCOPE, 100, "t1").content == "hi"
    with pytest.raises(InvalidTurn, match="role is required"):
        turn_from_pb(common_pb2.Turn(content="hi"), SCOPE, 100, "t1")
    with pytest.raises(InvalidTurn, match="empty"):
        turn_from_pb(common_pb2.Turn(role=common_pb2.ROLE_USER, content="  "), SCOPE, 100, "t1")
    with pytest.raises(InvalidTurn, match="over the limit of 100 bytes"):
        turn_from_pb(common_pb2.Turn(role=common_pb2.ROLE_USER, content="x" * 101), SCOPE, 100, "t1")
