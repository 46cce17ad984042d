"""What a service reads from data another service owns (issue 19), wired for either mode: in-process over the
owner's store in the embedded process, over the owner's internal gRPC API (cached) in distributed mode."""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from acm.adapters.grpc_architect import GrpcArchitect
from acm.adapters.grpc_keys import CachedKeySource, GrpcKeySource, keyring_from_gateway
from acm.bootstrap import open_bus
from acm.channels import ClientTls, open_channel
from acm.ports.owners import KeySource, SchemaSource
from acm.ports.stores import ApiKeyRepo, SchemaRepo
from acm.schemas import ArchitectSchemaSource, CachedSchemaSource, RepoSchemaSource
from acm.sealing import SealingBus
from acm.settings import KeysFromGateway, SchemasFromArchitect


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
