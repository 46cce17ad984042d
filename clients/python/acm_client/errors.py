"""One exception class per gRPC status a caller can act on; every one is an AcmError."""

from __future__ import annotations

import re

import grpc

_ERROR_ID = re.compile(r"internal error ([0-9a-f]+)")


class AcmError(Exception):
    """A call that failed. ``code``: the gRPC status name ("NOT_FOUND", …); ``details``: the server's message;
    ``attempts``: how many times the call was sent (more than one only for a retried idempotent call)."""

    code = "UNKNOWN"

    def __init__(self, details: str, attempts: int = 1, code: str = "") -> None:
        self.code = code or self.code
        super().__init__(f"{self.code}: {details}" + (f" (after {attempts} attempts)" if attempts > 1 else ""))
        self.details = details
        self.attempts = attempts


class InvalidArgument(AcmError):
    """The request is wrong (a missing id, a budget out of range, …): fix it, do not retry it."""

    code = "INVALID_ARGUMENT"


class NotFound(AcmError):
    """No such job, memory or agent in a scope the key can see."""

    code = "NOT_FOUND"


class AlreadyExists(AcmError):
    code = "ALREADY_EXISTS"


class PermissionDenied(AcmError):
    """The key is valid but may not act on this scope (its customers, users or role)."""

    code = "PERMISSION_DENIED"


class Unauthenticated(AcmError):
    """No API key, or one the server does not know."""

    code = "UNAUTHENTICATED"


class ResourceExhausted(AcmError):
    """Admission control: the gateway is saturated or the client is over its quota; retry later."""

    code = "RESOURCE_EXHAUSTED"


class FailedPrecondition(AcmError):
    code = "FAILED_PRECONDITION"


class Unavailable(AcmError):
    """The gateway (or a store or broker behind it) cannot be reached; idempotent calls were retried already."""

    code = "UNAVAILABLE"


class DeadlineExceeded(AcmError):
    """No answer within the call's deadline (every attempt of a retried call shares one deadline)."""

    code = "DEADLINE_EXCEEDED"


class Internal(AcmError):
    """A fault of the server; ``error_id`` is the id it logged with the traceback."""

    code = "INTERNAL"

    @property
    def error_id(self) -> str:
        found = _ERROR_ID.search(self.details)
        return found.group(1) if found else ""


class Cancelled(AcmError):
    code = "CANCELLED"


_BY_CODE: dict[grpc.StatusCode, type[AcmError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.OUT_OF_RANGE: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.INTERNAL: Internal,
    grpc.StatusCode.CANCELLED: Cancelled,
}


def from_rpc_error(exc: grpc.RpcError, attempts: int = 1) -> AcmError:
    """The AcmError of a failed call (grpc's sync and aio errors both have code() and details())."""
    code: grpc.StatusCode = exc.code()  # type: ignore[attr-defined]
    details: str = exc.details() or ""  # type: ignore[attr-defined]
    cls = _BY_CODE.get(code)
    return (cls or AcmError)(details, attempts, code.name)
