"""What a service reads from data another service owns (issue 19), wired for either mode: in-process over the
owner's store in the embedded process, over the owner's internal gRPC API (cached) in distributed mode."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from acm.adapters.grpc_architect import GrpcArchitect
from acm.adapters.grpc_keys import CachedKeySource, GrpcKeySource, keyring_from_gateway
from acm.bootstrap import Relational, open_bus, open_cache, open_relational
from acm.channels import ClientTls, open_channel
from acm.ports.bus import EventBus
from acm.ports.owners import KeySource, SchemaSource
from acm.ports.stores import ApiKeyRepo, Cache, SchemaRepo
from acm.runtime import Closeable, HealthServer, dependency_checks, serve_until_stopped
from acm.schemas import ArchitectSchemaSource, CachedSchemaSource, RepoSchemaSource
from acm.sealing import SealingBus
from acm.settings import ConsumerSettings, KeysFromGateway, SchemasFromArchitect


@dataclass(frozen=True)
class Owners:
    """The owners' data a service reads: API keys (the gateway's) and agent schemas (the architect's);
    ``channels``: what to close when the service stops."""

    keys: KeySource
    schemas: SchemaSource
    channels: tuple[grpc.aio.Channel, ...] = ()

    @classmethod
    def in_process(cls, api_keys: ApiKeyRepo, schemas: SchemaRepo) -> Owners:
        """The embedded process: the gateway's key store and the architect's schema store, read directly (no
        cache: a revoked key or a new schema counts at once)."""
        return cls(api_keys, RepoSchemaSource(schemas))


def keys_from_gateway(
    settings: KeysFromGateway, tls: ClientTls | None, timeout_s: float
) -> tuple[KeySource, grpc.aio.Channel]:
    """The gateway's Keys API at ACM_GATEWAY_ADDR, answers kept ACM_KEY_CACHE_TTL_S, ``timeout_s`` the deadline
    of a call."""
    channel = open_channel(settings.gateway_addr, tls, round_robin=True)
    return CachedKeySource(GrpcKeySource(channel, timeout_s), settings.key_cache_ttl_s), channel


def schemas_from_architect(
    settings: SchemasFromArchitect, tls: ClientTls | None, timeout_s: float
) -> tuple[SchemaSource, grpc.aio.Channel]:
    """The architect's GetAgent at ACM_ARCHITECT_ADDR, answers kept ACM_SCHEMA_CACHE_TTL_S."""
    channel = open_channel(settings.architect_addr, tls, round_robin=True)
    source = ArchitectSchemaSource(GrpcArchitect(channel, timeout_s, wait_for_ready=True))
    return CachedSchemaSource(source, settings.schema_cache_ttl_s), channel


def remote_owners(
    keys: KeysFromGateway, schemas: SchemasFromArchitect, tls: ClientTls | None, timeout_s: float
) -> Owners:
    """Both over gRPC (a distributed service: pass its settings as ``keys`` and ``schemas``)."""
    key_source, key_channel = keys_from_gateway(keys, tls, timeout_s)
    schema_source, schema_channel = schemas_from_architect(schemas, tls, timeout_s)
    return Owners(key_source, schema_source, (key_channel, schema_channel))


def sealed_bus_from_gateway(
    bus_url: str, service: str, keys: KeysFromGateway, tls: ClientTls | None, timeout_s: float
) -> tuple[SealingBus, grpc.aio.Channel]:
    """A distributed service's bus (client id ``acm-<service>``): bodies with a user's data sealed with the
    gateway's data keys and opened on delivery (acm.sealing); the channel to the gateway: to close at the stop."""
    keyring, channel = keyring_from_gateway(keys, tls, timeout_s)
    return SealingBus(open_bus(bus_url, client_id=f"acm-{service}", timeout_s=timeout_s), keyring), channel


@dataclass(frozen=True)
class Consumer:
    """What a consumer service (acm.settings.ConsumerSettings) opens first, the same way in each: its own store, the
    cache, its sealed bus, its owners' keys and schemas over gRPC (open_consumer)."""

    name: str
    rel: Relational
    cache: Cache
    bus: EventBus
    owners: Owners
    tls: ClientTls | None  # towards the internal services it calls
    channels: tuple[grpc.aio.Channel, ...]  # the owners' and the keyring's

    async def serve(
        self,
        server: HealthServer,
        resources: Sequence[Closeable] = (),
        channels: Sequence[grpc.aio.Channel] = (),
    ) -> None:
        """Until a signal, then everything closed: ``resources`` after the store and cache in the list, so closed
        before them; readiness follows the store and the bus."""
        await serve_until_stopped(
            self.name,
            server,
            self.bus,
            [self.rel, self.cache, *resources],
            channels=[*channels, *self.channels],
            checks=dependency_checks(self.rel, self.bus),
        )


async def open_consumer(settings: ConsumerSettings, name: str) -> Consumer:
    timeout, tls = settings.store_timeout_s, ClientTls.of(settings)
    rel = await open_relational(settings.database_url, timeout, service=name)
    cache = await open_cache(settings.cache_url, timeout)
    bus, keyring_channel = sealed_bus_from_gateway(settings.bus_url, name, settings, tls, timeout)
    owners = remote_owners(settings, settings, tls, timeout)
    return Consumer(name, rel, cache, bus, owners, tls, (*owners.channels, keyring_channel))
