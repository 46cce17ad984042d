"""What the sync and the async client share: the requests, which of them are retried, the deadline that every
attempt of a call shares, the backoff, TLS and the channel's options."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Generic, TypeVar

import grpc

from acm_client._pb import gateway_pb2, memories_pb2
from acm_client.errors import AcmError, from_rpc_error
from acm_client.types import (
    Accepted,
    AgentSchema,
    Compaction,
    Context,
    ExportPage,
    Job,
    MemoryFilter,
    MemoryJob,
    MemoryPage,
    Scope,
    SealingKey,
    StoredMemory,
    Tier,
    Turn,
    _pb_enum,
    _stamp,
)

T = TypeVar("T")
DEFAULT_ADDR = "127.0.0.1:50051"
ALL = MemoryFilter()


@dataclass(frozen=True)
class Retry:
    """Retries of a call that failed with UNAVAILABLE, for idempotent calls only (see ``Call.idempotent``):
    ``attempts`` in all, waiting ``initial_backoff`` seconds, then ``multiplier`` times more each time up to
    ``max_backoff`` (each wait jittered down by up to half), and never past the call's deadline."""

    attempts: int = 4
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    multiplier: float = 2.0

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.initial_backoff < 0 or self.max_backoff < self.initial_backoff:
            raise ValueError(f"{self}: attempts ≥ 1 and 0 ≤ initial_backoff ≤ max_backoff")

    def backoff(self, failed: int) -> float:
        """The wait after the ``failed``-th failed attempt."""
        ceiling = min(self.max_backoff, self.initial_backoff * self.multiplier ** (failed - 1))
        return ceiling * random.uniform(0.5, 1.0)


NO_RETRY = Retry(attempts=1)


@dataclass(frozen=True)
class Tls:
    """TLS towards the gateway. ``ca_file`` None: the system's roots; ``cert_file`` and ``key_file``: this
    client's certificate, for a gateway that requires one (mTLS); ``server_name``: the name to check in the
    server's certificate instead of the address's host."""

    ca_file: Path | str | None = None
    cert_file: Path | str | None = None
    key_file: Path | str | None = None
    server_name: str = ""

    def __post_init__(self) -> None:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("a client certificate needs both cert_file and key_file")

    def credentials(self) -> grpc.ChannelCredentials:
        def read(path: Path | str | None) -> bytes | None:
            return Path(path).read_bytes() if path is not None else None

        return grpc.ssl_channel_credentials(read(self.ca_file), read(self.key_file), read(self.cert_file))


def channel_options(tls: Tls | None, retry: Retry) -> list[tuple[str, Any]]:
    # gRPC waits ~1 s (growing) before reconnecting after a failed connect, failing calls fast meanwhile; its
    # pace is set to the retries' so that a retry after a short outage finds a fresh connection attempt.
    initial_ms = max(int(retry.initial_backoff * 1000), 10)
    options: list[tuple[str, Any]] = [
        ("grpc.initial_reconnect_backoff_ms", initial_ms),
        ("grpc.min_reconnect_backoff_ms", initial_ms),
        ("grpc.max_reconnect_backoff_ms", max(int(retry.max_backoff * 1000), initial_ms)),
    ]
    if tls is not None and tls.server_name:
        options.append(("grpc.ssl_target_name_override", tls.server_name))
    return options


def auth_metadata(api_key: str) -> tuple[tuple[str, str], ...]:
    if not api_key:
        raise ValueError("an API key is needed: pass api_key= (an `acm serve` prints its dev key)")
    return (("authorization", f"Bearer {api_key}"),)


@dataclass(frozen=True)
class Call(Generic[T]):
    """One RPC: its Gateway method, request, how the answer becomes a result, whether sending it twice has the
    effect of sending it once (only then is it retried on UNAVAILABLE), and its deadline (None: the client's)."""

    method: str
    request: Any
    result: Callable[[Any], T]
    idempotent: bool
    deadline: float | None


