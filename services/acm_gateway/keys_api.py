"""The gateway's internal Keys API: the services that verify envelope signatures read the API keys, which the
gateway owns, through it (acm.adapters.grpc_keys.GrpcKeySource). Each call carries a service token."""

from __future__ import annotations

import logging

import grpc

from acm.adapters.grpc_keys import key_to_pb
from acm.domain.scope import check_id
from acm.ports.owners import KeySource
from acm.sealing import StoreKeyring
from acm.servicing import InternalServicer
from acm.v1 import keys_pb2, keys_pb2_grpc

log = logging.getLogger("acm.gateway.keys")


class KeysServicer(InternalServicer[KeySource], keys_pb2_grpc.KeysServicer, log=log):
    def __init__(
        self, api: KeySource, service_token_secret: str | None = None, data_keys: StoreKeyring | None = None
    ) -> None:
        """``data_keys``: the bus's data keys (acm.sealing); None: GetDataKey answers not found."""
        super().__init__(api, service_token_secret)
        self._data_keys = data_keys

    async def GetKey(
        self, request: keys_pb2.GetKeyRequest, context: grpc.aio.ServicerContext
    ) -> keys_pb2.GetKeyResponse:
        async with self.serving(context, "GetKey", request.scope):
            check_id("scope.client_id", request.scope.client_id)
            return key_to_pb(await self._api.by_id(request.scope.client_id, request.key_id))

    async def GetDataKey(
        self, request: keys_pb2.GetDataKeyRequest, context: grpc.aio.ServicerContext
    ) -> keys_pb2.GetDataKeyResponse:
        async with self.serving(context, "GetDataKey", request.scope):
            scope = request.scope
            check_id("scope.client_id", scope.client_id)
            if self._data_keys is None:
                return keys_pb2.GetDataKeyResponse(found=False)
            owner = (scope.client_id, scope.customer_id, scope.user_id, scope.session_id)
            if request.key_id:
                key = await self._data_keys.by_id(owner, request.key_id)
            else:
                key = await self._data_keys.current(owner)
            if key is None:
                return keys_pb2.GetDataKeyResponse(found=False)
            return keys_pb2.GetDataKeyResponse(found=True, key_id=key.key_id, secret=key.secret)
