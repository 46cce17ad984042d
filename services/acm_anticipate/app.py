"""Wiring for the anticipate process; register() also serves the embedded process."""

from __future__ import annotations

import logging

from acm import topics
from acm.bootstrap import Relational, open_bus, open_cache, open_relational
from acm.ports.bus import EventBus
from acm.ports.stores import Cache
from acm.runtime import HealthServer, configure_logging, wait_for_stop_signal
from acm.settings import load
from acm_anticipate import GROUP
from acm_anticipate.handlers.forget import ForgetHandler
from acm_anticipate.handlers.memories import MemoriesHandler
from acm_anticipate.settings import AnticipateSettings
from acm_anticipate.usecases import DropHotState, TrackMentions

log = logging.getLogger("acm.anticipate")


def register(bus: EventBus, rel: Relational, cache: Cache, settings: AnticipateSettings) -> TrackMentions:
    track = TrackMentions(cache, settings.recent_entities, settings.hot_state_ttl_s)
    bus.subscribe(topics.MEMORIES, GROUP, MemoriesHandler(track))
    bus.subscribe(topics.FORGET, GROUP, ForgetHandler(DropHotState(cache), rel.api_keys, rel.audit))
    return track


async def run(settings: AnticipateSettings) -> None:
    timeout = settings.store_timeout_s
    rel = await open_relational(settings.database_url, timeout)
    cache = await open_cache(settings.cache_url, timeout)
    bus = open_bus(settings.bus_url, client_id="acm-anticipate", timeout_s=timeout)
    register(bus, rel, cache, settings)
    health = HealthServer(settings.health_addr)
    await bus.start()
    await health.start()
    log.info("anticipate running (health on port %d)", health.port)
    try:
        await wait_for_stop_signal()
    finally:
        await health.stop()
        await bus.stop()
        await cache.close()
        await rel.close()


def main() -> None:
    import asyncio

    settings = load(AnticipateSettings)
    configure_logging(settings.log_level)
    asyncio.run(run(settings))
