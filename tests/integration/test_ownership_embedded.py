"""Embedded mode runs each service on its own relational store (acm.ownership): its own SQLite file with only
its tables, and a NotOwned guard for every repository it does not own. The whole scenario (turns, Fetch with a
session, the Memory API, compaction, Forget) runs without any service touching another's repository: a
touch raises NotOwned, which a handler's or an RPC's error log would show."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acm.auth import create_api_key
from acm.domain.scope import Scope
from acm.ownership import OWNS, REPOS, SERVICES, NotOwned
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_cli.store_split import TABLES, database_file
from tests.e2e.agent_session import run_agent_session
from tests.e2e.scenario import run_scenario


@pytest.fixture
async def embedded(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    async with EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")) as acm:
        yield acm


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {n for n in names if not n.startswith(("sqlite_", "memories_fts"))} - {"schema_versions"}


async def test_each_service_has_its_own_file_and_a_guard_for_the_rest(embedded: EmbeddedAcm) -> None:
    data = embedded.settings.data_dir
    assert not (data / "acm.db").exists()
    for service in SERVICES:
        assert _tables(database_file(data, service)) == {t for g in OWNS[service] for t in TABLES[g]}, service
        for repo in set(REPOS) - OWNS[service]:
            with pytest.raises(NotOwned, match=f"{service} touched {repo}"):
                await getattr(embedded.stores[service], repo).get(Scope("c1", "acme", "alice"), "x")


async def test_no_service_touches_another_services_repository(
    embedded: EmbeddedAcm, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    _, key_c1 = await create_api_key(embedded.stores["gateway"].api_keys, "c1", "e2e")
    _, key_c2 = await create_api_key(embedded.stores["gateway"].api_keys, "c2", "e2e")
    addr = f"127.0.0.1:{embedded.port}"
    await run_scenario(addr, key_c1, key_c2, wait_s=30)
    await run_agent_session(addr, embedded.api_key, wait_s=60)  # compaction and the session's reads too
    touched = [r.getMessage() for r in caplog.records if "owned by" in r.getMessage()]
    touched += [str(r.exc_info[1]) for r in caplog.records if r.exc_info and isinstance(r.exc_info[1], NotOwned)]
    assert touched == []
