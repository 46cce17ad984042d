"""The embedded process keeps each agent's latest schema (acm.schemas.KeptLatest, issue 20: CPU a Fetch) over
the architect's real SQLite store: a new version written through it is read at once, an agent without a
schema gets one, a read that overlapped a write keeps nothing, and the embedded process's readers and the
architect share the one object."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from acm.bootstrap import Relational, open_relational
from acm.client import AcmClient
from acm.domain.schema import AgentSchema, default_schema
from acm.domain.scope import Scope
from acm.ports.stores import SchemaRepo
from acm.schemas import KeptLatest
from acm.v1 import common_pb2
from acm_cli.embedded import DEV_CLIENT, EmbeddedAcm, EmbeddedSettings

SCOPE = Scope("c1", "acme", "alice", "bot")


@pytest.fixture
async def rel(tmp_path: Path) -> AsyncIterator[Relational]:
    store = await open_relational(f"sqlite:///{tmp_path / 'architect.db'}", service="architect")
    yield store
    await store.close()


def _v(version: int, agent: str = "bot") -> AgentSchema:
    return replace(default_schema(agent), version=version, description=f"v{version}")


async def test_a_new_version_and_a_first_schema_are_read_at_once(rel: Relational) -> None:
    kept = KeptLatest(rel.schemas)
    assert await kept.latest(SCOPE, "bot") is None  # kept absent ...
    assert await kept.put("c1", _v(1))
    assert await kept.latest(SCOPE, "bot") == _v(1)  # ... until written
    assert await kept.put("c1", _v(2))
    assert (await kept.latest(SCOPE, "bot")) == _v(2)
    assert not await kept.put("c1", _v(2))  # an existing version: no change
    assert (await kept.latest(SCOPE, "bot")) == _v(2)
    # Clients and agents are kept apart.
    assert await kept.latest(replace(SCOPE, client_id="c2"), "bot") is None
    assert await kept.put("c1", _v(1, "other"))
    assert (await kept.latest(SCOPE, "other")) == _v(1, "other")
    assert (await kept.latest(SCOPE, "bot")) == _v(2)
    assert [s.agent_id for s in await kept.agents(SCOPE)] == ["bot", "other"]
    assert await kept.version(SCOPE, "bot", 1) == _v(1)


async def test_what_is_read_is_kept(rel: Relational) -> None:
    kept = KeptLatest(rel.schemas)
    await kept.put("c1", _v(1))
    assert await kept.latest(SCOPE, "bot") == _v(1)
    # Written behind its back (what the embedded process's data-folder lock rules out): still the kept one,
    # which shows the store is not read again.
    await rel.schemas.put("c1", _v(2))
    assert await kept.latest(SCOPE, "bot") == _v(1)
    assert await KeptLatest(rel.schemas).latest(SCOPE, "bot") == _v(2)


class _Paused:
    """The real repo, with ``latest`` held until released: a read in flight while a put runs."""

    def __init__(self, schemas: SchemaRepo) -> None:
        self.schemas = schemas
        self.release = asyncio.Event()

    async def latest(self, scope: Scope, agent_id: str) -> AgentSchema | None:
        found = await self.schemas.latest(scope, agent_id)
        await self.release.wait()
        return found

    async def put(self, client_id: str, schema: AgentSchema) -> bool:
        return await self.schemas.put(client_id, schema)

    async def version(self, scope: Scope, agent_id: str, version: int) -> AgentSchema | None:
        return await self.schemas.version(scope, agent_id, version)

    async def agents(self, scope: Scope) -> list[AgentSchema]:
        return await self.schemas.agents(scope)


async def test_a_read_that_overlapped_a_write_keeps_nothing(rel: Relational) -> None:
    paused = _Paused(rel.schemas)
    kept = KeptLatest(paused)
    await kept.put("c1", _v(1))
    stale = asyncio.create_task(kept.latest(SCOPE, "bot"))  # reads v1, then waits
    await asyncio.sleep(0.05)
    await kept.put("c1", _v(2))
    paused.release.set()
    assert await stale == _v(1)  # it began before the write
    assert await kept.latest(SCOPE, "bot") == _v(2)


async def test_an_agent_defined_in_the_embedded_process_is_what_retrieval_reads_next(tmp_path: Path) -> None:
    async with (
        EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")) as acm,
        AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client,
    ):
        assert isinstance(acm.stores["architect"].schemas, KeptLatest)
        retrieve = acm.full_retriever._retrieve  # type: ignore[attr-defined]  # what a Fetch asks for the preset
        scope = Scope(DEV_CLIENT, "acme", "alice", "coder")
        assert (await retrieve.strategy(scope)).name == "balanced"  # the default: no schema stored yet
        await client.define_agent(
            common_pb2.Scope(customer_id="acme", user_id="alice", agent_id="coder"),
            "",
            overrides_json='{"retrieval": {"preset": "recent"}}',
            archetype="coding_agent",
        )
        assert (await retrieve.strategy(scope)).name == "recent"
