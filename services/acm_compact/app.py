"""Wiring for the compact process; register() also serves the embedded process."""

from __future__ import annotations

from acm import topics
from acm.bootstrap import Relational, open_bus, open_cache, open_relational
from acm.ports.bus import EventBus
from acm.ports.stores import Cache
from acm.runtime import HealthServer, serve_until_stopped, service_main
from acm_compact import GROUP
from acm_compact.handlers.compaction_requests import CompactionRequestsHandler
from acm_compact.handlers.forget import ForgetHandler
from acm_compact.settings import CompactSettings
from acm_compact.usecases import DropWorkingContext, TrimSession


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
    await serve_until_stopped("compact", HealthServer(settings.health_addr), bus, [rel, cache])


def main() -> None:
    service_main(CompactSettings, run)
