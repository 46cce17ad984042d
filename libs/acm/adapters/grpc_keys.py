"""The gateway's API keys for the services that verify envelope signatures (acm.ports.owners.KeySource):
over the gateway's internal Keys API in distributed mode (a deadline on every call, a service token, UNAVAILABLE
as Unavailable), with a TTL cache in front; the wire form of a key, shared with the gateway's servicer."""

from __future__ import annotations

import time
from collections.abc import Callable

import grpc

from acm.auth import call_metadata, required_service_secret
from acm.convert import from_ts, ts
from acm.domain.models import utcnow
from acm.domain.scope import Grant, KeyRole
from acm.ports.owners import KeySource
from acm.ports.stores import ApiKey
from acm.runtime import error_of_status
from acm.ttl_cache import TtlCache
from acm.v1 import common_pb2, keys_pb2, keys_pb2_grpc


def key_to_pb(key: ApiKey | None) -> keys_pb2.GetKeyResponse:
    if key is None:
        return keys_pb2.GetKeyResponse(found=False)
    g = key.grant
    return keys_pb2.GetKeyResponse(
        found=True,
        key_id=key.key_id,
        client_id=key.client_id,
        key_hash=key.key_hash,
        name=key.name,
        created_at=ts(key.created_at),
        revoked=key.revoked,
        role=g.role.value,
        customers=list(g.customers),
        users=list(g.users),
    )


def key_from_pb(pb: keys_pb2.GetKeyResponse) -> ApiKey | None:
    if not pb.found:
        return None
    return ApiKey(
        key_id=pb.key_id,
        client_id=pb.client_id,
        key_hash=pb.key_hash,
        name=pb.name,
        created_at=from_ts(pb.created_at) or utcnow(),
        revoked=pb.revoked,
        grant=Grant(KeyRole(pb.role or KeyRole.ADMIN.value), tuple(pb.customers), tuple(pb.users)),
    )


class GrpcKeySource:
    """Implements KeySource over the gateway's Keys API. A call waits for the gateway up to its deadline (gRPC's
    wait_for_ready) instead of failing at once: a consumer rides out a gateway restart instead of spending its
    retries on it."""

    def __init__(self, channel: grpc.aio.Channel, timeout_s: float, service_token_secret: str | None = None) -> None:
        self._stub = keys_pb2_grpc.KeysStub(channel)
        self._timeout_s = timeout_s
        # Signs each call's scope (acm.auth.service_token); None: ACM_SERVICE_TOKEN_SECRET, required; "": unsigned.
        self._secret = required_service_secret() if service_token_secret is None else service_token_secret

    async def by_id(self, client_id: str, key_id: str) -> ApiKey | None:
        request = keys_pb2.GetKeyRequest(scope=common_pb2.Scope(client_id=client_id), key_id=key_id)
        try:
            answer: keys_pb2.GetKeyResponse = await self._stub.GetKey(
                request,
                timeout=self._timeout_s,
                metadata=call_metadata(self._secret, "GetKey", request.scope),
                wait_for_ready=True,
            )
        except grpc.aio.AioRpcError as exc:
            raise error_of_status(exc, "gateway") from exc
        key = key_from_pb(answer)
        # The gateway answers for the client asked about only; anything else is not this client's key.
        return key if key is not None and (key.client_id, key.key_id) == (client_id, key_id) else None


class CachedKeySource:
    """A KeySource whose answers are kept ``ttl_s`` (a revoked key still verifies for at most that long on this
    replica; an unknown key id is not asked about again within it)."""

    def __init__(
        self, source: KeySource, ttl_s: float, clock: Callable[[], float] = time.monotonic, max_entries: int = 10_000
    ) -> None:
        self._source = source
        self._cache: TtlCache[tuple[str, str], ApiKey | None] = TtlCache(ttl_s, max_entries, clock)

    async def by_id(self, client_id: str, key_id: str) -> ApiKey | None:
        return await self._cache.get((client_id, key_id), lambda: self._source.by_id(client_id, key_id))
