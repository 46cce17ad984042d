"""The operational metrics SREs scale and alert on (docs/operations.md, "Scaling"), and their Prometheus endpoint.

Instruments are made with the OpenTelemetry API at import time, like the compaction ones (acm_compact.usecases):
they record into nothing until a MeterProvider is installed. `serve_prometheus` installs one that also serves
GET /metrics on ACM_METRICS_PORT (the OTLP export of acm.telemetry.configure_metrics goes on alongside it).

  acm.consumer.lag           gauge      records between a partition's end and its group's committed offset
                                        (topic, partition, group); sampled by the Kafka adapter
  acm.bus.handler.duration   histogram  ms per handler attempt (topic, group, outcome: ok | retry | dead_letter)
  acm.bus.dead_letters       counter    records written to a dead-letter topic (topic, group)
  acm.fetch.duration         histogram  ms per gateway Fetch (outcome: pool_hit | full | error)
  acm.jobs.transitions       counter    jobs reaching a state (kind: ingest | forget, state: pending | done | failed):
                                        pending when the gateway accepted it, done / failed when ingest finished it
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Protocol, TypeVar

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Observation

log = logging.getLogger("acm.metrics")

_meter = metrics.get_meter("acm")

# The latest lag sample of each consumer (a bus), by (group, topic, partition): replaced whole at each sample,
# so a partition handed to another replica stops being reported here instead of keeping its last value.
_lag_samples: dict[int, dict[tuple[str, str, int], int]] = {}


def report_lag(consumer: object, lags: Mapping[tuple[str, str, int], int]) -> None:
    _lag_samples[id(consumer)] = dict(lags)


def forget_lag(consumer: object) -> None:
    _lag_samples.pop(id(consumer), None)


def _observe_lag(options: CallbackOptions) -> Iterable[Observation]:
    for sample in list(_lag_samples.values()):
        for (group, topic, partition), lag in sample.items():
            yield Observation(lag, {"group": group, "topic": topic, "partition": str(partition)})


CONSUMER_LAG = _meter.create_observable_gauge(
    "acm.consumer.lag",
    callbacks=[_observe_lag],
    unit="{record}",
    description="records not yet committed by the group, per partition",
)
HANDLER_DURATION = _meter.create_histogram(
    "acm.bus.handler.duration", unit="ms", description="bus handler attempts by topic, group and outcome"
)
DEAD_LETTERS = _meter.create_counter(
    "acm.bus.dead_letters", unit="{record}", description="records dead-lettered, by topic and group"
)
FETCH_DURATION = _meter.create_histogram(
    "acm.fetch.duration", unit="ms", description="gateway Fetch latency by outcome (pool_hit, full, error)"
)
JOB_TRANSITIONS = _meter.create_counter(
    "acm.jobs.transitions", unit="{job}", description="jobs reaching a state, by kind and state"
)


def job_reached(kind: str, state: str) -> None:
    JOB_TRANSITIONS.add(1, {"kind": kind, "state": state})


class _Answer(Protocol):
    @property
    def from_prefetch(self) -> bool: ...


A = TypeVar("A", bound=_Answer)
Q = TypeVar("Q")


def timed_fetch(fetch: Callable[[Q], Awaitable[A]]) -> Callable[[Q], Awaitable[A]]:
    """``fetch`` recording acm.fetch.duration: ``pool_hit`` when the prefetch pool answered, ``full`` for a full
    retrieval, ``error`` when it raised."""

    async def timed(request: Q) -> A:
        started = time.perf_counter()
        outcome = "error"
        try:
            answer = await fetch(request)
            outcome = "pool_hit" if answer.from_prefetch else "full"
            return answer
        finally:
            FETCH_DURATION.record((time.perf_counter() - started) * 1000, {"outcome": outcome})

    return timed


def serve_prometheus(service_name: str, port: int | None, addr: str = "0.0.0.0") -> int | None:
    """Serve GET /metrics on ``port`` (None or 0: off) from a MeterProvider installed here, which also exports
    over OTLP when an endpoint is set (as acm.telemetry.configure_metrics would; it then keeps this provider).
    Returns the port, or None when off or when a provider was installed earlier (a host application's)."""
    if not port:
        return None
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from prometheus_client import start_http_server

    from acm.telemetry import _otlp_endpoint

    if isinstance(metrics.get_meter_provider(), MeterProvider):
        log.warning("metrics: a meter provider is already installed; /metrics not served")
        return None
    readers: list[MetricReader] = [PrometheusMetricReader()]
    if _otlp_endpoint("METRICS"):
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

        readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
    name = os.environ.get("OTEL_SERVICE_NAME") or service_name
    metrics.set_meter_provider(MeterProvider(resource=Resource.create({SERVICE_NAME: name}), metric_readers=readers))
    start_http_server(port, addr=addr)  # a daemon thread: it ends with the process
    log.info("metrics: serving Prometheus /metrics of %s on %s:%d", name, addr, port)
    return port
