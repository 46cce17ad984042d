"""The Python SDK (clients/python, acm_client) against a running `acm serve`: a turn ingested, its job followed and
the fact fetched back as typed results (sync and asyncio); gRPC statuses as exceptions; idempotent calls retried
on UNAVAILABLE while the server is briefly unreachable, the others not; deadlines, also across retries; mTLS."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acm_client import (
    AcmError,
    AsyncClient,
    Client,
    Context,
    DeadlineExceeded,
    InvalidArgument,
    JobStatus,
    Memory,
    MemoryFilter,
    MemoryStatus,
    NotFound,
    Retry,
    Role,
    Scope,
    Tier,
    Tls,
    Turn,
    Unauthenticated,
    Unavailable,
)
from tests.support.acm_serve import AcmServer, acm_serve
from tests.support.pki import Authority

ALICE = Scope(customer_id="acme", user_id="alice", session_id="s1")
FAST = Retry(attempts=10, initial_backoff=0.05, max_backoff=0.2)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AcmServer]:
    with acm_serve(tmp_path_factory.mktemp("sdk") / "data") as served:
        yield served


class LateProxy:
    """A port that refuses connections for ``down_s`` seconds, then forwards each one to ``target``: a server
    that is briefly down (restarting, or its pod being replaced). The port is bound from the start and listens
    after ``down_s``: connections are refused until then, and no other worker's server can be given it meanwhile."""

    def __init__(self, target: str, down_s: float) -> None:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self.addr = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._target, self._down_s = target, down_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        time.sleep(self._down_s)
        with self._listener as listener:
            listener.listen()
            listener.settimeout(0.1)
            while not self._stop.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                t_host, _, t_port = self._target.rpartition(":")
                upstream = socket.create_connection((t_host, int(t_port)))
                for src, dst in ((conn, upstream), (upstream, conn)):
                    threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def test_a_turn_is_ingested_followed_and_fetched_as_typed_results(server: AcmServer) -> None:
    with Client(server.addr, server.api_key) as acm:
        accepted = acm.ingest(ALICE, Turn("I moved to Lisbon in May", turn_id="t-lisbon"))
        job = acm.wait_job(ALICE, accepted.job_id)
        assert job.status is JobStatus.DONE and job.kind == "ingest" and job.counts["facts"] >= 1, job
        assert job.created_at is not None and job.created_at.tzinfo is not None

        context = acm.fetch(ALICE, "where do I live?", budget_tokens=400)
        assert isinstance(context, Context) and "Lisbon" in context.context
        assert 0 < context.context_tokens <= context.budget_tokens == 400
        fact = next(m for m in context.memories if "Lisbon" in m.text)
        assert isinstance(fact, Memory) and fact.tier is Tier.USER and fact.role is Role.USER
        assert fact.source_turn_ids == ["t-lisbon"] and fact.session_id == "s1"

        stored = acm.get_memory(ALICE, fact.memory_id)
        assert stored.memory.memory_id == fact.memory_id and stored.status is MemoryStatus.ACTIVE


async def test_the_async_client_makes_the_same_calls(server: AcmServer) -> None:
    bob = Scope(customer_id="acme", user_id="bob", session_id="b1")
    async with AsyncClient(server.addr, server.api_key) as acm:
        accepted = await acm.ingest_batch(
            bob,
            [
                Turn("My dog is called Rex", turn_id="b-1", metadata={"ticket": "T-9"}),
                Turn("I work as a nurse", turn_id="b-2"),
            ],
        )
        assert len(accepted) == 2
        for one in accepted:
            assert (await acm.wait_job(bob, one.job_id)).status is JobStatus.DONE
        context = await acm.fetch(bob, "what is my dog called?")
        assert any("Rex" in m.text for m in context.memories), context.memories
        page = await acm.list_memories(bob)
        assert {m.memory.source_turn_ids[0] for m in page.memories} >= {"b-1", "b-2"}
        tagged = await acm.list_memories(bob, MemoryFilter(metadata={"ticket": "T-9"}))
        assert tagged.memories and {m.memory.source_turn_ids[0] for m in tagged.memories} == {"b-1"}
        assert all(m.metadata == {"ticket": "T-9"} for m in tagged.memories)


