"""Wiring for the anticipate process; register() also serves the embedded process."""

from __future__ import annotations

from acm import topics
from acm.bootstrap import Relational, open_bus, open_cache, open_relational
from acm.ports.bus import EventBus
from acm.ports.stores import Cache
from acm.runtime import HealthServer, serve_until_stopped, service_main
from acm_anticipate import GROUP
from acm_anticipate.handlers.forget import ForgetHandler
from acm_anticipate.handlers.memories import MemoriesHandler
from acm_anticipate.settings import AnticipateSettings
from acm_anticipate.usecases import DropHotState, TrackMentions


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
    await serve_until_stopped("anticipate", HealthServer(settings.health_addr), bus, [rel, cache])


def main() -> None:
    service_main(AnticipateSettings, run)
