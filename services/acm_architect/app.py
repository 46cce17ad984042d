"""Wiring for the architect process; register() also serves the embedded process."""

from __future__ import annotations

from acm import topics
from acm.bootstrap import Relational, open_bus, open_relational
from acm.ports.bus import EventBus
from acm.runtime import HealthServer, serve_until_stopped, service_main
from acm_architect import GROUP
from acm_architect.handlers.turns import TurnsHandler
from acm_architect.settings import ArchitectSettings
from acm_architect.usecases import EnsureAgent


def register(bus: EventBus, rel: Relational) -> EnsureAgent:
    ensure = EnsureAgent(rel.schemas, bus)
    bus.subscribe(topics.TURNS, GROUP, TurnsHandler(ensure, rel.api_keys, rel.audit))
    return ensure


async def run(settings: ArchitectSettings) -> None:
    rel = await open_relational(settings.database_url, settings.store_timeout_s)
    bus = open_bus(settings.bus_url, client_id="acm-architect", timeout_s=settings.store_timeout_s)
    register(bus, rel)
    await serve_until_stopped("architect", HealthServer(settings.health_addr), bus, [rel])


def main() -> None:
    service_main(ArchitectSettings, run)
