"""Wiring for the compact process; register() also serves the embedded process."""

from __future__ import annotations

from acm import topics
from acm.adapters.openai_llm import llm_from_settings
from acm.adapters.tokenizer import TiktokenCounter
from acm.bootstrap import Relational, open_bus, open_cache, open_relational
from acm.forget import ForgetHandler
from acm.ports.bus import EventBus
from acm.ports.stores import Cache
from acm.runtime import HealthServer, dependency_checks, serve_until_stopped, service_main
from acm.session_memory import LoadSession
from acm.transport import ServerTls
from acm.v1 import compact_pb2, compact_pb2_grpc
from acm_compact import GROUP
from acm_compact.api import CompactApi, CompactServicer
from acm_compact.handlers.compaction_requests import CompactionRequestsHandler
from acm_compact.settings import CompactSettings
from acm_compact.usecases import CompactSession, DropWorkingContext

SERVICE_NAME = compact_pb2.DESCRIPTOR.services_by_name["Compact"].full_name


def build_compactor(rel: Relational, cache: Cache, settings: CompactSettings) -> CompactSession:
    llm = llm_from_settings(settings.llm_url, settings.llm_model, settings.llm_api_key, settings.llm_timeout_s)
    load = LoadSession(rel.memories, rel.working, rel.schemas, settings.max_session_turns)
    return CompactSession(load, rel.working, cache, TiktokenCounter(), llm, settings.llm_timeout_s)


def register(bus: EventBus, rel: Relational, cache: Cache, settings: CompactSettings) -> CompactApi:
    """Subscribes the handlers; returns the Compact API (the gateway's Compact RPC: served over gRPC, or
    called in-process by the embedded gateway)."""
    compactor = build_compactor(rel, cache, settings)
    bus.subscribe(topics.COMPACTION_REQUESTS, GROUP, CompactionRequestsHandler(compactor))
    bus.subscribe(topics.FORGET, GROUP, ForgetHandler(DropWorkingContext(cache, rel.working), rel.api_keys, rel.audit))
    return CompactApi(compactor)


async def run(settings: CompactSettings) -> None:
    timeout = settings.store_timeout_s
    rel = await open_relational(settings.database_url, timeout)
    cache = await open_cache(settings.cache_url, timeout)
    bus = open_bus(settings.bus_url, client_id="acm-compact", timeout_s=timeout)
    api = register(bus, rel, cache, settings)
    server = HealthServer(settings.listen_addr, [SERVICE_NAME], tls=ServerTls.of(settings))
    compact_pb2_grpc.add_CompactServicer_to_server(CompactServicer(api), server.server)
    await serve_until_stopped("compact", server, bus, [rel, cache], checks=dependency_checks(rel, bus))


def main() -> None:
    service_main(CompactSettings, run)
