"""The one mapping from an error to a gRPC status (acm.runtime), and back in a client of an internal service."""

from __future__ import annotations

import logging
import re

import grpc
import pytest

from acm.convert import InvalidTurn
from acm.domain.compaction.engine import ContextDoesNotFit
from acm.domain.errors import InternalFault, InvalidRequest, NotFound, Rejected, TooLarge, Unavailable
from acm.domain.schema import SchemaInvalid
from acm.domain.scope import ScopeError
from acm.ports.architect import AgentNotFoundError, SchemaRejectedError
from acm.runtime import error_of_status, status_of
from acm_gateway.errors import PermissionDenied, Unauthenticated

LOG = logging.getLogger("acm.test-errors")
INTERNAL_MESSAGE = re.compile(r"^internal error ([0-9a-f]{16}); ")


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (InvalidRequest("budget_tokens must be positive"), grpc.StatusCode.INVALID_ARGUMENT),
        (ScopeError("customer_id is required"), grpc.StatusCode.INVALID_ARGUMENT),
        (SchemaInvalid("retrieval.k must be ≥ 1"), grpc.StatusCode.INVALID_ARGUMENT),
        (InvalidTurn("turn.content is empty"), grpc.StatusCode.INVALID_ARGUMENT),
        (NotFound("no job 'j1'"), grpc.StatusCode.NOT_FOUND),
        (AgentNotFoundError("no schema for agent 'coder'"), grpc.StatusCode.NOT_FOUND),
        (SchemaRejectedError("the draft was rejected"), grpc.StatusCode.FAILED_PRECONDITION),
        (ContextDoesNotFit(900, 100, "pins"), grpc.StatusCode.RESOURCE_EXHAUSTED),
        (Unauthenticated("no API key"), grpc.StatusCode.UNAUTHENTICATED),
        (PermissionDenied("a reader may not forget"), grpc.StatusCode.PERMISSION_DENIED),
        (Unavailable("the event bus did not accept the event"), grpc.StatusCode.UNAVAILABLE),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Exception) else v.name,
)
def test_a_domain_error_has_its_code_and_its_own_message(error: Exception, code: grpc.StatusCode) -> None:
    assert status_of(error, LOG) == (code, str(error))


@pytest.mark.parametrize("error", [ValueError("bad value"), KeyError("missing"), TypeError("not callable")])
def test_any_other_error_is_internal_with_an_id_logged_with_its_traceback(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    try:
        raise error  # a traceback to log, as from a use case
    except Exception as exc:
        with caplog.at_level(logging.ERROR, logger=LOG.name):
            code, message = status_of(exc, LOG)
    assert code is grpc.StatusCode.INTERNAL
    found = INTERNAL_MESSAGE.match(message)
    assert found, message
    assert "bad value" not in message and "missing" not in message  # the details stay in the log
    (record,) = caplog.records
    assert found.group(1) in record.getMessage()
    assert record.exc_info is not None and record.exc_info[1] is error


def test_each_internal_error_gets_its_own_id() -> None:
    ids = {INTERNAL_MESSAGE.match(status_of(ValueError("x"), LOG)[1]).group(1) for _ in range(3)}  # type: ignore[union-attr]
    assert len(ids) == 3


def _failed(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=details)


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (grpc.StatusCode.INVALID_ARGUMENT, InvalidRequest),
        (grpc.StatusCode.NOT_FOUND, NotFound),
        (grpc.StatusCode.FAILED_PRECONDITION, Rejected),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, TooLarge),
    ],
)
def test_an_internal_services_status_is_the_same_status_at_its_caller(
    code: grpc.StatusCode, kind: type[Exception]
) -> None:
    error = error_of_status(_failed(code, "budget_tokens must be positive"), "retrieve")
    assert type(error) is kind
    assert status_of(error, LOG) == (code, "budget_tokens must be positive")


def test_an_internal_services_internal_error_keeps_its_id(caplog: pytest.LogCaptureFixture) -> None:
    error = error_of_status(
        _failed(grpc.StatusCode.INTERNAL, "internal error 0123456789abcdef; see the log"), "retrieve"
    )
    assert isinstance(error, InternalFault)
    with caplog.at_level(logging.ERROR, logger=LOG.name):
        code, message = status_of(error, LOG)
    assert code is grpc.StatusCode.INTERNAL
    assert INTERNAL_MESSAGE.match(message) and "0123456789abcdef" in message and "retrieve" in message
    assert "0123456789abcdef" in caplog.text  # the caller's log names the id too, with no id of its own


@pytest.mark.parametrize(
    "code",
    [
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNAUTHENTICATED,  # a wrong service token: not the end caller's key
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNKNOWN,
    ],
)
def test_other_codes_of_an_internal_service_are_unavailable(code: grpc.StatusCode) -> None:
    error = error_of_status(_failed(code, "connection refused"), "architect")
    assert type(error) is Unavailable
    assert str(error) == f"architect service: {code.name}: connection refused"


def test_a_client_may_name_narrower_types_for_a_code() -> None:
    kinds = {grpc.StatusCode.NOT_FOUND: AgentNotFoundError}
    error = error_of_status(_failed(grpc.StatusCode.NOT_FOUND, "no schema"), "architect", kinds)
    assert type(error) is AgentNotFoundError
    assert type(error_of_status(_failed(grpc.StatusCode.INVALID_ARGUMENT, "x"), "architect", kinds)) is InvalidRequest
