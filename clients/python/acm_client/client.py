"""The blocking client. Every call has a deadline (``deadline``: the seconds it may take; the client's
``deadline`` unless given) that all its attempts share; failures raise an AcmError subclass (acm_client.errors)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from types import TracebackType
from typing import Concatenate, ParamSpec, TypeVar

import grpc

from acm_client._calls import DEFAULT_ADDR, Attempts, Call, Connection, JobWait, Requests, Retry, SealingKeys, Tls
from acm_client._pb import gateway_pb2_grpc
from acm_client.types import Job, Scope, SealingKey

P = ParamSpec("P")
T = TypeVar("T")


def _blocking(build: Callable[P, Call[T]]) -> Callable[Concatenate[Client, P], T]:
    """A method of Client with the signature and documentation of the Requests builder ``build``."""

    @functools.wraps(build)
    def method(self: Client, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(build(*args, **kwargs))

    return method


class Client:
    """``Client(addr, api_key)`` for a gateway on this host in plaintext; ``tls=Tls(...)`` for one that serves
    TLS. ``deadline``: each call's default deadline in seconds; ``retry``: how idempotent calls are retried on
    UNAVAILABLE (acm_client.Requests says which calls are). Use it as a context manager, or call close()."""

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
            grpc.insecure_channel(addr, options=conn.options)
            if conn.credentials is None
            else grpc.secure_channel(addr, conn.credentials, options=conn.options)
        )
        self._stub = gateway_pb2_grpc.GatewayStub(self._channel)
        self._sealing_keys = SealingKeys()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._channel.close()

    def _run(self, call: Call[T]) -> T:
        attempts = Attempts(call, self._conn.deadline, self._conn.retry)
        method = getattr(self._stub, call.method)
        while True:
            try:
                return call.result(method(call.request, timeout=attempts.remaining(), metadata=self._conn.metadata))
            except grpc.RpcError as exc:
                wait = attempts.after(exc)
            time.sleep(wait)

    def sealing_key(self, scope: Scope, *, deadline: float | None = None) -> SealingKey:
        """get_sealing_key's key for the scope, kept until shortly before its valid_until (one call per scope and
        key lifetime)."""
        kept = self._sealing_keys.get(scope)
        if kept is not None:
            return kept
        return self._sealing_keys.keep(scope, self.get_sealing_key(scope, deadline=deadline))

    def wait_job(self, scope: Scope, job_id: str, *, wait: float = 30.0) -> Job:
        """Polls the job until it is done or failed; TimeoutError when it is still pending after ``wait`` s."""
        polling = JobWait(job_id, wait)
        while (delay := polling.next_delay(job := self.get_job(scope, job_id))) is not None:
            time.sleep(delay)
        return job

    ingest = _blocking(Requests.ingest)
    ingest_batch = _blocking(Requests.ingest_batch)
    get_sealing_key = _blocking(Requests.get_sealing_key)
    get_job = _blocking(Requests.get_job)
    fetch = _blocking(Requests.fetch)
    forget = _blocking(Requests.forget)
    compact = _blocking(Requests.compact)
    define_agent = _blocking(Requests.define_agent)
    get_agent = _blocking(Requests.get_agent)
    list_agents = _blocking(Requests.list_agents)
    get_memory = _blocking(Requests.get_memory)
    list_memories = _blocking(Requests.list_memories)
    update_memory = _blocking(Requests.update_memory)
    delete_memory = _blocking(Requests.delete_memory)
    memory_history = _blocking(Requests.memory_history)
    export_user = _blocking(Requests.export_user)
    import_user = _blocking(Requests.import_user)
