"""Compactions are visible in metrics: with a meter provider exporting over OTLP (as `configure_metrics` installs
one), a Compact through the gateway reaches a real OTLP/gRPC receiver as acm.compactions (by outcome and
verification), acm.compaction.ratio and acm.compaction.latency.

OpenTelemetry lets a process set the global meter provider once; this module sets it (if no test did before)
and shuts it down at the end."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry import metrics
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

from acm.client import AcmClient
from acm.domain.models import Role
from acm.v1 import common_pb2
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

SCOPE = common_pb2.Scope(customer_id="acme", user_id="alice", agent_id="clerk", session_id="metrics")


class _Receiver(metrics_service_pb2_grpc.MetricsServiceServicer):
    """An OTLP metrics endpoint that keeps what it is sent."""

    def __init__(self) -> None:
        self.requests: list[metrics_service_pb2.ExportMetricsServiceRequest] = []
        self.lock = threading.Lock()

    def Export(self, request: Any, context: Any) -> metrics_service_pb2.ExportMetricsServiceResponse:
        with self.lock:
            self.requests.append(request)
        return metrics_service_pb2.ExportMetricsServiceResponse()

    def points(self, name: str) -> list[Any]:
        found = []
        with self.lock:
            for request in self.requests:
                for rm in request.resource_metrics:
                    for sm in rm.scope_metrics:
                        for metric in sm.metrics:
                            if metric.name == name:
                                kind = metric.WhichOneof("data")
                                if kind is not None:
                                    found.extend(getattr(metric, kind).data_points)
        return found


@pytest.fixture(scope="module")
def receiver() -> Iterator[tuple[_Receiver, MeterProvider]]:
    sink = _Receiver()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(sink, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    exporter = OTLPMetricExporter(endpoint=f"127.0.0.1:{port}", insecure=True)
    provider = MeterProvider(metric_readers=[PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)])
    metrics.set_meter_provider(provider)
    # Settable once per process: a provider installed by another test first would leave this one unused.
    assert metrics.get_meter_provider() is provider, "another meter provider was installed in this process"
    yield sink, provider
    provider.shutdown(timeout_millis=5000)
    server.stop(None)


@pytest.fixture
async def acm(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    settings = EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0", embedder="wordllama")
    async with EmbeddedAcm(settings) as embedded:
        yield embedded


async def test_a_compaction_reaches_an_otlp_receiver(
    receiver: tuple[_Receiver, MeterProvider], acm: EmbeddedAcm
) -> None:
    sink, provider = receiver
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=30) as client:
        jobs = []
        for i in range(12):
            text = (
                f"Order PO-2026110{i % 10}-00{i:02d} for {i + 1} laptops was approved by Li Wei on 2026-11-2{i % 10}."
                " Thanks for handling this so quickly, the team really appreciates how smooth the process has"
                " been this quarter, and everyone is looking forward to getting the new machines set up soon."
            )
            jobs.append((await client.ingest(SCOPE, text, Role.USER, turn_id=f"m-{i}")).job_id)
        for job_id in jobs:
            await client.wait_job(SCOPE, job_id, timeout_s=60)
        compaction = await client.compact(SCOPE, 600)
    assert compaction.outcome in {"compacted", "degraded"}, compaction
    assert provider.force_flush(timeout_millis=10_000)
    counts = sink.points("acm.compactions")
    attributes = [{a.key: a.value for a in p.attributes} for p in counts]
    assert any(
        a["outcome"].string_value == compaction.outcome and a["verified"].bool_value == compaction.verified
        for a in attributes
    ), attributes
    assert sum(p.as_int for p in counts) >= 1
    assert sum(p.count for p in sink.points("acm.compaction.latency")) >= 1
    assert sum(p.count for p in sink.points("acm.compaction.ratio")) >= 1
