"""The Python SDK's pure parts: which failures are retried and how long it waits, error classes by status, and the
conversions at its edge (unknown enum values, naive datetimes)."""

from __future__ import annotations

from datetime import UTC, datetime

import grpc
import pytest

from acm_client import Internal, JobStatus, NotFound, Retry, Role, Turn, Unavailable
from acm_client._calls import Attempts, Call
from acm_client._pb import gateway_pb2
from acm_client.errors import from_rpc_error
from acm_client.types import Job


class Failed(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str = "") -> None:
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


def _call(idempotent: bool, deadline: float | None = None) -> Call[None]:
    return Call("Fetch", None, lambda _: None, idempotent, deadline)


RETRY = Retry(attempts=3, initial_backoff=0.1, max_backoff=0.15)


def test_unavailable_is_retried_for_an_idempotent_call_with_growing_capped_waits() -> None:
    attempts = Attempts(_call(True), 60.0, RETRY)
    attempts.remaining()
    first = attempts.after(Failed(grpc.StatusCode.UNAVAILABLE))
    attempts.remaining()
    second = attempts.after(Failed(grpc.StatusCode.UNAVAILABLE))
    assert 0.05 <= first <= 0.1 and 0.075 <= second <= 0.15
    attempts.remaining()
    with pytest.raises(Unavailable) as last:
        attempts.after(Failed(grpc.StatusCode.UNAVAILABLE, "down"))
    assert last.value.attempts == 3 and last.value.details == "down"


@pytest.mark.parametrize(
    ("idempotent", "code"),
    [(False, grpc.StatusCode.UNAVAILABLE), (True, grpc.StatusCode.NOT_FOUND), (True, grpc.StatusCode.INTERNAL)],
)
def test_other_failures_are_raised_at_once(idempotent: bool, code: grpc.StatusCode) -> None:
    attempts = Attempts(_call(idempotent), 60.0, RETRY)
    attempts.remaining()
    with pytest.raises(from_rpc_error(Failed(code)).__class__) as raised:
        attempts.after(Failed(code))
    assert raised.value.attempts == 1


def test_no_retry_waits_past_the_deadline() -> None:
    attempts = Attempts(_call(True, deadline=0.01), 60.0, Retry(attempts=5, initial_backoff=1.0, max_backoff=1.0))
    attempts.remaining()
    with pytest.raises(Unavailable):
        attempts.after(Failed(grpc.StatusCode.UNAVAILABLE))


def test_statuses_map_to_their_classes_and_internal_keeps_the_error_id() -> None:
    assert isinstance(from_rpc_error(Failed(grpc.StatusCode.NOT_FOUND)), NotFound)
    internal = from_rpc_error(Failed(grpc.StatusCode.INTERNAL, "internal error 3fa9c2; see the server log for this id"))
    assert isinstance(internal, Internal) and internal.error_id == "3fa9c2"
    other = from_rpc_error(Failed(grpc.StatusCode.DATA_LOSS, "lost"))
    assert other.code == "DATA_LOSS" and str(other) == "DATA_LOSS: lost"


def test_enum_values_a_client_does_not_know_are_unspecified_and_times_must_be_aware() -> None:
    assert Job.from_pb(gateway_pb2.Job(status=gateway_pb2.JOB_STATUS_DONE)).status is JobStatus.DONE
    newer = gateway_pb2.Job()
    newer.ParseFromString(b"\x18\x63")  # status 99: a value a newer server might send
    assert Job.from_pb(newer).status is JobStatus.UNSPECIFIED
    assert Turn("hi", role=Role.TOOL, occurred_at=datetime(2026, 5, 1, tzinfo=UTC)).to_pb().occurred_at.seconds > 0
    with pytest.raises(ValueError, match="time zone"):
        Turn("hi", occurred_at=datetime(2026, 5, 1)).to_pb()
    with pytest.raises(ValueError):
        Retry(attempts=0)
