"""Process plumbing shared by the services: logging, tracing, a health server, waiting for a stop signal."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NoReturn, Protocol, TypeVar, runtime_checkable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from acm.admission import Overloaded
from acm.domain.errors import (
    InternalFault,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    Rejected,
    TooLarge,
    Unauthenticated,
    Unavailable,
)
from acm.domain.scope import Scope
from acm.metrics import serve_prometheus
from acm.ports.stores import AuditLog
from acm.settings import ServiceSettings, load
from acm.telemetry import configure_metrics, configure_tracing
from acm.transport import LOOPBACK_ONLY, ServerTls, TransportRefused

S = TypeVar("S", bound=ServiceSettings)

# The health service name the liveness (and startup) probes ask: SERVING while the process runs, whatever its
# dependencies do, so an outage of Postgres or Kafka takes pods out of rotation without restarting them all.
LIVENESS = "liveness"
# A readiness check: returns when the dependency answered, raises (or exceeds the deadline) when it did not.
Check = Callable[[], Awaitable[object]]


def configure_logging(level: str) -> None:
    logging.basicConfig(level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("aiokafka", "kafka", "neo4j", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


class HealthServer:
    """A gRPC server with standard health checking (and reflection); services add their own servicers.

    Readiness: the overall status ("") and each service's follow the checks given to watch(). LIVENESS stays
    SERVING until stop()."""

    # Until watch(): no checks, ready once started (class defaults, so a subclass's own __init__ keeps them).
    _checks: Mapping[str, Check] = MappingProxyType({})
    _check_every_s = 5.0
    _check_timeout_s = 2.0
    _watcher: asyncio.Task[None] | None = None
    _ready: bool | None = None  # None: not set yet (grpcio's servicer starts with "" SERVING)

    def __init__(self, addr: str, service_names: Sequence[str] = (), *, tls: ServerTls = LOOPBACK_ONLY) -> None:
        # Its port alone: with SO_REUSEPORT (grpcio's default) a second server on the same port would start
        # too and take half the calls; without it the second fails to bind, as it should.
        self.server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self._names = [*service_names, health.SERVICE_NAME]
        self.port = tls.listen(self.server, addr, service_names)
        if self.port == 0:
            raise OSError(f"cannot listen on {addr}")
        self.probe = tls.probe_server(self.health, service_names)

    def watch(self, checks: Mapping[str, Check], every_s: float = 5.0, timeout_s: float = 2.0) -> None:
        """Before start(): run ``checks`` together every ``every_s``, each with a ``timeout_s`` deadline;
        NOT_SERVING while any fails, SERVING again once all pass."""
        self._checks = dict(checks)
        self._check_every_s = every_s
        self._check_timeout_s = timeout_s

    async def start(self) -> None:
        reflection.enable_server_reflection([*self._names, reflection.SERVICE_NAME], self.server)
        await self.server.start()
        if self.probe is not None:
            await self.probe.server.start()
        await self.health.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
        await self._update(await self._failing())
        if self._checks:
            self._watcher = asyncio.create_task(self._watch(), name="readiness checks")

    async def stop(self, grace_s: float = 2.0) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            await asyncio.gather(self._watcher, return_exceptions=True)
            self._watcher = None
        for name in ("", LIVENESS, *self._names):
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.stop(grace_s)
        if self.probe is not None:
            await self.probe.server.stop(grace_s)

    async def _update(self, failing: Sequence[str]) -> None:
        ready = not failing
        if ready == self._ready:
            return
        self._ready = ready
        status = health_pb2.HealthCheckResponse.SERVING if ready else health_pb2.HealthCheckResponse.NOT_SERVING
        for name in ("", *self._names):
            await self.health.set(name, status)
        if ready:
            logging.getLogger("acm.health").info("ready: every dependency answers")
        else:
            logging.getLogger("acm.health").warning("not ready: %s", "; ".join(failing))

    async def _failing(self) -> list[str]:
        """The checks that failed or missed the deadline, each with why."""

        async def run(name: str, check: Check) -> str | None:
            try:
                async with asyncio.timeout(self._check_timeout_s):
                    await check()
            except Exception as exc:  # TimeoutError included: a dependency too slow to answer is not ready
                return f"{name}: {type(exc).__name__}: {exc}"
            return None

        results = await asyncio.gather(*(run(n, c) for n, c in self._checks.items()))
        return [r for r in results if r is not None]

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._check_every_s)
            await self._update(await self._failing())


@runtime_checkable
class Pingable(Protocol):
    """A bus that can tell whether its broker answers (the Kafka adapter; the embedded log has no server)."""

    async def ping(self) -> None: ...


class HasAuditLog(Protocol):
    @property
    def audit(self) -> AuditLog: ...


# Whose audit entries the readiness read asks for: a well-formed client id no tenant has.
_READINESS_SCOPE = Scope("acm-readiness", "acm-readiness", "acm-readiness")


def dependency_checks(rel: HasAuditLog, bus: object | None = None) -> dict[str, Check]:
    """Readiness checks for a service: the relational store (a read through its pool, as requests make, of a
    table every service owns: its own audit log) and, for a consumer, the bus's broker."""
    checks: dict[str, Check] = {"database": lambda: rel.audit.list(_READINESS_SCOPE, 1)}
    if isinstance(bus, Pingable):
        checks["bus"] = bus.ping
    return checks


