"""Wiring: the same register() serves the ingest process and the embedded all-in-one process."""

from __future__ import annotations

import logging

from acm import topics
from acm.adapters.embedders import build_embedder
from acm.adapters.tokenizer import TiktokenCounter
from acm.bootstrap import Relational, open_bus, open_cache, open_graph, open_relational
from acm.ports.bus import EventBus
from acm.ports.embedder import Embedder
from acm.ports.stores import Cache, GraphStore
from acm.runtime import HealthServer, configure_logging, wait_for_stop_signal
from acm.settings import load
from acm_ingest import GROUP
from acm_ingest.handlers.forget import ForgetHandler
from acm_ingest.handlers.turns import TurnsHandler
from acm_ingest.settings import IngestSettings
from acm_ingest.usecases import ForgetScope, IngestTurn

log = logging.getLogger("acm.ingest")


def register(
    bus: EventBus,
    rel: Relational,
    graph: GraphStore,
    cache: Cache,
    embedder: Embedder,
    settings: IngestSettings,
) -> None:
    ingest = IngestTurn(
        memories=rel.memories,
        graph=graph,
        cache=cache,
        bus=bus,
        embedder=embedder,
        tokens=TiktokenCounter(),
        schemas=rel.schemas,
        session_budget_tokens=settings.session_budget_tokens,
        session_soft_ratio=settings.session_soft_ratio,
    )
    bus.subscribe(
        topics.TURNS,
        GROUP,
        TurnsHandler(ingest, rel.api_keys, rel.jobs, rel.processed, rel.audit, settings.max_turn_bytes),
    )
    bus.subscribe(
        topics.FORGET,
        GROUP,
        ForgetHandler(ForgetScope(rel.memories, graph), rel.jobs, rel.processed, rel.audit, rel.api_keys),
    )


async def run(settings: IngestSettings) -> None:
    timeout = settings.store_timeout_s
    rel = await open_relational(settings.database_url, timeout)
    graph = await open_graph(settings.graph_url, timeout)
    cache = await open_cache(settings.cache_url, timeout)
    bus = open_bus(settings.bus_url, client_id="acm-ingest", timeout_s=timeout)
    register(bus, rel, graph, cache, build_embedder(settings.embedder), settings)
    health = HealthServer(settings.health_addr)
    await bus.start()
    await health.start()
    log.info("ingest running (health on port %d)", health.port)
    try:
        await wait_for_stop_signal()
    finally:
        await health.stop()
        await bus.stop()
        await cache.close()
        await graph.close()
        await rel.close()


def main() -> None:
    import asyncio

    settings = load(IngestSettings)
    configure_logging(settings.log_level)
    asyncio.run(run(settings))
