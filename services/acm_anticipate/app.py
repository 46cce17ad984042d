"""Wiring for the anticipate process; register() also serves the embedded process."""

from __future__ import annotations

from dataclasses import dataclass

from acm import topics
from acm.adapters.grpc_memories import GrpcMemoryReader
from acm.adapters.grpc_retriever import GrpcRetriever
from acm.bootstrap import Relational
from acm.channels import open_channel
from acm.forget import ForgetHandler
from acm.owners import Owners, open_consumer
from acm.ports.bus import EventBus
from acm.ports.memories import SessionMemories
from acm.ports.retriever import Retriever
from acm.ports.stores import Cache
from acm.runtime import HealthServer, service_main
from acm_anticipate import GROUP
from acm_anticipate.handlers.memories import MemoriesIndexedHandler
from acm_anticipate.handlers.prefetch_signals import PrefetchSignalsHandler
from acm_anticipate.settings import AnticipateSettings
from acm_anticipate.usecases import DropHotState, SignalCounters, TrackMentions, WarmSession


@dataclass
class Anticipate:
    track: TrackMentions
    warm: WarmSession
    signals: SignalCounters


def register(
    bus: EventBus,
    rel: Relational,
    cache: Cache,
    retriever: Retriever,
    settings: AnticipateSettings,
    memories: SessionMemories,
    owners: Owners,
) -> Anticipate:
    """``retriever`` and ``memories``: retrieve's Retrieve and Memories APIs (in-process in embedded mode);
    ``owners``: the gateway's API keys and the architect's schemas."""
    track = TrackMentions(cache, settings.recent_entities, settings.hot_state_ttl_s)
    warm = WarmSession(
        bus,
        cache,
        retriever,
        memories,
        owners.schemas,
        track,
        settings.predict_budget_tokens,
        settings.hot_state_ttl_s,
    )
    signals = PrefetchSignalsHandler(warm, owners.keys, rel.audit)
    # After retrieve applied a write (not ingest's acm.memories.v1): the pool is built from retrieve's copy.
    bus.subscribe(topics.MEMORIES_INDEXED, GROUP, MemoriesIndexedHandler(track, warm))
    bus.subscribe(topics.PREFETCH_SIGNALS, GROUP, signals)
    bus.subscribe(topics.FORGET, GROUP, ForgetHandler(DropHotState(cache), owners.keys, rel.audit))
    return Anticipate(track, warm, signals.counters)


async def run(settings: AnticipateSettings) -> None:
    io = await open_consumer(settings, "anticipate")
    channel = open_channel(settings.retrieve_addr, io.tls, round_robin=True)
    reader = GrpcMemoryReader(channel, settings.rpc_timeout_s)
    retriever = GrpcRetriever(channel, settings.rpc_timeout_s)
    register(io.bus, io.rel, io.cache, retriever, settings, reader, io.owners)
    await io.serve(HealthServer(settings.health_addr), channels=[channel])


def main() -> None:
    service_main(AnticipateSettings, run)
