"""One log line per gateway request: method, scope ids, key id, status code and milliseconds.

Never content: no turn text, query, metadata values or secrets. The scope ids are the ones the caller
sent (the client comes from the key, so the key's public id stands for it; the secret is not logged).
Health checks and reflection are logged at DEBUG, so probes do not drown the requests."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from acm.auth import key_id_of

log = logging.getLogger("acm.requests")

_QUIET_PREFIXES = ("/grpc.health.", "/grpc.reflection.")
_SCOPE_FIELDS = ("customer_id", "user_id", "agent_id", "session_id")


def _key_id(metadata: tuple[tuple[str, str | bytes], ...] | None) -> str:
    for name, value in metadata or ():
        if isinstance(value, bytes):
            continue
        secret = value[7:].strip() if name == "authorization" and value.lower().startswith("bearer ") else ""
        if name == "x-api-key":
            secret = value.strip()
        if secret:
            try:
                return key_id_of(secret)
            except ValueError:
                return "?"
    return "-"


def _scope_ids(request: Any) -> str:
    scope = getattr(request, "scope", None)
    if scope is None:
        return ""
    return "".join(f" {name[:-3]}={getattr(scope, name, '') or '-'}" for name in _SCOPE_FIELDS)


def request_line(method: str, request: Any, key_id: str, code: grpc.StatusCode, ms: float) -> str:
    """`/acm.v1.Gateway/Fetch customer=acme user=alice agent=- session=s1 key=1a2b3c OK 12.3 ms`"""
    return f"{method}{_scope_ids(request)} key={key_id} {code.name} {ms:.1f} ms"


class RequestLog(grpc.aio.ServerInterceptor):
    """Logs every unary call when it ends, whatever its outcome (abort, exception, cancellation)."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        method: str = handler_call_details.method  # type: ignore[attr-defined]
        key_id = _key_id(handler_call_details.invocation_metadata)  # type: ignore[attr-defined]
        level = logging.DEBUG if method.startswith(_QUIET_PREFIXES) else logging.INFO
        inner = handler.unary_unary

        async def logged(request: Any, context: grpc.aio.ServicerContext) -> Any:
            start = time.perf_counter()
            failed: grpc.StatusCode | None = None
            try:
                return await inner(request, context)
            except BaseException:
                # abort() raises after setting the code; anything else the server reports as UNKNOWN.
                failed = grpc.StatusCode.UNKNOWN
                raise
            finally:
                if log.isEnabledFor(level):
                    code = context.code() or failed or grpc.StatusCode.OK
                    if not isinstance(code, grpc.StatusCode):  # the aio context keeps the raw cygrpc value
                        code = _STATUS_BY_VALUE.get(code, grpc.StatusCode.UNKNOWN)
                    ms = (time.perf_counter() - start) * 1000
                    log.log(level, "%s", request_line(method, request, key_id, code, ms))

        return grpc.unary_unary_rpc_method_handler(
            logged,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


_STATUS_BY_VALUE: dict[object, grpc.StatusCode] = {s.value[0]: s for s in grpc.StatusCode}
