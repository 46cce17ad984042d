"""Wiring for the gateway process; build_servicer() also serves the embedded process."""

from __future__ import annotations

import grpc

from acm import topics
from acm.adapters.prefetching_retriever import PrefetchingRetriever
from acm.adapters.tokenizer import TiktokenCounter
from acm.bootstrap import Relational, open_bus, open_cache, open_relational
from acm.ports.architect import Architect
from acm.ports.bus import EventBus
from acm.ports.retriever import Retriever
from acm.ports.stores import Cache
from acm.runtime import HealthServer, serve_until_stopped, service_main
from acm.session_memory import LoadSession
from acm.v1 import gateway_pb2, gateway_pb2_grpc
from acm_compact.app import build_compactor
from acm_compact.settings import CompactSettings
from acm_gateway.agents import Agents
from acm_gateway.api import GatewayServicer
from acm_gateway.architect_client import GrpcArchitect
from acm_gateway.handlers.prefetch_pools import PoolReadyHandler
from acm_gateway.kept_sessions import KeptSessions
from acm_gateway.retrieve_client import GrpcRetriever
from acm_gateway.session_context import SessionContext
from acm_gateway.settings import GatewaySettings
from acm_gateway.usecases import AcceptTurn, Authenticator, CompactNow, FetchContext, GetJob, RequestForget
from acm_gateway.warmup import WarmUp

WARM_GROUP = "gateway-warm"
SERVICE_NAME = gateway_pb2.DESCRIPTOR.services_by_name["Gateway"].full_name


def build_servicer(
    rel: Relational,
    bus: EventBus,
    retriever: Retriever,
    cache: Cache,
    settings: GatewaySettings,
    architect: Architect | None = None,
) -> GatewayServicer:
    """``retriever`` is the full retrieval, or a PrefetchingRetriever around it (Fetch consults the
    session's prefetch pool first; then this replica also subscribes its warm-up to anticipate's
    PoolReady hints, so call this before the bus starts)."""
    tokens = TiktokenCounter()
    load = LoadSession(rel.memories, rel.working, rel.schemas, settings.max_session_turns)
    # The Compact RPC runs the compact service's use case here, on the shared stores (see CompactNow).
    compactor = build_compactor(
        rel,
        cache,
        CompactSettings(database_url=settings.database_url, bus_url=settings.bus_url, cache_url=settings.cache_url),
    )
    sessions = KeptSessions(load, cache)
    if isinstance(retriever, PrefetchingRetriever):
        # Its own group per replica, from now on: every replica warms its own memory, and a late hint is moot.
        bus.subscribe(
            topics.PREFETCH_POOLS,
            f"{WARM_GROUP}.{settings.instance_id}",
            PoolReadyHandler(WarmUp(retriever, sessions, tokens)),
            from_now=True,
        )
    return GatewayServicer(
        auth=Authenticator(rel.api_keys, rel.audit),
        accept_turn=AcceptTurn(bus, rel.jobs, rel.schemas, settings.max_turn_bytes),
        get_job=GetJob(rel.jobs),
        fetch=FetchContext(
            retriever,
            settings.default_budget_tokens,
            settings.max_budget_tokens,
            SessionContext(retriever, tokens, sessions),
        ),
        forget=RequestForget(bus, rel.jobs, rel.audit),
        compact=CompactNow(compactor, load, tokens),
        agents=Agents(architect) if architect is not None else None,
    )


def build_server(servicer: GatewayServicer, listen_addr: str) -> HealthServer:
    server = HealthServer(listen_addr, [SERVICE_NAME])
    gateway_pb2_grpc.add_GatewayServicer_to_server(servicer, server.server)
    return server


async def run(settings: GatewaySettings) -> None:
    timeout = settings.store_timeout_s
    rel = await open_relational(settings.database_url, timeout)
    cache = await open_cache(settings.cache_url, timeout)
    bus = open_bus(settings.bus_url, client_id="acm-gateway", timeout_s=timeout)
    # round_robin over every address the name resolves to (a headless Service in k8s), so one
    # gateway spreads its calls over all retrieve replicas instead of pinning one.
    channel = grpc.aio.insecure_channel(settings.retrieve_addr, options=[("grpc.lb_policy_name", "round_robin")])
    architect_channel = grpc.aio.insecure_channel(
        settings.architect_addr, options=[("grpc.lb_policy_name", "round_robin")]
    )
    retriever = PrefetchingRetriever(GrpcRetriever(channel, settings.rpc_timeout_s), cache)
    architect = GrpcArchitect(architect_channel, settings.rpc_timeout_s)
    servicer = build_servicer(rel, bus, retriever, cache, settings, architect)
    server = build_server(servicer, settings.listen_addr)
    await serve_until_stopped("gateway", server, bus, [rel, cache], channels=[channel, architect_channel])


def main() -> None:
    service_main(GatewaySettings, run)
