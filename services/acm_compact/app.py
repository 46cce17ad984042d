"""Wiring for the compact process; register() also serves the embedded process."""

from __future__ import annotations

from acm import topics
from acm.adapters.grpc_memories import GrpcMemoryReader
from acm.adapters.openai_llm import llm_from_settings
from acm.adapters.tokenizer import TiktokenCounter
from acm.bootstrap import Relational
from acm.channels import open_channel
from acm.forget import ForgetHandler
from acm.owners import Owners, open_consumer
from acm.ports.bus import EventBus
from acm.ports.memories import SessionMemories
from acm.ports.owners import SchemaSource
from acm.ports.stores import Cache
from acm.read.session import LoadSession
from acm.runtime import HealthServer, service_main
from acm.transport import ServerTls
from acm.v1 import compact_pb2, compact_pb2_grpc
from acm_compact import GROUP
from acm_compact.api import CompactApi, CompactServicer
from acm_compact.handlers.compaction_requests import CompactionRequestsHandler
from acm_compact.settings import CompactSettings
from acm_compact.usecases import CompactSession, DropWorkingContext, ReadWorkingMemory

SERVICE_NAME = compact_pb2.DESCRIPTOR.services_by_name["Compact"].full_name


def build_compactor(
    rel: Relational, cache: Cache, settings: CompactSettings, memories: SessionMemories, schemas: SchemaSource
) -> CompactSession:
    """``memories``: retrieve's Memories API (the session's turns; retrieve owns the memories' read model);
    ``schemas``: the architect's (acm.ports.owners)."""
    llm = llm_from_settings(settings.llm_url, settings.llm_model, settings.llm_api_key, settings.llm_timeout_s)
    load = LoadSession(memories, ReadWorkingMemory(rel.working), schemas, settings.max_session_turns)
    return CompactSession(load, rel.working, cache, TiktokenCounter(), llm, settings.llm_timeout_s)


def register(
    bus: EventBus,
    rel: Relational,
    cache: Cache,
    settings: CompactSettings,
    memories: SessionMemories,
    owners: Owners,
) -> CompactApi:
    """Subscribes the handlers; returns the Compact API (the gateway's Compact and GetWorkingMemory: served
    over gRPC, or called in-process by the embedded gateway). ``memories``: retrieve's Memories API; ``owners``:
    the gateway's API keys and the architect's schemas."""
    compactor = build_compactor(rel, cache, settings, memories, owners.schemas)
    bus.subscribe(topics.COMPACTION_REQUESTS, GROUP, CompactionRequestsHandler(compactor, owners.keys, rel.audit))
    bus.subscribe(topics.FORGET, GROUP, ForgetHandler(DropWorkingContext(cache, rel.working), owners.keys, rel.audit))
    return CompactApi(compactor, ReadWorkingMemory(rel.working))


async def run(settings: CompactSettings) -> None:
    io = await open_consumer(settings, "compact")
    channel = open_channel(settings.retrieve_addr, io.tls, round_robin=True)
    api = register(io.bus, io.rel, io.cache, settings, GrpcMemoryReader(channel, settings.rpc_timeout_s), io.owners)
    server = HealthServer(settings.listen_addr, [SERVICE_NAME], tls=ServerTls.of(settings))
    compact_pb2_grpc.add_CompactServicer_to_server(CompactServicer(api), server.server)
    await io.serve(server, channels=[channel])


def main() -> None:
    service_main(CompactSettings, run)