class Attempts:
    """The attempts of one call: the deadline they share, and after a failure, the wait before the next one or
    the AcmError to raise."""

    def __init__(self, call: Call[Any], default_deadline: float, retry: Retry) -> None:
        self._retry = retry if call.idempotent else NO_RETRY
        self._deadline = time.monotonic() + (default_deadline if call.deadline is None else call.deadline)
        self.sent = 0

    def remaining(self) -> float:
        self.sent += 1
        return max(self._deadline - time.monotonic(), 0.0)

    def after(self, exc: grpc.RpcError) -> float:
        """The seconds to wait before the next attempt, or raises the call's AcmError."""
        error: AcmError = from_rpc_error(exc, self.sent)
        if error.code != "UNAVAILABLE" or self.sent >= self._retry.attempts:
            raise error from None
        wait = self._retry.backoff(self.sent)
        if time.monotonic() + wait >= self._deadline:
            raise error from None
        return wait


def _jobs(r: Any) -> MemoryJob:
    return MemoryJob(r.job_id, r.memory_id)


class Requests:
    """The Gateway's calls, built from the SDK's types: each is a method of Client and of AsyncClient with this
    signature. ``deadline``: the seconds the call may take, retries included (None: the client's ``deadline``).

    Retried on UNAVAILABLE (idempotent): the reads (get_job, fetch, get_agent, list_agents, get_memory,
    list_memories, memory_history, export_user), forget and import_user (erasing or importing again changes
    nothing), and ingest / ingest_batch when every turn has a turn_id (the same turn_id rewrites the same
    memories). Never retried: define_agent and update_memory (each makes a new version), delete_memory (a repeat
    would answer NOT_FOUND for a delete that happened) and compact."""

    @staticmethod
    def ingest(scope: Scope, turn: Turn | str, *, deadline: float | None = None) -> Call[Accepted]:
        """Accepts a turn (a str is a user message) for ingestion; follow its job with wait_job."""
        turn = Turn(turn) if isinstance(turn, str) else turn
        request = gateway_pb2.IngestRequest(scope=scope.to_pb(), turn=turn.to_pb())
        return Call("Ingest", request, Accepted.from_pb, bool(turn.turn_id), deadline)

    @staticmethod
    def ingest_batch(scope: Scope, turns: Sequence[Turn], *, deadline: float | None = None) -> Call[list[Accepted]]:
        """Many turns (at most 500) in one call, each accepted as by ingest, in order."""
        request = gateway_pb2.IngestBatchRequest(scope=scope.to_pb(), turns=[t.to_pb() for t in turns])
        idempotent = all(t.turn_id for t in turns)
        return Call("IngestBatch", request, lambda r: [Accepted.from_pb(a) for a in r.accepted], idempotent, deadline)

    @staticmethod
    def get_sealing_key(scope: Scope, *, deadline: float | None = None) -> Call[SealingKey]:
        """The data key to seal the scope's turns with before publishing them to Kafka yourself (the same rights as
        ingest); ``sealing_key`` keeps it until shortly before its valid_until."""
        request = gateway_pb2.GetSealingKeyRequest(scope=scope.to_pb())
        return Call("GetSealingKey", request, SealingKey.from_pb, True, deadline)

    @staticmethod
    def get_job(scope: Scope, job_id: str, *, deadline: float | None = None) -> Call[Job]:
        """The job, read in the scope that submitted it."""
        request = gateway_pb2.GetJobRequest(scope=scope.to_pb(), job_id=job_id)
        return Call("GetJob", request, Job.from_pb, True, deadline)

    @staticmethod
    def fetch(
        scope: Scope,
        query: str,
        *,
        budget_tokens: int = 0,
        encoding: str = "",
        tiers: Sequence[Tier] = (),
        as_of: datetime | None = None,
        deadline: float | None = None,
    ) -> Call[Context]:
        """The context for ``query`` within ``budget_tokens`` (0: the server's default), counted in ``encoding``
        ("cl100k_base" or "o200k_base"; empty: the first); ``tiers`` empty: user, customer and client."""
        request = gateway_pb2.FetchRequest(
            scope=scope.to_pb(),
            query=query,
            budget_tokens=budget_tokens,
            encoding=encoding,
            tiers=[_pb_enum("TIER", t) for t in tiers],
        )
        if as_of is not None:
            request.as_of.CopyFrom(_stamp(as_of))
        return Call("Fetch", request, Context.from_pb, True, deadline)

    @staticmethod
    def forget(scope: Scope, level: str, *, deadline: float | None = None) -> Call[str]:
        """Erases the scope's "session", "user", "customer" or "client" everywhere; returns the job id."""
        request = gateway_pb2.ForgetRequest(scope=scope.to_pb(), level=level)
        return Call("Forget", request, lambda r: str(r.job_id), True, deadline)

    @staticmethod
    def compact(scope: Scope, budget_tokens: int = 0, *, deadline: float | None = None) -> Call[Compaction]:
        """Compacts the scope's session now (0: the agent schema's budget)."""
        request = gateway_pb2.CompactRequest(scope=scope.to_pb(), budget_tokens=budget_tokens)
        return Call("Compact", request, lambda r: Compaction.from_pb(r.compaction), False, deadline)

    @staticmethod
    def define_agent(
        scope: Scope, description: str, *, overrides_json: str = "", archetype: str = "", deadline: float | None = None
    ) -> Call[AgentSchema]:
        """A new schema version for scope.agent_id, drafted from ``description`` (or ``archetype``) with
        ``overrides_json`` merged over it."""
        request = gateway_pb2.DefineAgentRequest(
            scope=scope.to_pb(), description=description, overrides_json=overrides_json, archetype=archetype
        )
        return Call("DefineAgent", request, AgentSchema.from_pb, False, deadline)

    @staticmethod
    def get_agent(scope: Scope, version: int = 0, *, deadline: float | None = None) -> Call[AgentSchema]:
        """scope.agent_id's schema at ``version`` (0: the latest)."""
        request = gateway_pb2.GetAgentRequest(scope=scope.to_pb(), version=version)
        return Call("GetAgent", request, AgentSchema.from_pb, True, deadline)

    @staticmethod
    def list_agents(scope: Scope, *, deadline: float | None = None) -> Call[list[AgentSchema]]:
        request = gateway_pb2.ListAgentsRequest(scope=scope.to_pb())
        return Call("ListAgents", request, lambda r: [AgentSchema.from_pb(a) for a in r.agents], True, deadline)

    @staticmethod
    def get_memory(scope: Scope, memory_id: str, *, deadline: float | None = None) -> Call[StoredMemory]:
        request = memories_pb2.GetMemoryRequest(scope=scope.to_pb(), memory_id=memory_id)
        return Call("GetMemory", request, StoredMemory.from_pb, True, deadline)

    @staticmethod
    def list_memories(
        scope: Scope,
        where: MemoryFilter = ALL,
        *,
        page_size: int = 0,
        page_token: str = "",
        deadline: float | None = None,
    ) -> Call[MemoryPage]:
        """One page (``page_size`` 0: 50), newest first; pass the page's next_page_token for the next one."""

        def page(r: memories_pb2.ListMemoriesResponse) -> MemoryPage:
            return MemoryPage([StoredMemory.from_pb(m) for m in r.memories], r.next_page_token)

        return Call("ListMemories", where.to_pb(scope, page_size, page_token), page, True, deadline)

    @staticmethod
    def update_memory(
        scope: Scope, memory_id: str, text: str, source: str, *, deadline: float | None = None
    ) -> Call[MemoryJob]:
        """A correction: a new version with ``text``, ``source`` saying where it comes from."""
        request = gateway_pb2.UpdateMemoryRequest(scope=scope.to_pb(), memory_id=memory_id, text=text, source=source)
        return Call("UpdateMemory", request, _jobs, False, deadline)

    @staticmethod
    def delete_memory(scope: Scope, memory_id: str, *, deadline: float | None = None) -> Call[MemoryJob]:
        request = gateway_pb2.DeleteMemoryRequest(scope=scope.to_pb(), memory_id=memory_id)
        return Call("DeleteMemory", request, _jobs, False, deadline)

    @staticmethod
    def memory_history(
        scope: Scope, memory_id: str = "", slot: str = "", *, deadline: float | None = None
    ) -> Call[list[StoredMemory]]:
        """The versions of one memory, or of one slot, oldest first."""
        request = memories_pb2.MemoryHistoryRequest(scope=scope.to_pb(), memory_id=memory_id, slot=slot)
        return Call("MemoryHistory", request, lambda r: [StoredMemory.from_pb(v) for v in r.versions], True, deadline)

    @staticmethod
    def export_user(
        scope: Scope, *, page_size: int = 0, page_token: str = "", deadline: float | None = None
    ) -> Call[ExportPage]:
        """The scope's user's memories as JSON lines, one page (``page_size`` 0: 200) at a time."""
        request = gateway_pb2.ExportUserRequest(scope=scope.to_pb(), page_size=page_size, page_token=page_token)
        return Call("ExportUser", request, lambda r: ExportPage(r.jsonl, r.count, r.next_page_token), True, deadline)

    @staticmethod
    def import_user(scope: Scope, jsonl: str, *, deadline: float | None = None) -> Call[MemoryJob]:
        """export_user's lines (at most 500) into the scope's user; importing them again changes nothing."""
        request = gateway_pb2.ImportUserRequest(scope=scope.to_pb(), jsonl=jsonl)
        return Call("ImportUser", request, _jobs, True, deadline)


