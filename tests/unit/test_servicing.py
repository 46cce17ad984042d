"""The frame of an internal servicer's RPC (acm.servicing): token first, then any error as the call's status."""

from __future__ import annotations

import asyncio
import logging
from typing import cast

import grpc
import pytest

from acm.auth import SERVICE_TOKEN_HEADER, service_token
from acm.domain.errors import NotFound
from acm.servicing import InternalServicer
from acm.v1 import common_pb2

LOG = logging.getLogger("acm.test-servicing")
SCOPE = common_pb2.Scope(client_id="c", customer_id="cu", user_id="u")


class _Context:
    """What the frame uses of grpc.aio.ServicerContext; abort raises like grpc.aio's."""

    def __init__(self, token: str = "") -> None:
        self.metadata = ((SERVICE_TOKEN_HEADER, token),) if token else ()
        self.aborted: tuple[grpc.StatusCode, str] | None = None

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        self.aborted = (code, details)
        raise grpc.aio.AbortError()


class _Servicer(InternalServicer[None], log=LOG):
    pass


async def _serve(servicer: _Servicer, context: _Context, body: Exception | None) -> str:
    async with servicer.serving(cast(grpc.aio.ServicerContext, context), "GetMemory", SCOPE):
        if body is not None:
            raise body
        return "answer"


async def test_a_signed_call_runs_its_body_and_returns_its_answer() -> None:
    context = _Context(service_token("s3cret", "GetMemory", SCOPE))
    assert await _serve(_Servicer(None, "s3cret"), context, None) == "answer"
    assert context.aborted is None


async def test_an_unsigned_call_is_unauthenticated_before_its_body_runs() -> None:
    context = _Context()
    with pytest.raises(grpc.aio.AbortError):
        await _serve(_Servicer(None, "s3cret"), context, RuntimeError("the body ran"))
    assert context.aborted is not None and context.aborted[0] is grpc.StatusCode.UNAUTHENTICATED


async def test_an_error_in_the_body_ends_the_call_with_its_status() -> None:
    context = _Context()
    with pytest.raises(grpc.aio.AbortError):
        await _serve(_Servicer(None, ""), context, NotFound("no memory 'm1'"))
    assert context.aborted == (grpc.StatusCode.NOT_FOUND, "no memory 'm1'")


async def test_a_bug_is_internal_and_logged_on_the_servicers_logger(caplog: pytest.LogCaptureFixture) -> None:
    context = _Context()
    with caplog.at_level(logging.ERROR, LOG.name), pytest.raises(grpc.aio.AbortError):
        await _serve(_Servicer(None, ""), context, KeyError("k"))
    assert context.aborted is not None and context.aborted[0] is grpc.StatusCode.INTERNAL
    assert [r.name for r in caplog.records] == [LOG.name]


async def test_cancellation_goes_through_without_a_status() -> None:
    context = _Context()
    with pytest.raises(asyncio.CancelledError):
        await _serve(_Servicer(None, ""), context, cast(Exception, asyncio.CancelledError()))
    assert context.aborted is None
