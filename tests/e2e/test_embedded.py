"""End-to-end in embedded mode: every service in one process, embedded stores, gRPC on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acm.auth import create_api_key
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from tests.e2e.agent_session import run_agent_session
from tests.e2e.scenario import check_bad_requests, run_scenario


@pytest.fixture
async def embedded(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    settings = EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")
    async with EmbeddedAcm(settings) as acm:
        yield acm


async def test_one_turn_flows_end_to_end(embedded: EmbeddedAcm) -> None:
    _, key_c1 = await create_api_key(embedded.stores["gateway"].api_keys, "c1", "e2e")
    _, key_c2 = await create_api_key(embedded.stores["gateway"].api_keys, "c2", "e2e")
    await run_scenario(f"127.0.0.1:{embedded.port}", key_c1, key_c2, wait_s=30)


async def test_bad_requests_get_actionable_errors(embedded: EmbeddedAcm) -> None:
    await check_bad_requests(f"127.0.0.1:{embedded.port}", embedded.api_key)


async def test_a_tool_heavy_agent_session(embedded: EmbeddedAcm) -> None:
    await run_agent_session(f"127.0.0.1:{embedded.port}", embedded.api_key, wait_s=60)