@dataclass(frozen=True)
class Connection:
    """What both clients open a channel with: the key's metadata, TLS credentials (None: plaintext), the
    channel's options, the retries and the default deadline."""

    metadata: tuple[tuple[str, str], ...]
    credentials: grpc.ChannelCredentials | None
    options: list[tuple[str, Any]]
    retry: Retry
    deadline: float

    @classmethod
    def of(cls, api_key: str, tls: Tls | None, retry: Retry | None, deadline: float) -> Connection:
        retry = retry or Retry()
        credentials = tls.credentials() if tls is not None else None
        return cls(auth_metadata(api_key), credentials, channel_options(tls, retry), retry, deadline)


class SealingKeys:
    """The sealing keys a client holds, one per owner (client, customer, user, session), each until ``margin_s``
    before its valid_until (the gateway's clock may run ahead of this one); at most ``max_kept`` (past it, all
    are dropped and asked again)."""

    def __init__(
        self, margin_s: float = 5.0, max_kept: int = 1024, now: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._margin = timedelta(seconds=margin_s)
        self._max_kept = max_kept
        self._now = now
        self._kept: dict[tuple[str, str, str, str], SealingKey] = {}

    @staticmethod
    def _owner(scope: Scope) -> tuple[str, str, str, str]:
        return scope.client_id, scope.customer_id, scope.user_id, scope.session_id

    def get(self, scope: Scope) -> SealingKey | None:
        key = self._kept.get(self._owner(scope))
        if key is not None and self._now() < key.valid_until - self._margin:
            return key
        return None

    def keep(self, scope: Scope, key: SealingKey) -> SealingKey:
        if len(self._kept) >= self._max_kept:
            self._kept.clear()
        self._kept[self._owner(scope)] = key
        return key


class JobWait:
    """wait_job's polling: the wait between two GetJob calls (10 ms doubling to 0.5 s) and its own deadline."""

    def __init__(self, job_id: str, timeout: float) -> None:
        self._job_id, self._timeout = job_id, timeout
        self._deadline = time.monotonic() + timeout
        self._delay = 0.01

    def next_delay(self, job: Job) -> float | None:
        """None when the job is finished; raises TimeoutError when it is still pending at the deadline."""
        if job.finished:
            return None
        if time.monotonic() > self._deadline:
            raise TimeoutError(f"job {self._job_id} still {job.status} after {self._timeout:g}s")
        delay, self._delay = self._delay, min(self._delay * 2, 0.5)
        return delay
