"""Wiring for the architect process; register() also serves the embedded process."""

from __future__ import annotations

from collections.abc import Sequence

from acm import topics
from acm.adapters.embedders import build_embedder
from acm.adapters.openai_llm import llm_from_settings
from acm.bootstrap import Relational, open_relational
from acm.channels import ClientTls
from acm.domain.archetypes import Embed
from acm.owners import keys_from_gateway, sealed_bus_from_gateway
from acm.ports.bus import EventBus
from acm.ports.embedder import Embedder
from acm.ports.owners import KeySource
from acm.runtime import HealthServer, dependency_checks, serve_until_stopped, service_main
from acm.transport import ServerTls
from acm.v1 import architect_pb2, architect_pb2_grpc
from acm_architect import GROUP
from acm_architect.api import ArchitectApi, ArchitectServicer
from acm_architect.handlers.turns import TurnsHandler
from acm_architect.settings import ArchitectSettings
from acm_architect.usecases import DefineAgent, EnsureAgent, GetAgent, ListAgents

SERVICE_NAME = architect_pb2.DESCRIPTOR.services_by_name["Architect"].full_name


# Archetype matching's MIN_EMBEDDING_SCORE is calibrated on this model's cosine scale: bge models score
# unrelated texts 0.5-0.6 and would never fall back to the general schema. With another ACM_EMBEDDER, this
# one (shipped on PyPI) is loaded on the first description that needs it.
ARCHETYPE_EMBEDDER = "all-minilm-l6-v2"


def _embed(embedder: Embedder | None, threads: int = 1) -> Embed | None:
    if embedder is None:
        return None

    def embed(texts: list[str]) -> Sequence[Sequence[float]]:
        model = embedder if embedder.name == ARCHETYPE_EMBEDDER else build_embedder(ARCHETYPE_EMBEDDER, threads)
        return [list(v) for v in model.embed(texts)]

    return embed


def register(
    bus: EventBus, rel: Relational, settings: ArchitectSettings, keys: KeySource, embedder: Embedder | None = None
) -> ArchitectApi:
    """``keys``: the gateway's API keys (acm.ports.owners), to verify the turns it sees."""
    ensure = EnsureAgent(rel.schemas, bus)
    bus.subscribe(topics.TURNS, GROUP, TurnsHandler(ensure, keys, rel.audit))
    llm = llm_from_settings(settings.llm_url, settings.llm_model, settings.llm_api_key, settings.llm_timeout_s)
    define = DefineAgent(rel.schemas, bus, _embed(embedder, settings.compute_threads), llm)
    return ArchitectApi(define, GetAgent(rel.schemas), ListAgents(rel.schemas))


async def run(settings: ArchitectSettings) -> None:
    rel = await open_relational(settings.database_url, settings.store_timeout_s, service="architect")
    bus, keyring_channel = sealed_bus_from_gateway(
        settings.bus_url, "architect", settings, ClientTls.of(settings), settings.store_timeout_s
    )
    # Only archetype matching embeds here, always with ARCHETYPE_EMBEDDER ("" = keywords only).
    embedder = build_embedder(ARCHETYPE_EMBEDDER, settings.compute_threads) if settings.embedder else None
    keys, channel = keys_from_gateway(settings, ClientTls.of(settings), settings.store_timeout_s)
    api = register(bus, rel, settings, keys, embedder)
    server = HealthServer(settings.listen_addr, [SERVICE_NAME], tls=ServerTls.of(settings))
    architect_pb2_grpc.add_ArchitectServicer_to_server(ArchitectServicer(api), server.server)
    await serve_until_stopped(
        "architect", server, bus, [rel], channels=[channel, keyring_channel], checks=dependency_checks(rel, bus)
    )


def main() -> None:
    service_main(ArchitectSettings, run)
