"""Wiring for the retrieve process; register() and build_api() also serve the embedded process."""

from __future__ import annotations

import logging

from acm import topics
from acm.adapters.embedders import build_embedder
from acm.adapters.tokenizer import TiktokenCounter
from acm.bootstrap import Relational, open_graph, open_vectors
from acm.forget import ForgetHandler, ForgetJob
from acm.job_events import JobEvents
from acm.owners import open_consumer
from acm.ports.bus import EventBus
from acm.ports.embedder import Embedder
from acm.ports.owners import KeySource, SchemaSource
from acm.ports.stores import Cache, GraphStore, VectorStore
from acm.reindex import warn_other_models
from acm.runtime import HealthServer, service_main
from acm.transport import ServerTls
from acm.v1 import memories_pb2, memories_pb2_grpc, retrieve_pb2, retrieve_pb2_grpc
from acm_retrieve import GROUP
from acm_retrieve.api import RetrieveApi, RetrieveServicer
from acm_retrieve.handlers.memories import MemoriesHandler
from acm_retrieve.memories import ReadMemories
from acm_retrieve.memories_api import MemoriesServicer
from acm_retrieve.projection import MemoryProjection
from acm_retrieve.settings import RetrieveSettings
from acm_retrieve.usecases import Retrieve

log = logging.getLogger("acm.retrieve")


def build_api(
    rel: Relational, vectors: VectorStore, graph: GraphStore, embedder: Embedder, schemas: SchemaSource
) -> RetrieveApi:
    """``schemas``: the architect's (acm.ports.owners)."""
    return RetrieveApi(Retrieve(rel.memories, vectors, graph, schemas, embedder, TiktokenCounter()))


def build_memories(rel: Relational, graph: GraphStore) -> ReadMemories:
    """The Memory API's reads (acm.ports.memories.MemoryReader)."""
    return ReadMemories(rel.memories, graph)


def register(
    bus: EventBus,
    rel: Relational,
    vectors: VectorStore,
    graph: GraphStore,
    embedder: Embedder,
    keys: KeySource,
    cache: Cache,
) -> None:
    """``keys``: the gateway's API keys (acm.ports.owners), to verify Forget requests; ``cache``: where prefetched
    pools' generations are, made stale once a change reached this service's copy of the memories; ``graph``: the
    entity graph, retrieve's alone (acm.ownership.GRAPH_OWNER), kept from the same events."""
    # rel.memories: retrieve's own store, the projection of acm.memories.v1 this keeps.
    projection = MemoryProjection(rel.memories, vectors, graph, cache)
    jobs = JobEvents(bus)
    bus.subscribe(topics.MEMORIES, GROUP, MemoriesHandler(projection, jobs, embedder.dim, bus))
    # Its erasure is a part of the forget job: DONE only once this copy, the vectors, the graph and the pools are
    # gone too.
    bus.subscribe(
        topics.FORGET, GROUP, ForgetHandler(projection.forget, keys, rel.audit, ForgetJob(GROUP, jobs, rel.processed))
    )


async def run(settings: RetrieveSettings) -> None:
    timeout = settings.store_timeout_s
    embedder = build_embedder(settings.embedder, settings.compute_threads, settings.models_dir, settings.models_source)
    # Its own store (schema acm_retrieve): the memories' read model this service builds from acm.memories.v1.
    io = await open_consumer(settings, "retrieve")
    rel = io.rel
    vectors = await open_vectors(settings.vector_url, timeout)
    graph = await open_graph(settings.graph_url, timeout)
    await vectors.ensure(embedder.dim)
    await warn_other_models(vectors, embedder.name, log)
    register(io.bus, rel, vectors, graph, embedder, io.owners.keys, io.cache)
    server = HealthServer(
        settings.listen_addr,
        [
            retrieve_pb2.DESCRIPTOR.services_by_name["Retrieve"].full_name,
            memories_pb2.DESCRIPTOR.services_by_name["Memories"].full_name,
        ],
        tls=ServerTls.of(settings),
    )
    retrieve_pb2_grpc.add_RetrieveServicer_to_server(
        RetrieveServicer(build_api(rel, vectors, graph, embedder, io.owners.schemas)), server.server
    )
    memories_pb2_grpc.add_MemoriesServicer_to_server(MemoriesServicer(build_memories(rel, graph)), server.server)
    await io.serve(server, [vectors, graph])


def main() -> None:
    service_main(RetrieveSettings, run)
