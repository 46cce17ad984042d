"""configure_tracing installs an exporter only when asked to; traceparents pass through spans, even no-op ones.

The global tracer provider can be set only once per process, so these tests never set it: they watch
(or stub) opentelemetry.trace's getter and setter instead."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from acm.domain.scope import Scope
from acm.envelopes import envelope
from acm.telemetry import configure_tracing, context_from_traceparent, traceparent_of_current_span

SENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED")


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> list[trace.TracerProvider]:
    """What configure_tracing hands to set_tracer_provider (the real global is left alone)."""
    for name in ENDPOINT_VARS:
        monkeypatch.delenv(name, raising=False)
    calls: list[trace.TracerProvider] = []
    monkeypatch.setattr(trace, "set_tracer_provider", calls.append)
    return calls


def test_without_an_endpoint_nothing_is_installed(installed: list[trace.TracerProvider]) -> None:
    before = trace.get_tracer_provider()
    configure_tracing("acm-test")
    assert installed == []
    assert trace.get_tracer_provider() is before


def test_sdk_disabled_wins_over_the_endpoint(
    installed: list[trace.TracerProvider], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    configure_tracing("acm-test")
    assert installed == []


def test_an_endpoint_installs_a_batched_otlp_exporter_named_by_otel_service_name(
    installed: list[trace.TracerProvider], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "acm-renamed")
    monkeypatch.setattr(trace, "get_tracer_provider", trace.ProxyTracerProvider)  # as in a fresh process
    configure_tracing("acm-test")
    assert len(installed) == 1
    provider = installed[0]
    assert isinstance(provider, TracerProvider)
    try:
        assert provider.resource.attributes[SERVICE_NAME] == "acm-renamed"
        processors = provider._active_span_processor._span_processors
        assert [type(p) for p in processors] == [BatchSpanProcessor]
        assert isinstance(processors[0], BatchSpanProcessor)
        assert isinstance(processors[0]._batch_processor._exporter, OTLPSpanExporter)
    finally:
        provider.shutdown()  # stops the batch thread; nothing was exported


def test_a_provider_installed_earlier_is_kept(
    installed: list[trace.TracerProvider], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
    monkeypatch.setattr(trace, "get_tracer_provider", TracerProvider)
    configure_tracing("acm-test")
    assert installed == []


def test_traceparent_helpers() -> None:
    # A context from a traceparent names that span as the current one, and back.
    with trace.use_span(trace.get_current_span(context_from_traceparent(SENT))):
        assert traceparent_of_current_span() == SENT
    assert traceparent_of_current_span() == ""
    assert trace.get_current_span(context_from_traceparent("")) is trace.INVALID_SPAN
    assert trace.get_current_span(context_from_traceparent("not-a-traceparent")) is trace.INVALID_SPAN


def test_with_tracing_off_an_envelope_keeps_the_parent_trace() -> None:
    # The API's no-op spans carry their parent's context: a consumer without an SDK still passes the
    # received traceparent on to the events it publishes.
    noop = trace.NoOpTracer()
    with noop.start_as_current_span("consumer", context=context_from_traceparent(SENT)):
        assert envelope(Scope("c1", "acme", "alice")).traceparent == SENT
    fresh = envelope(Scope("c1", "acme", "alice")).traceparent
    assert fresh != SENT and len(fresh) == len(SENT)


def test_metrics_are_exported_over_otlp_only_when_an_endpoint_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry import metrics
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    from acm.telemetry import configure_metrics

    for name in (*ENDPOINT_VARS, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    calls: list[metrics.MeterProvider] = []
    monkeypatch.setattr(metrics, "set_meter_provider", calls.append)
    monkeypatch.setattr(metrics, "get_meter_provider", metrics.NoOpMeterProvider)  # as in a fresh process
    configure_metrics("acm-test")
    assert calls == []

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://127.0.0.1:4317")
    configure_metrics("acm-test")
    assert len(calls) == 1 and isinstance(calls[0], MeterProvider)
    provider = calls[0]
    try:
        assert provider._sdk_config.resource.attributes[SERVICE_NAME] == "acm-test"
        (reader,) = provider._metric_readers
        assert isinstance(reader, PeriodicExportingMetricReader)
        assert isinstance(reader._exporter, OTLPMetricExporter)
    finally:
        provider.shutdown(timeout_millis=1000)
