"""Wiring for the architect process; register() also serves the embedded process."""

from __future__ import annotations

import logging

from acm import topics
from acm.bootstrap import Relational, open_bus, open_relational
from acm.ports.bus import EventBus
from acm.runtime import HealthServer, configure_logging, wait_for_stop_signal
from acm.settings import load
from acm_architect import GROUP
from acm_architect.handlers.turns import TurnsHandler
from acm_architect.settings import ArchitectSettings
from acm_architect.usecases import EnsureAgent

log = logging.getLogger("acm.architect")


def register(bus: EventBus, rel: Relational) -> EnsureAgent:
    ensure = EnsureAgent(rel.schemas, bus)
    bus.subscribe(topics.TURNS, GROUP, TurnsHandler(ensure, rel.api_keys, rel.audit))
    return ensure


async def run(settings: ArchitectSettings) -> None:
    rel = await open_relational(settings.database_url, settings.store_timeout_s)
    bus = open_bus(settings.bus_url, client_id="acm-architect", timeout_s=settings.store_timeout_s)
    register(bus, rel)
    health = HealthServer(settings.health_addr)
    await bus.start()
    await health.start()
    log.info("architect running (health on port %d)", health.port)
    try:
        await wait_for_stop_signal()
    finally:
        await health.stop()
        await bus.stop()
        await rel.close()


def main() -> None:
    import asyncio

    settings = load(ArchitectSettings)
    configure_logging(settings.log_level)
    asyncio.run(run(settings))
