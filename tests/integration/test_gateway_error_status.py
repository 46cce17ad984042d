"""Through the real gateway and a real retrieve service over gRPC: a bug in the internal service reaches the
caller as INTERNAL with the error id that service logged (never INVALID_ARGUMENT); the caller's own mistake,
found by the internal service, stays INVALID_ARGUMENT; a bug in the gateway itself is INTERNAL with an id."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, cast

import grpc
import pytest

from acm.adapters.embedded_bus import EmbeddedBus
from acm.adapters.grpc_retriever import GrpcRetriever
from acm.adapters.memory_cache import MemoryCache
from acm.auth import create_api_key
from acm.bootstrap import Relational, open_relational
from acm.client import AcmClient
from acm.schemas import RepoSchemaSource
from acm.v1 import common_pb2, retrieve_pb2_grpc
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_gateway.app import build_server, build_servicer
from acm_retrieve.api import RetrieveApi, RetrieveServicer
from acm_retrieve.usecases import Retrieve
from tests.support.gateway import gateway_settings

SCOPE = common_pb2.Scope(customer_id="acme", user_id="alice")  # no session: Fetch asks the retrieve service
INTERNAL = re.compile(r"^internal error ([0-9a-f]{16}); ")


async def _buggy_retrieval(*_args: object) -> NoReturn:
    raise ValueError("a bug of the retrieve service, not the caller's input")


@dataclass
class Stack:
    addr: str
    secret: str
    rel: Relational


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    db = f"sqlite:///{tmp_path / 'acm.db'}"
    settings = gateway_settings(db)
    rel = await open_relational(db)
    bus = EmbeddedBus(tmp_path / "bus.db")  # never started: these calls publish nothing
    retrieve = grpc.aio.server()
    servicer = RetrieveServicer(RetrieveApi(cast(Retrieve, _buggy_retrieval)), service_token_secret="")
    retrieve_pb2_grpc.add_RetrieveServicer_to_server(servicer, retrieve)
    retrieve_port = retrieve.add_insecure_port("127.0.0.1:0")
    await retrieve.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{retrieve_port}")
    retriever = GrpcRetriever(channel, 10.0, service_token_secret="")
    gateway = build_server(
        build_servicer(rel, bus, retriever, MemoryCache(), settings, RepoSchemaSource(rel.schemas)), "127.0.0.1:0"
    )
    await gateway.start()
    try:
        _, secret = await create_api_key(rel.api_keys, "c1", "test")
        yield Stack(f"127.0.0.1:{gateway.port}", secret, rel)
    finally:
        await gateway.stop()
        await channel.close()
        await retrieve.stop(None)
        await bus.stop()
        await rel.close()


async def test_a_bug_in_the_retrieve_service_is_internal_with_the_id_it_logged(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    async with AcmClient(stack.addr, stack.secret) as client:
        with caplog.at_level(logging.ERROR), pytest.raises(grpc.aio.AioRpcError) as err:
            await client.fetch(SCOPE, "where do I work?")
    assert err.value.code() == grpc.StatusCode.INTERNAL
    details = err.value.details() or ""
    found = INTERNAL.match(details)
    assert found and "retrieve" in details, details
    assert "a bug of the retrieve service" not in details  # the details stay in the log
    (logged,) = [r for r in caplog.records if r.name == "acm.retrieve" and found.group(1) in r.getMessage()]
    assert logged.exc_info is not None and isinstance(logged.exc_info[1], ValueError)


async def test_a_mistake_the_retrieve_service_finds_stays_invalid_argument(stack: Stack) -> None:
    async with AcmClient(stack.addr, stack.secret) as client:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await client.fetch(SCOPE, "where do I work?", encoding="klingon")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "encoding 'klingon' is not supported" in (err.value.details() or "")


async def test_an_unknown_encoding_is_invalid_argument_for_a_session_the_gateway_assembles(tmp_path: Path) -> None:
    scope = common_pb2.Scope(customer_id="acme", user_id="alice", session_id="s1")
    async with (
        EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")) as acm,
        AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as client,
    ):
        accepted = await client.ingest(scope, "I work at the harbour office.")
        await client.wait_job(scope, accepted.job_id, timeout_s=60)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await client.fetch(scope, "where do I work?", encoding="klingon")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # not the tokenizer's ValueError as INTERNAL
    assert "encoding 'klingon' is not supported" in (err.value.details() or "")


async def test_a_bug_in_the_gateway_is_internal_with_an_id_and_not_found_stays_not_found(
    stack: Stack, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with AcmClient(stack.addr, stack.secret) as client:
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await client.get_job(SCOPE, "no-such-job")
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND

        async def broken_get(*_args: object) -> NoReturn:
            raise KeyError("status")

        monkeypatch.setattr(stack.rel.jobs, "get", broken_get)
        with caplog.at_level(logging.ERROR), pytest.raises(grpc.aio.AioRpcError) as err:
            await client.get_job(SCOPE, "j1")
    assert err.value.code() == grpc.StatusCode.INTERNAL
    found = INTERNAL.match(err.value.details() or "")
    assert found, err.value.details()
    (logged,) = [r for r in caplog.records if r.name == "acm.gateway" and found.group(1) in r.getMessage()]
    assert logged.exc_info is not None and isinstance(logged.exc_info[1], KeyError)
