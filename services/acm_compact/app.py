"""Wiring for the compact process; register() also serves the embedded process."""

from __future__ import annotations

import logging

from acm import topics
from acm.bootstrap import Relational, open_bus, open_cache, open_relational
from acm.ports.bus import EventBus
from acm.ports.stores import Cache
from acm.runtime import HealthServer, configure_logging, wait_for_stop_signal
from acm.settings import load
from acm_compact import GROUP
from acm_compact.handlers.compaction_requests import CompactionRequestsHandler
from acm_compact.handlers.forget import ForgetHandler
from acm_compact.settings import CompactSettings
from acm_compact.usecases import DropWorkingContext, TrimSession

log = logging.getLogger("acm.compact")


def register(bus: EventBus, rel: Relational, cache: Cache, settings: CompactSettings) -> TrimSession:
    trim = TrimSession(rel.memories, cache, settings.target_ratio, settings.max_session_turns)
    bus.subscribe(topics.COMPACTION_REQUESTS, GROUP, CompactionRequestsHandler(trim))
    bus.subscribe(topics.FORGET, GROUP, ForgetHandler(DropWorkingContext(cache), rel.api_keys, rel.audit))
    return trim


async def run(settings: CompactSettings) -> None:
    timeout = settings.store_timeout_s
    rel = await open_relational(settings.database_url, timeout)
    cache = await open_cache(settings.cache_url, timeout)
    bus = open_bus(settings.bus_url, client_id="acm-compact", timeout_s=timeout)
    register(bus, rel, cache, settings)
    health = HealthServer(settings.health_addr)
    await bus.start()
    await health.start()
    log.info("compact running (health on port %d)", health.port)
    try:
        await wait_for_stop_signal()
    finally:
        await health.stop()
        await bus.stop()
        await cache.close()
        await rel.close()


def main() -> None:
    import asyncio

    settings = load(CompactSettings)
    configure_logging(settings.log_level)
    asyncio.run(run(settings))