def test_grpc_statuses_are_exceptions_a_caller_can_catch(server: AcmServer) -> None:
    with Client(server.addr, server.api_key, retry=FAST) as acm:
        with pytest.raises(NotFound) as missing:
            acm.get_job(ALICE, "no-such-job")
        assert missing.value.code == "NOT_FOUND" and missing.value.attempts == 1
        with pytest.raises(InvalidArgument, match="customer_id"):
            acm.fetch(Scope(user_id="alice"), "anything")
    with Client(server.addr, "acm_nope_nope") as stranger, pytest.raises(Unauthenticated):
        stranger.fetch(ALICE, "anything")


def test_idempotent_calls_are_retried_until_the_server_is_back(server: AcmServer) -> None:
    proxy = LateProxy(server.addr, down_s=0.6)
    try:
        with Client(proxy.addr, server.api_key, retry=FAST, deadline=10) as acm:
            started = time.monotonic()
            context = acm.fetch(ALICE, "where do I live?")
            assert time.monotonic() - started >= 0.6 and "Lisbon" in context.context
    finally:
        proxy.close()


def test_without_retries_or_for_a_call_that_is_not_idempotent_the_first_unavailable_is_raised(
    server: AcmServer, refused_port: int
) -> None:
    closed = f"127.0.0.1:{refused_port}"
    with Client(closed, server.api_key, retry=Retry(attempts=3, initial_backoff=0.01, max_backoff=0.01)) as acm:
        with pytest.raises(Unavailable) as read:
            acm.fetch(ALICE, "x")
        assert read.value.attempts == 3
        with pytest.raises(Unavailable) as write:
            acm.define_agent(ALICE, "a billing assistant")  # a new version each time: never sent twice
        assert write.value.attempts == 1
        with pytest.raises(Unavailable) as anonymous_turn:
            acm.ingest(ALICE, "no turn id, so a repeat would be a second turn")
        assert anonymous_turn.value.attempts == 1


def test_every_call_has_a_deadline_that_its_retries_share(server: AcmServer, refused_port: int) -> None:
    with Client(server.addr, server.api_key) as acm, pytest.raises(DeadlineExceeded):
        acm.fetch(ALICE, "where do I live?", deadline=0.001)
    patient = Retry(attempts=1000, initial_backoff=0.2, max_backoff=0.2)
    with Client(f"127.0.0.1:{refused_port}", server.api_key, retry=patient) as acm:
        started = time.monotonic()
        with pytest.raises(AcmError) as late:
            acm.fetch(ALICE, "x", deadline=1.0)
        assert time.monotonic() - started < 1.5 and 1 < late.value.attempts < 1000


def test_mtls_with_a_client_certificate(tmp_path: Path) -> None:
    ca = Authority(tmp_path / "pki", "acm-test-ca")
    server_cert, client_cert = ca.issue("gateway"), ca.issue("agent")
    env = {
        "ACM_TLS_CERT_FILE": str(server_cert.cert_file),
        "ACM_TLS_KEY_FILE": str(server_cert.key_file),
        "ACM_TLS_CLIENT_CA_FILE": str(ca.ca_file),
    }
    with acm_serve(tmp_path / "data", env) as served:
        tls = Tls(ca.ca_file, client_cert.cert_file, client_cert.key_file)
        with Client(served.addr, served.api_key, tls=tls) as acm:
            assert acm.list_agents(ALICE) == []
        with Client(served.addr, served.api_key, tls=Tls(ca.ca_file), retry=Retry(attempts=1)) as anonymous:
            with pytest.raises(Unavailable):  # the handshake fails without a client certificate
                anonymous.list_agents(ALICE)
        with Client(served.addr, served.api_key, retry=Retry(attempts=1)) as plaintext, pytest.raises(Unavailable):
            plaintext.list_agents(ALICE)
