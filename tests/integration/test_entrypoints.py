"""Each service fails fast on missing settings; the embedded gateway serves reflection; the `acm` CLI
ingests a turn and fetches it back."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

SERVICES = {
    "gateway": ["ACM_DATABASE_URL", "ACM_BUS_URL", "ACM_RETRIEVE_ADDR", "ACM_CACHE_URL"],
    "ingest": ["ACM_DATABASE_URL", "ACM_BUS_URL", "ACM_CACHE_URL"],  # no graph: it is retrieve's
    "retrieve": ["ACM_DATABASE_URL", "ACM_VECTOR_URL", "ACM_GRAPH_URL", "ACM_BUS_URL", "ACM_CACHE_URL"],
    "architect": ["ACM_DATABASE_URL", "ACM_BUS_URL"],
    "anticipate": ["ACM_DATABASE_URL", "ACM_BUS_URL", "ACM_CACHE_URL"],
    "compact": ["ACM_DATABASE_URL", "ACM_BUS_URL", "ACM_CACHE_URL"],
}


async def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
    return proc.returncode or 0, out.decode()


@pytest.mark.parametrize("service", list(SERVICES))
async def test_service_fails_fast_naming_each_missing_variable(service: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACM_")}
    code, out = await _run(sys.executable, "-m", f"acm_{service}", env=env)
    assert code == 2, out
    for variable in SERVICES[service]:
        assert variable in out, out


@pytest.fixture
async def embedded(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    async with EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")) as acm:
        yield acm


async def test_reflection_lists_the_public_api(embedded: EmbeddedAcm) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{embedded.port}") as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        async for reply in stub.ServerReflectionInfo(iter([request])):
            names = {s.name for s in reply.list_services_response.service}
            break
    assert {"acm.v1.Gateway", "grpc.health.v1.Health"} <= names


async def test_cli_ingests_a_turn_and_fetches_it_back(embedded: EmbeddedAcm) -> None:
    acm = str(Path(sys.executable).parent / "acm")
    remote = ["--addr", f"127.0.0.1:{embedded.port}", "--api-key", embedded.api_key, "-c", "acme", "-u", "alice"]
    code, out = await _run(acm, "ingest", *remote, "-s", "s1", "I moved to Lisbon in May", "--wait")
    assert code == 0, out
    assert "done" in out and "facts=1" in out, out
    code, out = await _run(acm, "fetch", *remote, "where did I move?", "--budget", "300")
    assert code == 0, out
    assert "Lisbon" in out and "user" in out, out
    code, out = await _run(
        acm,
        "fetch",
        "--addr",
        f"127.0.0.1:{embedded.port}",
        "--api-key",
        "acm_x_wrong",
        "-c",
        "acme",
        "-u",
        "alice",
        "q",
    )
    assert code == 1 and "UNAUTHENTICATED" in out, out
