"""The frame every internal gRPC servicer puts around its RPCs: the caller's service token checked, and any
error ended as the call's status (acm.runtime.status_of)."""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any, ClassVar, Generic, TypeVar

import grpc

from acm.auth import check_service_call, required_service_secret
from acm.runtime import abort_with_status
from acm.v1 import common_pb2

Api = TypeVar("Api")


class InternalServicer(Generic[Api]):
    """Base of an internal servicer serving an ``Api``: ``class S(InternalServicer[A], x_pb2_grpc.XServicer,
    log=log)``, where ``log`` gets the internal errors (status_of); each RPC runs its body in
    ``async with self.serving(context, method, scope)``."""

    _log: ClassVar[logging.Logger]

    def __init_subclass__(cls, log: logging.Logger, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._log = log

    def __init__(self, api: Api, service_token_secret: str | None = None) -> None:
        """Each call must carry a service token (acm.auth) signed with ``service_token_secret``; None: the
        secret from ACM_SERVICE_TOKEN_SECRET, required."""
        self._api = api
        self._secret = required_service_secret() if service_token_secret is None else service_token_secret

    def serving(self, context: grpc.aio.ServicerContext, method: str, scope: common_pb2.Scope) -> Serving:
        return Serving(context, self._secret, method, scope, self._log)


class Serving:
    """Entered: aborts with UNAUTHENTICATED unless the call's service token is valid. Left with an Exception:
    aborts with its status (context.abort raises, so nothing is swallowed and the body's return stands)."""

    def __init__(
        self,
        context: grpc.aio.ServicerContext,
        secret: str,
        method: str,
        scope: common_pb2.Scope,
        log: logging.Logger,
    ) -> None:
        self._context, self._secret, self._method, self._scope, self._log = context, secret, method, scope, log

    async def __aenter__(self) -> None:
        await check_service_call(self._context, self._secret, self._method, self._scope)

    # Returns None (never True), so type checkers know an exception in the body is not swallowed.
    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # Exception only, as before: cancellation (a BaseException) goes through untouched.
        if isinstance(exc, Exception):
            await abort_with_status(self._context, exc, self._log)
