"""OpenTelemetry: tracing (one turn followed across processes through the envelope's W3C traceparent) and
metrics (compactions' outcomes, ratios and latencies), both exported over OTLP when an endpoint is set.

Spans are started with the API only (`opentelemetry.trace`); until `configure_tracing` installs an SDK
provider they are the API's no-op spans, which still carry their parent's context, so a traceparent
received from a client or an envelope is passed on unchanged even with tracing off.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

log = logging.getLogger("acm.telemetry")

# Only the W3C header travels in an envelope, so only its propagator is used (not the global,
# configurable one: the envelope field's format must not depend on OTEL_PROPAGATORS).
_PROPAGATOR = TraceContextTextMapPropagator()
_HEADER = "traceparent"

PREFETCH_OUTCOMES = "acm.prefetch.outcomes"


def prefetch_counter(provider: metrics.MeterProvider | None = None) -> Callable[[str], None]:
    """Counts prefetch outcomes ("hit", "miss_<reason>", "decoded", "warmed", ...) as acm.prefetch.outcomes with
    an ``outcome`` attribute, on ``provider`` (None: the global one, which records into nothing until
    configure_metrics installs one; a test or benchmark passes its own, with an in-memory reader)."""
    meter = (provider or metrics.get_meter_provider()).get_meter("acm.prefetch")
    counter = meter.create_counter(
        PREFETCH_OUTCOMES, description="prefetch pool outcomes: Fetches served or missed (by reason), pools decoded"
    )
    return lambda outcome: counter.add(1, {"outcome": outcome})


def counts_by(reader: InMemoryMetricReader, name: str, attribute: str) -> dict[str, int]:
    """A counter's totals per value of one attribute, as ``reader`` (e.g. an InMemoryMetricReader) collects them."""
    from opentelemetry.sdk.metrics.export import NumberDataPoint  # the SDK only where metrics are read

    data = reader.get_metrics_data()
    totals: dict[str, int] = {}
    for rm in data.resource_metrics if data is not None else ():
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if metric.name == name:
                    for point in metric.data.data_points:
                        if isinstance(point, NumberDataPoint):
                            key = str((point.attributes or {}).get(attribute, ""))
                            totals[key] = totals.get(key, 0) + int(point.value)
    return totals


def _otlp_endpoint(signal: str) -> str:
    """Where to export a signal (TRACES, METRICS): its own OTEL variable, else the shared one; "" when unset or
    when OTEL_SDK_DISABLED is true."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return ""
    return os.environ.get(f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "")


def configure_tracing(service_name: str) -> None:
    """Export spans over OTLP/gRPC when OTEL_EXPORTER_OTLP_ENDPOINT (or its _TRACES_ variant) is set.

    Otherwise nothing is installed and every span stays a no-op. OTEL_SERVICE_NAME overrides
    `service_name`; the other standard OTEL_* variables (headers, timeouts, sampler, resource
    attributes) are read by the SDK itself. A provider installed earlier (by a host application or a
    test) is kept: OpenTelemetry allows setting the global provider only once per process.
    """
    endpoint = _otlp_endpoint("TRACES")
    if not endpoint:
        return
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return
    # Imported here so that a process without tracing never loads the SDK or the exporter.
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    name = os.environ.get("OTEL_SERVICE_NAME") or service_name
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}))  # flushed at exit by the SDK
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # endpoint etc. from the env
    trace.set_tracer_provider(provider)
    log.info("tracing: exporting spans of %s to %s", name, endpoint)


def configure_metrics(service_name: str) -> None:
    """Export metrics over OTLP/gRPC when OTEL_EXPORTER_OTLP_ENDPOINT (or its _METRICS_ variant) is set, every
    OTEL_METRIC_EXPORT_INTERVAL ms (the SDK's default: 60 s). Instruments are created with the API at import
    time; they record into nothing until this installs a provider. As for tracing, a provider installed earlier
    is kept."""
    endpoint = _otlp_endpoint("METRICS")
    if not endpoint:
        return
    # Imported here so that a process without metrics never loads the SDK or the exporter.
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource

    if isinstance(metrics.get_meter_provider(), MeterProvider):
        return
    name = os.environ.get("OTEL_SERVICE_NAME") or service_name
    reader = PeriodicExportingMetricReader(OTLPMetricExporter())  # endpoint, interval etc. from the env
    metrics.set_meter_provider(MeterProvider(resource=Resource.create({SERVICE_NAME: name}), metric_readers=[reader]))
    log.info("metrics: exporting metrics of %s to %s", name, endpoint)


def traceparent_of_current_span() -> str:
    """The current span's W3C traceparent header value, or "" when no valid span is current."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier.get(_HEADER, "")


def context_from_traceparent(value: str) -> Context:
    """A Context whose span is the (remote) one named by `value`, to start a child span in; an empty
    Context (a new trace) when `value` is empty or not a valid traceparent."""
    return _PROPAGATOR.extract({_HEADER: value})
