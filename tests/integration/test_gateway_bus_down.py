"""Kafka unreachable → Ingest answers UNAVAILABLE at once, and nothing is reported as accepted."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import grpc
import pytest

from acm.adapters.grpc_retriever import GrpcRetriever
from acm.adapters.kafka_bus import KafkaBus
from acm.adapters.memory_cache import MemoryCache
from acm.auth import create_api_key
from acm.bootstrap import open_relational
from acm.client import AcmClient
from acm.schemas import RepoSchemaSource
from acm.v1 import common_pb2
from acm_gateway.app import build_server, build_servicer
from tests.support.gateway import gateway_settings


async def test_ingest_is_unavailable_when_kafka_is_down(tmp_path: Path, refused_port: int) -> None:
    db = f"sqlite:///{tmp_path / 'acm.db'}"
    rel = await open_relational(db)
    bus = KafkaBus(f"127.0.0.1:{refused_port}", client_id="test", publish_timeout_s=2.0)
    settings = gateway_settings(db)
    channel = grpc.aio.insecure_channel("127.0.0.1:1")
    cache = MemoryCache()
    server = build_server(
        build_servicer(
            rel,
            bus,
            GrpcRetriever(channel, 1.0, service_token_secret=""),
            cache,
            settings,
            RepoSchemaSource(rel.schemas),
        ),
        "127.0.0.1:0",
    )
    await server.start()
    try:
        _, secret = await create_api_key(rel.api_keys, "c1", "test")
        scope = common_pb2.Scope(customer_id="acme", user_id="alice", session_id="s1")
        async with AcmClient(f"127.0.0.1:{server.port}", secret) as client:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await client.ingest(scope, "this must not be reported as accepted")
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "retry" in (err.value.details() or "")
        # No job was created, so no caller can believe the turn was accepted.
        with sqlite3.connect(tmp_path / "acm.db") as conn:
            assert conn.execute("SELECT count(*) FROM jobs").fetchone() == (0,)
    finally:
        await server.stop()
        await channel.close()
        await bus.stop()
        await rel.close()
