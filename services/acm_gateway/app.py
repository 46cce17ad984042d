"""Wiring for the gateway process; build_servicer() also serves the embedded process."""

from __future__ import annotations

import asyncio
import errno
import socket
from collections.abc import Sequence
from pathlib import Path

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2

from acm import topics
from acm.adapters.data_keys_sql import SqlDataKeyRepo
from acm.adapters.dead_letters_sql import SqlDeadLetterRepo
from acm.adapters.grpc_architect import GrpcArchitect
from acm.adapters.grpc_compactor import GrpcCompactor
from acm.adapters.grpc_memories import GrpcMemoryReader
from acm.adapters.grpc_retriever import GrpcRetriever
from acm.adapters.tokenizer import TiktokenCounter
from acm.bootstrap import Relational, open_bus, open_cache, open_relational
from acm.channels import ClientTls, open_channel
from acm.ports.architect import Architect
from acm.ports.bus import EventBus
from acm.ports.compactor import Compactor
from acm.ports.memories import MemoryReader
from acm.ports.owners import KeySource, SchemaSource
from acm.ports.retriever import Retriever
from acm.ports.stores import Cache
from acm.read.prefetching import PrefetchingRetriever
from acm.read.reader import read_side
from acm.read.session import LoadSession
from acm.runtime import LIVENESS, HealthServer, dependency_checks, serve_until_stopped, service_main
from acm.schemas import ArchitectSchemaSource, CachedSchemaSource
from acm.sealing import SealingBus, StoreKeyring, keyring_of, master_keys, shredder_of
from acm.transport import LOOPBACK_ONLY, ServerTls
from acm.v1 import gateway_pb2, gateway_pb2_grpc, keys_pb2, keys_pb2_grpc
from acm_gateway.agents import Agents
from acm_gateway.api import GatewayServicer
from acm_gateway.handlers.dead_letters import GROUP as DEAD_LETTERS_GROUP
from acm_gateway.handlers.dead_letters import DeadLetterHandler
from acm_gateway.handlers.jobs import GROUP as JOBS_GROUP
from acm_gateway.handlers.jobs import JobUpdatedHandler
from acm_gateway.handlers.prefetch_pools import PoolReadyHandler
from acm_gateway.http_api import HttpGateway, WebApp
from acm_gateway.http_server import HTTP_API, HttpServer
from acm_gateway.keys_api import KeysServicer
from acm_gateway.memories import MemoryApi
from acm_gateway.memory_events import BusMemoryEvents
from acm_gateway.request_log import RequestLog
from acm_gateway.sealing_keys import IssueSealingKey
from acm_gateway.settings import GatewaySettings
from acm_gateway.usecases import AcceptTurn, Authenticator, CompactNow, FetchContext, GetJob, RequestForget

WARM_GROUP = "gateway-warm"
# How long a replica keeps a data key it read: another replica's Forget destroys keys in the store, and a turn
# this replica seals with a destroyed key within that time is forgotten with its user (docs/privacy.md).
DATA_KEY_TTL_S = 1.0
SERVICE_NAME = gateway_pb2.DESCRIPTOR.services_by_name["Gateway"].full_name
# Internal, next to the public API: the services that verify envelope signatures read the keys through it.
KEYS_SERVICE_NAME = keys_pb2.DESCRIPTOR.services_by_name["Keys"].full_name


def build_servicer(
    rel: Relational,
    bus: EventBus,
    retriever: Retriever,
    cache: Cache,
    settings: GatewaySettings,
    schemas: SchemaSource,
    architect: Architect | None = None,
    compactor: Compactor | None = None,
    memory_reader: MemoryReader | None = None,
    *,
    apply_job_updates: bool = True,
) -> GatewayServicer:
    """``retriever`` is the full retrieval, or a PrefetchingRetriever around it (Fetch consults the
    session's prefetch pool first; then this replica also subscribes its warm-up to anticipate's
    PoolReady hints, so call this before the bus starts). ``architect``, ``compactor`` and ``memory_reader``:
    the architect's, the compact service's and retrieve's Memory API (None: their RPCs answer UNAVAILABLE).
    A session's context is read from its owners, compact (working memory) and retrieve (turns): without
    both, Fetch in a session returns retrieved memories only. ``schemas``: the architect's agent schemas
    (acm.ports.owners). ``apply_job_updates``: subscribe the jobs and dead letters handlers (False only for a
    second gateway on stores whose jobs another gateway of the same process already applies)."""
    load = None
    if compactor is not None and memory_reader is not None:
        load = LoadSession(memory_reader, compactor, schemas, settings.max_session_turns)
    reads = read_side(retriever, cache, TiktokenCounter(), load)  # the read path, in this process
    events = BusMemoryEvents(bus)
    if reads.warm_up is not None:
        # Its own group per replica, from now on: every replica warms its own memory, and a late hint is moot.
        bus.subscribe(
            topics.PREFETCH_POOLS,
            f"{WARM_GROUP}.{settings.instance_id}",
            PoolReadyHandler(reads.warm_up),
            from_now=True,
        )
    # Jobs' outcomes, reported by ingest and retrieve (the gateway owns the jobs table); both modes build this.
    dead_letters = SqlDeadLetterRepo.of(rel)
    if apply_job_updates:
        bus.subscribe(topics.JOBS, JOBS_GROUP, JobUpdatedHandler(rel.jobs))
        # What the consumers dead-lettered, kept without the events for ListDeadLetters (the same one gateway).
        for group in topics.DEAD_LETTER_GROUPS:
            bus.subscribe(topics.dead_letter(group), DEAD_LETTERS_GROUP, DeadLetterHandler(dead_letters))
    accept_turn = AcceptTurn(events, rel.jobs, schemas, settings.max_turn_bytes, settings.secret_model)
    return GatewayServicer(
        auth=Authenticator(rel.api_keys, rel.audit),
        accept_turn=accept_turn,
        get_job=GetJob(rel.jobs),
        fetch=FetchContext(reads, settings.default_budget_tokens, settings.max_budget_tokens),
        forget=RequestForget(events, rel.jobs, rel.audit, shredder_of(bus), dead_letters),
        compact=CompactNow(compactor),
        agents=Agents(architect) if architect is not None else None,
        memories=MemoryApi(memory_reader, events, rel.jobs, rel.audit, accept_turn),
        fetch_limits=settings.fetch_limits(),
        ingest_limits=settings.ingest_limits(),
        dead_letters=dead_letters,
        sealing_keys=IssueSealingKey(keyring_of(bus), settings.sealing_key_ttl_s),
    )


REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"


class CannotListen(OSError):
    """The gateway's address cannot be listened on: malformed, not this host's, or not allowed."""


class PortInUse(CannotListen):
    """Another process listens on the gateway's address (another gateway or `acm serve`, most likely)."""


def refuse_if_in_use(listen_addr: str) -> None:
    """Raise PortInUse when something already listens on ``listen_addr`` (host:port; port 0 is never in use),
    CannotListen when it cannot be listened on at all.

    A plain bind, as gRPC's own (SO_REUSEADDR, no SO_REUSEPORT), so it fails exactly when the server would;
    done before gRPC's bind so the refusal is one clear error instead of gRPC core's log line."""
    host, _, port = listen_addr.rpartition(":")
    if not port.isdigit() or int(port) > 65535:
        raise CannotListen(errno.EINVAL, f"{listen_addr!r} is not HOST:PORT (e.g. 127.0.0.1:50051)")
    if int(port) == 0:
        return
    try:
        addresses = socket.getaddrinfo(host.strip("[]") or None, int(port), type=socket.SOCK_STREAM)
    except OSError as exc:
        raise CannotListen(errno.EADDRNOTAVAIL, f"cannot listen on {listen_addr}: {exc.strerror}") from None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise PortInUse(errno.EADDRINUSE, f"{listen_addr} is already in use") from None
                raise CannotListen(exc.errno, f"cannot listen on {listen_addr}: {exc.strerror}") from None


class GatewayServer(HealthServer):
    """The public server: health, reflection (v1 and v1alpha), one log line per request, and a port of its
    own: gRPC sets SO_REUSEPORT by default, so a second gateway on the same port would start and share the
    calls with the first; here it is refused. ``http``: the HTTP/JSON API, started and stopped with it."""

    http: HttpServer | None = None

    def __init__(self, addr: str, service_names: Sequence[str] = (), tls: ServerTls = LOOPBACK_ONLY) -> None:
        refuse_if_in_use(addr)
        self.server = grpc.aio.server(interceptors=[RequestLog()], options=[("grpc.so_reuseport", 0)])
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self._names = [*service_names, health.SERVICE_NAME]
        try:
            self.port = tls.listen(self.server, addr, service_names)
        except RuntimeError:  # gRPC's "Failed to bind": taken between the check and the bind
            self.port = 0
        if self.port == 0:
            raise PortInUse(errno.EADDRINUSE, f"{addr} is already in use")
        self.probe = tls.probe_server(self.health, service_names)

    async def start(self) -> None:
        names = [*self._names, reflection.SERVICE_NAME, REFLECTION_V1]
        reflection.enable_server_reflection(names, self.server)
        self.server.add_generic_rpc_handlers((_reflection_v1(names),))
        await self.server.start()
        if self.probe is not None:
            await self.probe.server.start()
        # As HealthServer.start: liveness, then readiness from the checks given to watch(), kept up to date.
        await self.health.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
        await self._update(await self._failing())
        if self._checks:
            self._watcher = asyncio.create_task(self._watch(), name="readiness checks")
        if self.http is not None:
            await self.http.start()

    async def stop(self, grace_s: float = 2.0) -> None:
        if self.http is not None:
            await self.http.stop()
        await super().stop(grace_s)


