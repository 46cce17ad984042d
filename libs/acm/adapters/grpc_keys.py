"""The gateway's API keys for the services that verify envelope signatures (acm.ports.owners.KeySource):
over the gateway's internal Keys API in distributed mode (a deadline on every call, a service token, UNAVAILABLE
as Unavailable), with a TTL cache in front; the wire form of a key, shared with the gateway's servicer."""

from __future__ import annotations

import time
from collections.abc import Callable

import grpc

from acm.auth import call_metadata, required_service_secret
from acm.channels import ClientTls, open_channel
from acm.convert import fields_of, from_ts, ts
from acm.domain.models import utcnow
from acm.domain.scope import Grant, KeyRole
from acm.ports.owners import KeySource
from acm.ports.stores import ApiKey
from acm.runtime import error_of_status
from acm.sealing import DataKey, Owner, owned_by
from acm.settings import KeysFromGateway
from acm.ttl_cache import TtlCache
from acm.v1 import common_pb2, keys_pb2, keys_pb2_grpc

_KEY_FIELDS = ("key_id", "client_id", "key_hash", "name", "revoked")


def key_to_pb(key: ApiKey | None) -> keys_pb2.GetKeyResponse:
    if key is None:
        return keys_pb2.GetKeyResponse(found=False)
    g = key.grant
    return keys_pb2.GetKeyResponse(
        found=True,
        **fields_of(key, _KEY_FIELDS),
        created_at=ts(key.created_at),
        role=g.role.value,
        customers=list(g.customers),
        users=list(g.users),
    )


def key_from_pb(pb: keys_pb2.GetKeyResponse) -> ApiKey | None:
    if not pb.found:
        return None
    return ApiKey(
        **fields_of(pb, _KEY_FIELDS),
        created_at=from_ts(pb.created_at) or utcnow(),
        grant=Grant(KeyRole(pb.role or KeyRole.ADMIN.value), tuple(pb.customers), tuple(pb.users)),
    )


# Data keys kept at most (each cache is emptied past it: a replica sealing for more owners than this asks again).
_MAX_KEPT = 100_000


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


class GrpcKeyring:
    """Implements acm.sealing.Keyring over the gateway's Keys.GetDataKey (a deadline on every call, a service
    token), each answer kept ``ttl_s``. Within the TTL a key destroyed by a Forget still opens this replica's
    records, unless the Forget reaches it first on acm.forget.v1 (acm.sealing.SealingBus drops the forgotten
    owners' keys then). Opening a record sealed with a key that is not the owner's kept current one drops
    that current one, so a key made anew after a Forget replaces the destroyed one at once."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        timeout_s: float,
        ttl_s: float,
        service_token_secret: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stub = keys_pb2_grpc.KeysStub(channel)
        self._timeout_s = timeout_s
        self._ttl_s = ttl_s
        self._clock = clock
        self._secret = required_service_secret() if service_token_secret is None else service_token_secret
        self._current: dict[Owner, tuple[float, DataKey]] = {}
        # By (the record's owner, key id): a session's record may name its user's key (sealed before keys were per
        # session), which the gateway serves for that owner; kept under the owner asked for.
        self._by_id: dict[tuple[Owner, str], tuple[float, DataKey | None]] = {}

    async def _ask(self, owner: Owner, key_id: str) -> DataKey | None:
        scope = common_pb2.Scope(client_id=owner[0], customer_id=owner[1], user_id=owner[2], session_id=owner[3])
        request = keys_pb2.GetDataKeyRequest(scope=scope, key_id=key_id)
        try:
            answer: keys_pb2.GetDataKeyResponse = await self._stub.GetDataKey(
                request,
                timeout=self._timeout_s,
                metadata=call_metadata(self._secret, "GetDataKey", scope),
                wait_for_ready=True,
            )
        except grpc.aio.AioRpcError as exc:
            raise error_of_status(exc, "gateway") from exc
        if not answer.found or (key_id and answer.key_id != key_id):
            return None
        return DataKey(answer.key_id, owner, answer.secret)

    def _keep(self, owner: Owner, key_id: str, key: DataKey | None) -> None:
        if self._ttl_s > 0:
            self._by_id[owner, key_id] = (self._clock() + self._ttl_s, key)
            if len(self._by_id) > _MAX_KEPT:
                self._by_id.clear()

    async def current(self, owner: Owner) -> DataKey:
        kept = self._current.get(owner)
        if kept is not None and kept[0] > self._clock():
            return kept[1]
        key = await self._ask(owner, "")
        if key is None:
            raise ConnectionError("the gateway made no data key")  # retried by the delivery layer
        if self._ttl_s > 0:
            self._current[owner] = (self._clock() + self._ttl_s, key)
            if len(self._current) > _MAX_KEPT:
                self._current.clear()
        self._keep(owner, key.key_id, key)
        return key

    async def by_id(self, owner: Owner, key_id: str) -> DataKey | None:
        kept = self._current.get(owner)
        if kept is not None and kept[1].key_id != key_id:
            del self._current[owner]
        hit = self._by_id.get((owner, key_id))
        if hit is not None and hit[0] > self._clock():
            key = hit[1]
        else:
            key = await self._ask(owner, key_id)
            self._keep(owner, key_id, key)
        return key if key is not None and key.owner == owner else None

    def forgotten(self, prefix: Owner) -> None:
        for at in [at for at in self._by_id if owned_by(at[0], prefix)]:
            del self._by_id[at]
        for owner in [o for o in self._current if owned_by(o, prefix)]:
            del self._current[owner]


def keyring_from_gateway(
    settings: KeysFromGateway, tls: ClientTls | None, timeout_s: float
) -> tuple[GrpcKeyring, grpc.aio.Channel]:
    """The bus's data keys from the gateway at ACM_GATEWAY_ADDR, kept ACM_KEY_CACHE_TTL_S; a distributed service
    wraps its bus with them (acm.sealing.SealingBus). The channel: to close when the service stops."""
    channel = open_channel(settings.gateway_addr, tls, round_robin=True)
    return GrpcKeyring(channel, timeout_s, settings.key_cache_ttl_s), channel
