"""The asyncio client (grpc.aio): the calls of acm_client.Client, awaited, with the same deadlines, retries and
exceptions."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Concatenate, ParamSpec, TypeVar

import grpc

from acm_client._calls import DEFAULT_ADDR, Attempts, Call, Connection, JobWait, Requests, Retry, SealingKeys, Tls
from acm_client._pb import gateway_pb2_grpc
from acm_client.types import Job, Scope, SealingKey

P = ParamSpec("P")
T = TypeVar("T")


def _awaited(build: Callable[P, Call[T]]) -> Callable[Concatenate[AsyncClient, P], Awaitable[T]]:
    """A coroutine method of AsyncClient with the signature and documentation of the Requests builder ``build``."""

    @functools.wraps(build)
    async def method(self: AsyncClient, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(build(*args, **kwargs))

    return method


class AsyncClient:
    """``AsyncClient(addr, api_key)``: as acm_client.Client; open it in the event loop that uses it (``async
    with``), and close it there."""

    def __init__(
        self,
        addr: str = DEFAULT_ADDR,
        api_key: str = "",
        *,
        tls: Tls | None = None,
        deadline: float = 10.0,
        retry: Retry | None = None,
    ) -> None:
        self._conn = conn = Connection.of(api_key, tls, retry, deadline)
        self._channel = (
            grpc.aio.insecure_channel(addr, options=conn.options)
            if conn.credentials is None
            else grpc.aio.secure_channel(addr, conn.credentials, options=conn.options)
        )
        self._stub = gateway_pb2_grpc.GatewayStub(self._channel)
        self._sealing_keys = SealingKeys()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    async def _run(self, call: Call[T]) -> T:
        attempts = Attempts(call, self._conn.deadline, self._conn.retry)
        method = getattr(self._stub, call.method)
        while True:
            try:
                response = await method(call.request, timeout=attempts.remaining(), metadata=self._conn.metadata)
                return call.result(response)
            except grpc.RpcError as exc:
                wait = attempts.after(exc)
            await asyncio.sleep(wait)

    async def sealing_key(self, scope: Scope, *, deadline: float | None = None) -> SealingKey:
        """get_sealing_key's key for the scope, kept until shortly before its valid_until (one call per scope and
        key lifetime)."""
        kept = self._sealing_keys.get(scope)
        if kept is not None:
            return kept
        return self._sealing_keys.keep(scope, await self.get_sealing_key(scope, deadline=deadline))

    async def wait_job(self, scope: Scope, job_id: str, *, wait: float = 30.0) -> Job:
        """Polls the job until it is done or failed; TimeoutError when it is still pending after ``wait`` s."""
        polling = JobWait(job_id, wait)
        # A job has no event to wait on from here: it is polled.
        while (delay := polling.next_delay(job := await self.get_job(scope, job_id))) is not None:  # noqa: ASYNC110
            await asyncio.sleep(delay)
        return job

    ingest = _awaited(Requests.ingest)
    ingest_batch = _awaited(Requests.ingest_batch)
    get_sealing_key = _awaited(Requests.get_sealing_key)
    get_job = _awaited(Requests.get_job)
    fetch = _awaited(Requests.fetch)
    forget = _awaited(Requests.forget)
    compact = _awaited(Requests.compact)
    define_agent = _awaited(Requests.define_agent)
    get_agent = _awaited(Requests.get_agent)
    list_agents = _awaited(Requests.list_agents)
    get_memory = _awaited(Requests.get_memory)
    list_memories = _awaited(Requests.list_memories)
    update_memory = _awaited(Requests.update_memory)
    delete_memory = _awaited(Requests.delete_memory)
    memory_history = _awaited(Requests.memory_history)
    export_user = _awaited(Requests.export_user)
    import_user = _awaited(Requests.import_user)