def _reflection_v1(names: list[str]) -> grpc.GenericRpcHandler:
    """grpc.reflection.v1, which grpcio-reflection does not ship yet (grpc/grpc#38576): its messages are
    v1alpha's under another package, field for field, so v1alpha's servicer answers it; the v1 file is added
    to the descriptor pool so clients can describe the service itself."""
    pool = descriptor_pool.Default()
    try:
        pool.FindServiceByName(REFLECTION_V1)
    except KeyError:
        file = descriptor_pb2.FileDescriptorProto()
        reflection_pb2.DESCRIPTOR.CopyToProto(file)
        file.name, file.package = "grpc/reflection/v1/reflection.proto", "grpc.reflection.v1"
        v1alpha, v1 = ".grpc.reflection.v1alpha.", ".grpc.reflection.v1."
        for message in file.message_type:
            for field in message.field:
                if field.HasField("type_name"):
                    field.type_name = field.type_name.replace(v1alpha, v1)
        for method in file.service[0].method:
            method.input_type, method.output_type = (
                t.replace(v1alpha, v1) for t in (method.input_type, method.output_type)
            )
        pool.Add(file)
    info = grpc.stream_stream_rpc_method_handler(
        reflection.aio.ReflectionServicer(names).ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    return grpc.method_handlers_generic_handler(REFLECTION_V1, {"ServerReflectionInfo": info})


def build_server(
    servicer: GatewayServicer,
    listen_addr: str,
    tls: ServerTls = LOOPBACK_ONLY,
    http_addr: str = "",
    keys: KeySource | None = None,
    cors_origins: Sequence[str] = (),
    results_dir: Path | None = None,
    data_keys: StoreKeyring | None = None,
) -> GatewayServer:
    """The gRPC server, and with ``http_addr`` the HTTP/JSON API on the same servicer. ``keys``: also serve the
    internal Keys API over them (distributed mode; each call needs a service token, ACM_SERVICE_TOKEN_SECRET);
    the embedded process's consumers read the keys in-process. ``cors_origins``: the browser origins whose pages
    may call the HTTP API (none: same-origin pages only, e.g. the operator console); ``results_dir``: the benchmark
    plots the console shows."""
    if http_addr:  # refused before the gRPC port is taken
        refuse_if_in_use(http_addr)
        tls.check(http_addr, [HTTP_API])
    server = GatewayServer(listen_addr, [SERVICE_NAME] if keys is None else [SERVICE_NAME, KEYS_SERVICE_NAME], tls)
    gateway_pb2_grpc.add_GatewayServicer_to_server(servicer, server.server)
    if keys is not None:
        keys_pb2_grpc.add_KeysServicer_to_server(KeysServicer(keys, data_keys=data_keys), server.server)
    if http_addr:
        app = WebApp(HttpGateway(servicer), servicer.authenticator, server.health, cors_origins, results_dir)
        server.http = HttpServer(app, http_addr, tls)
    return server


async def run(settings: GatewaySettings) -> None:
    try:  # before any store is opened; the message never holds the value
        masters = master_keys(settings.master_key, settings.master_key_previous.split(","))
    except ValueError as exc:
        reason = "ACM_MASTER_KEY is required" if not settings.master_key else str(exc)
        raise SystemExit(f"GatewaySettings: cannot start: {reason} (docs/privacy.md)") from None
    timeout = settings.store_timeout_s
    rel = await open_relational(
        settings.database_url, timeout, (settings.db_pool_min, settings.db_pool_max), service="gateway"
    )
    cache = await open_cache(settings.cache_url, timeout)
    # The bus's data keys, in the gateway's store wrapped by the master key; turns and edits sealed (acm.sealing).
    data_keys = StoreKeyring(SqlDataKeyRepo.of(rel), masters, ttl_s=DATA_KEY_TTL_S)
    bus = SealingBus(open_bus(settings.bus_url, client_id="acm-gateway", timeout_s=timeout), data_keys)
    tls = ClientTls.of(settings)
    channel = open_channel(settings.retrieve_addr, tls, round_robin=True)
    architect_channel = open_channel(settings.architect_addr, tls, round_robin=True)
    compact_channel = open_channel(settings.compact_addr, tls, round_robin=True)
    retriever = PrefetchingRetriever(GrpcRetriever(channel, settings.rpc_timeout_s), cache)
    architect = GrpcArchitect(architect_channel, settings.rpc_timeout_s)
    # A compaction may take its LLM's time; reading the working memory is on a Fetch's path.
    compactor = GrpcCompactor(compact_channel, settings.compact_timeout_s, read_timeout_s=settings.rpc_timeout_s)
    reader = GrpcMemoryReader(channel, settings.rpc_timeout_s)  # retrieve serves the Memory API's reads
    schemas = CachedSchemaSource(ArchitectSchemaSource(architect), settings.schema_cache_ttl_s)
    servicer = build_servicer(rel, bus, retriever, cache, settings, schemas, architect, compactor, reader)
    server = build_server(
        servicer,
        settings.listen_addr,
        ServerTls.of(settings),
        settings.http_addr,
        rel.api_keys,
        settings.cors_origins_list(),
        Path(settings.results_dir) if settings.results_dir else None,
        data_keys=data_keys,
    )
    # Ready while Postgres answers; the bus only matters to Ingest and Forget, which say UNAVAILABLE on their own.
    await serve_until_stopped(
        "gateway",
        server,
        bus,
        [rel, cache],
        channels=[channel, architect_channel, compact_channel],
        checks=dependency_checks(rel),
    )


def main() -> None:
    service_main(GatewaySettings, run)
