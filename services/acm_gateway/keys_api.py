"""The gateway's internal Keys API: the services that verify envelope signatures read the API keys, which the
gateway owns, through it (acm.adapters.grpc_keys.GrpcKeySource). Each call carries a service token."""

from __future__ import annotations

import logging

import grpc

from acm.adapters.grpc_keys import key_to_pb
from acm.domain.scope import check_id
from acm.ports.owners import KeySource
from acm.servicing import InternalServicer
from acm.v1 import keys_pb2, keys_pb2_grpc

log = logging.getLogger("acm.gateway.keys")


class KeysServicer(InternalServicer[KeySource], keys_pb2_grpc.KeysServicer, log=log):
    async def GetKey(
        self, request: keys_pb2.GetKeyRequest, context: grpc.aio.ServicerContext
    ) -> keys_pb2.GetKeyResponse:
        async with self.serving(context, "GetKey", request.scope):
            check_id("scope.client_id", request.scope.client_id)
            return key_to_pb(await self._api.by_id(request.scope.client_id, request.key_id))