# The one mapping from an error to the status a caller gets, used by every servicer. Only the domain's
# error types have a status of their own; anything else is a bug of ours (see status_of).
_STATUS: tuple[tuple[type[Exception], grpc.StatusCode], ...] = (
    (InvalidRequest, grpc.StatusCode.INVALID_ARGUMENT),
    (NotFound, grpc.StatusCode.NOT_FOUND),
    (Rejected, grpc.StatusCode.FAILED_PRECONDITION),
    # Before TooLarge: a caller told RESOURCE_EXHAUSTED by another service reads it as TooLarge (_ERROR_OF_STATUS).
    (Overloaded, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (TooLarge, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (Unauthenticated, grpc.StatusCode.UNAUTHENTICATED),
    (PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (Unavailable, grpc.StatusCode.UNAVAILABLE),
    (InternalFault, grpc.StatusCode.INTERNAL),
)
# What an internal service's status means to its caller. Not here, so Unavailable naming the service:
# UNAUTHENTICATED and PERMISSION_DENIED (from an internal service they say the service token is wrong, not
# the caller's key) and UNAVAILABLE itself.
_ERROR_OF_STATUS: dict[grpc.StatusCode, type[Exception]] = {
    code: kind for kind, code in _STATUS if kind not in (Unauthenticated, PermissionDenied, Unavailable)
}


def status_of(exc: Exception, log: logging.Logger) -> tuple[grpc.StatusCode, str]:
    """The status code and message a caller gets for ``exc``.

    A domain error (acm.domain.errors) has its own code and its message names what to change. Anything
    else (a ValueError, KeyError, TypeError...) is a bug of ours: INTERNAL with a fresh error id, and the
    same id logged with the traceback, so a caller's report leads to the log line."""
    for kind, code in _STATUS:
        if isinstance(exc, kind):
            if kind is InternalFault:  # already logged, with its id, by the service where it happened
                log.error("%s", exc)
            return code, str(exc)
    error_id = uuid.uuid4().hex[:16]
    log.error("internal error %s", error_id, exc_info=exc)
    return grpc.StatusCode.INTERNAL, f"internal error {error_id}; see the server log for this id"


async def abort_with_status(context: grpc.aio.ServicerContext, exc: Exception, log: logging.Logger) -> NoReturn:
    """End the RPC with ``exc``'s status (status_of)."""
    code, message = status_of(exc, log)
    await context.abort(code, message)
    raise AssertionError("unreachable: abort raises")


def error_of_status(
    exc: grpc.aio.AioRpcError, service: str, kinds: Mapping[grpc.StatusCode, type[Exception]] | None = None
) -> Exception:
    """The domain error for an internal service's failed call, to raise in its caller (status_of turns it back
    into the same code): INVALID_ARGUMENT stays InvalidRequest, INTERNAL stays internal with the service's
    error id; ``kinds`` names narrower types for some codes. A code that says nothing about the request
    (UNAVAILABLE, DEADLINE_EXCEEDED, a wrong service token...) is Unavailable."""
    code, details = exc.code(), exc.details() or ""
    kind = (kinds or {}).get(code) or _ERROR_OF_STATUS.get(code)
    if kind is None:
        return Unavailable(f"{service} service: {code.name}: {details}")
    if kind is InternalFault:
        return InternalFault(f"{details} (in the {service} service)")
    return kind(details)


async def wait_for_stop_signal() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


class Closeable(Protocol):
    async def close(self) -> None: ...


class Startable(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def serve_until_stopped(
    name: str,
    server: HealthServer,
    bus: Startable,
    resources: Sequence[Closeable],
    channels: Sequence[Any] = (),
    checks: Mapping[str, Check] | None = None,
) -> None:
    """Start consuming and serving, wait for SIGINT/SIGTERM, then stop in reverse order. ``checks``: what
    readiness follows (dependency_checks)."""
    if checks:
        server.watch(checks)
    await bus.start()
    await server.start()
    logging.getLogger(f"acm.{name}").info("%s running (gRPC/health on port %d)", name, server.port)
    try:
        await wait_for_stop_signal()
    finally:
        await server.stop()
        for channel in channels:
            await channel.close()
        await bus.stop()
        for resource in reversed(resources):
            await resource.close()


def limit_compute_threads(compute_threads: int) -> None:
    """Cap the BLAS thread pool for the whole process (numpy's OpenBLAS starts one thread per core); the
    embedder's own pool is sized by build_embedder from the same setting.

    Measured on 2 cores: ingest replicas stop oversubscribing the machine (results/ingest_kafka.json)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=compute_threads, user_api="blas")


def service_main(
    settings_cls: type[S], run: Callable[[S], Coroutine[Any, Any, None]], service_name: str | None = None
) -> None:
    """A service's console script: settings once at start-up (fail fast), logging, tracing and metrics, then run.

    The service name (for traces) defaults to the settings' package: acm_gateway.settings → acm-gateway,
    the console script's and the compose service's name."""
    settings = load(settings_cls)
    configure_logging(settings.log_level)
    name = service_name or settings_cls.__module__.split(".")[0].replace("_", "-")
    configure_tracing(name)
    serve_prometheus(name, settings.metrics_port)  # before configure_metrics, which then keeps its provider
    configure_metrics(name)
    limit_compute_threads(settings.compute_threads)
    try:
        asyncio.run(run(settings))
    except TransportRefused as exc:
        print(f"{settings_cls.__name__}: cannot start: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
