"""Process plumbing shared by the services: logging, tracing, a health server, waiting for a stop signal."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from acm.settings import ServiceSettings, load
from acm.telemetry import configure_metrics, configure_tracing

S = TypeVar("S", bound=ServiceSettings)


def configure_logging(level: str) -> None:
    logging.basicConfig(level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("aiokafka", "kafka", "neo4j", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


class HealthServer:
    """A gRPC server with standard health checking (and reflection); services add their own servicers."""

    def __init__(self, addr: str, service_names: Sequence[str] = ()) -> None:
        # Its port alone: with SO_REUSEPORT (grpcio's default) a second server on the same port would start
        # too and take half the calls; without it the second fails to bind, as it should.
        self.server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self._names = [*service_names, health.SERVICE_NAME]
        self.port = self.server.add_insecure_port(addr)
        if self.port == 0:
            raise OSError(f"cannot listen on {addr}")

    async def start(self) -> None:
        reflection.enable_server_reflection([*self._names, reflection.SERVICE_NAME], self.server)
        await self.server.start()
        for name in ("", *self._names):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    async def stop(self, grace_s: float = 2.0) -> None:
        for name in ("", *self._names):
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.stop(grace_s)


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
    name: str, server: HealthServer, bus: Startable, resources: Sequence[Closeable], channels: Sequence[Any] = ()
) -> None:
    """Start consuming and serving, wait for SIGINT/SIGTERM, then stop in reverse order."""
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
    configure_metrics(name)
    limit_compute_threads(settings.compute_threads)
    asyncio.run(run(settings))
