"""Tracing: one turn through embedded ACM is one trace — gateway RPC → ingest → retrieve — linked by the
envelopes' traceparent; a client's traceparent becomes the gateway span's parent; a dead-lettered record
ends its consumer span as failed.

OpenTelemetry lets a process set the global tracer provider only once, so this module installs an SDK
provider (or reuses one already installed) with an in-memory exporter once, clears the exporter before
each test, and shuts the exporter down at the end so later tests in the process collect nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from acm import topics
from acm.adapters.delivery import deliver
from acm.client import AcmClient
from acm.domain.models import stable_id
from acm.domain.scope import Scope
from acm.envelopes import envelope
from acm.ports.bus import PermanentError, Record
from acm.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_ingest import GROUP as INGEST
from acm_retrieve import GROUP as RETRIEVE

SCOPE = common_pb2.Scope(customer_id="acme", user_id="alice", agent_id="support-bot", session_id="s1")
INGEST_RPC = "acm.v1.Gateway/Ingest"
CLIENT_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN_ID = "00f067aa0ba902b7"


@pytest.fixture(scope="module")
def exporter() -> Iterator[InMemorySpanExporter]:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    assert trace.get_tracer_provider() is provider, "another, non-SDK tracer provider is installed"
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))  # synchronous: a span is there once it ended
    yield memory
    memory.clear()
    memory.shutdown()  # the provider cannot be removed; from now on its spans are dropped


@pytest.fixture
def spans(exporter: InMemorySpanExporter) -> InMemorySpanExporter:
    exporter.clear()
    return exporter


@pytest.fixture
async def embedded(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    async with EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")) as acm:
        yield acm


async def _span(
    spans: InMemorySpanExporter, name: str, *, message_id: str = "", trace_id: int = 0, timeout_s: float = 15.0
) -> ReadableSpan:
    """The finished span called `name` (with that message id / in that trace, if given); consumers run
    after the job is answered, so wait for it."""
    deadline = time.monotonic() + timeout_s
    while True:
        for span in spans.get_finished_spans():
            if span.name != name or span.context is None:
                continue
            if message_id and span.attributes is not None and span.attributes.get("messaging.message.id") != message_id:
                continue
            if trace_id and span.context.trace_id != trace_id:
                continue
            return span
        if time.monotonic() > deadline:
            raise AssertionError(f"no span {name!r}; have {sorted({s.name for s in spans.get_finished_spans()})}")
        await asyncio.sleep(0.05)


def _parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def _ids(span: ReadableSpan) -> tuple[int, int]:
    assert span.context is not None
    return span.context.trace_id, span.context.span_id


async def test_one_turn_is_one_trace_from_gateway_to_retrieve(
    spans: InMemorySpanExporter, embedded: EmbeddedAcm
) -> None:
    async with AcmClient(f"127.0.0.1:{embedded.port}", embedded.api_key) as client:
        response = await client.ingest(SCOPE, "I moved to Lisbon in May.")
        job = await client.wait_job(SCOPE, response.job_id)
    assert job.status == gateway_pb2.JOB_STATUS_DONE, job

    gateway = await _span(spans, INGEST_RPC)
    trace_id, gateway_id = _ids(gateway)
    ingest = await _span(spans, f"{INGEST} process {topics.TURNS}", trace_id=trace_id)
    retrieve = await _span(
        spans, f"{RETRIEVE} process {topics.MEMORIES}", message_id=stable_id("memories", response.job_id)
    )

    assert gateway.kind is SpanKind.SERVER
    assert gateway.parent is None  # the client sent no traceparent: the turn starts the trace
    assert gateway.attributes is not None and gateway.attributes["rpc.grpc.status_code"] == 0
    # ingest handled the gateway's event; retrieve handled the event ingest published while handling it.
    assert ingest.kind is SpanKind.CONSUMER and ingest.context is not None
    assert ingest.context.trace_id == trace_id and _parent_id(ingest) == gateway_id
    assert retrieve.kind is SpanKind.CONSUMER and retrieve.context is not None
    assert retrieve.context.trace_id == trace_id and _parent_id(retrieve) == ingest.context.span_id
    assert retrieve.attributes is not None
    assert retrieve.attributes["messaging.destination.name"] == topics.MEMORIES
    assert retrieve.attributes["messaging.consumer.group.name"] == RETRIEVE
    assert retrieve.attributes["messaging.system"] == "acm_embedded_log"
    assert retrieve.status.status_code is StatusCode.UNSET


async def test_a_client_traceparent_becomes_the_gateway_span_parent(
    spans: InMemorySpanExporter, embedded: EmbeddedAcm
) -> None:
    sent = f"00-{CLIENT_TRACE_ID}-{CLIENT_SPAN_ID}-01"
    metadata = (("authorization", f"Bearer {embedded.api_key}"), ("traceparent", sent))
    async with grpc.aio.insecure_channel(f"127.0.0.1:{embedded.port}") as channel:
        stub = gateway_pb2_grpc.GatewayStub(channel)
        turn = common_pb2.Turn(role=common_pb2.ROLE_USER, content="My invoice was charged twice.")
        await stub.Ingest(gateway_pb2.IngestRequest(scope=SCOPE, turn=turn), metadata=metadata, timeout=10)

    gateway = await _span(spans, INGEST_RPC, trace_id=int(CLIENT_TRACE_ID, 16))
    assert gateway.parent is not None and gateway.parent.is_remote
    assert gateway.parent.span_id == int(CLIENT_SPAN_ID, 16)
    ingest = await _span(spans, f"{INGEST} process {topics.TURNS}", trace_id=int(CLIENT_TRACE_ID, 16))
    assert _parent_id(ingest) == _ids(gateway)[1]


class _Bus:
    """Just enough of an EventBus for deliver(): records what it is asked to publish."""

    def __init__(self) -> None:
        self.published: list[tuple[str, str, bytes]] = []

    async def publish(self, topic: str, key: str, value: bytes) -> None:
        self.published.append((topic, key, value))

    def subscribe(
        self, topic: str, group: str, handler: object, *, from_now: bool = False, concurrency: int = 1
    ) -> None:
        raise AssertionError("this fake bus only records publishes")

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def test_a_dead_lettered_record_ends_its_consumer_span_as_failed(spans: InMemorySpanExporter) -> None:
    sent = f"00-{CLIENT_TRACE_ID}-{CLIENT_SPAN_ID}-01"
    env = envelope(Scope("c1", "acme", "alice"), traceparent=sent)
    record = Record(topic=topics.TURNS, key="k", value=env.SerializeToString())

    async def reject(_: Record) -> None:
        raise PermanentError("forged scope")

    bus = _Bus()
    await deliver(bus, "g", record, reject, system="kafka")

    assert [topic for topic, _, _ in bus.published] == [topics.dead_letter("g")]
    span = await _span(spans, f"g process {topics.TURNS}")
    assert span.context is not None and span.context.trace_id == int(CLIENT_TRACE_ID, 16)
    assert _parent_id(span) == int(CLIENT_SPAN_ID, 16)
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description is not None and "forged scope" in span.status.description
    assert [e.name for e in span.events] == ["exception"]
    assert span.attributes is not None and span.attributes["messaging.message.id"] == env.event_id
