"""Transport (docs/security.md "Transport"), with certificates made here: the gateway serves TLS and the SDK and
CLI reach it with the CA, not without; a server with a client CA refuses a client without a certificate
(mTLS, as between services, through the channel factory the services use); plaintext off loopback refuses to
start; renewed certificate files are served to new connections without a restart; the settings name a bad file."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from psycopg_pool import PoolTimeout
from redis.exceptions import RedisError

from acm.adapters.redis_cache import RedisCache
from acm.auth import create_api_key
from acm.bootstrap import open_relational
from acm.channels import ClientTls, open_channel
from acm.client import AcmClient
from acm.runtime import HealthServer
from acm.sealing import new_master_key
from acm.settings import ServiceSettings, load
from acm.transport import ServerTls, TransportRefused
from acm.v1 import common_pb2
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_gateway.settings import GatewaySettings
from tests.support.pki import Authority, Issued
from tests.support.ports import unused_ports

ACM = str(Path(sys.executable).parent / "acm")
API = ["acm.v1.Retrieve"]  # any service name: a server with an API, not health alone
SCOPE = common_pb2.Scope(customer_id="acme", user_id="alice", session_id="s1")


@dataclass(frozen=True)
class Pki:
    ca: Authority
    server: Issued  # localhost / 127.0.0.1
    internal: Issued  # acm-retrieve only, as a k8s Service's certificate
    client: Issued


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    ca = Authority(tmp_path / "pki", "acm-test-ca")
    return Pki(ca, ca.issue("server"), ca.issue("retrieve", dns=("acm-retrieve",), ips=()), ca.issue("client"))


async def _check(addr: str, tls: ClientTls | None) -> int:
    """The health status over a fresh channel; raises AioRpcError when the connection is refused."""
    async with open_channel(addr, tls) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=3)
    return int(reply.status)


async def _refused(addr: str, tls: ClientTls | None) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await _check(addr, tls)
    return refused.value.code()


@pytest.fixture
async def tls_gateway(tmp_path: Path, pki: Pki) -> AsyncIterator[EmbeddedAcm]:
    settings = EmbeddedSettings(
        data_dir=tmp_path / "acm",
        listen_addr="127.0.0.1:0",
        tls_cert_file=pki.server.cert_file,
        tls_key_file=pki.server.key_file,
        prefetch=False,
    )
    async with EmbeddedAcm(settings) as acm:
        yield acm


async def test_fetch_over_tls_with_the_ca_and_not_without(tls_gateway: EmbeddedAcm, pki: Pki) -> None:
    addr = f"127.0.0.1:{tls_gateway.port}"
    async with AcmClient(addr, tls_gateway.api_key, tls=ClientTls(pki.ca.ca_file)) as client:
        job = await client.ingest(SCOPE, "I moved to Lisbon in May")
        await client.wait_job(SCOPE, job.job_id)
        assert "Lisbon" in str(await client.fetch(SCOPE, "where did I move?"))
    for tls in (None, ClientTls()):  # plaintext; TLS trusting only the system's CAs
        async with AcmClient(addr, tls_gateway.api_key, timeout_s=3, tls=tls) as client:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.fetch(SCOPE, "where did I move?")
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
    remote = ["--addr", addr, "--api-key", tls_gateway.api_key, "-c", "acme", "-u", "alice", "where did I move?"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACM_")}
    fetched = await asyncio.to_thread(
        subprocess.run, [ACM, "fetch", "--ca-file", str(pki.ca.ca_file), *remote], env=env, capture_output=True
    )
    assert fetched.returncode == 0 and b"Lisbon" in fetched.stdout, fetched.stderr
    plain = await asyncio.to_thread(subprocess.run, [ACM, "fetch", *remote], env=env, capture_output=True)
    assert plain.returncode == 1 and b"--ca-file" in plain.stderr, plain.stderr


async def test_a_client_ca_refuses_a_client_without_a_certificate(pki: Pki) -> None:
    tls = ServerTls(pki.internal.cert_file, pki.internal.key_file, client_ca_file=pki.ca.ca_file)
    server = HealthServer("127.0.0.1:0", API, tls=tls)
    await server.start()
    try:
        addr = f"127.0.0.1:{server.port}"
        # The k8s Service's name is in the certificate, not 127.0.0.1: checked through the name override.
        anonymous = ClientTls(pki.ca.ca_file, server_name="acm-retrieve")
        assert await _refused(addr, anonymous) is grpc.StatusCode.UNAVAILABLE
        assert await _refused(addr, ClientTls(pki.ca.ca_file)) is grpc.StatusCode.UNAVAILABLE  # name mismatch
        stranger = Authority(pki.ca.folder / "other", "stranger-ca").issue("stranger")
        impostor = ClientTls(pki.ca.ca_file, stranger.cert_file, stranger.key_file, "acm-retrieve")
        assert await _refused(addr, impostor) is grpc.StatusCode.UNAVAILABLE
        mutual = ClientTls(pki.ca.ca_file, pki.client.cert_file, pki.client.key_file, "acm-retrieve")
        assert await _check(addr, mutual) == health_pb2.HealthCheckResponse.SERVING
        # The kubelet's probes speak no TLS: a plaintext port of health alone answers them.
        assert server.probe is not None
        assert await _check(f"127.0.0.1:{server.probe.port}", None) == health_pb2.HealthCheckResponse.SERVING
    finally:
        await server.stop(0)


def test_internal_clients_take_tls_from_their_settings(pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gateway's and anticipate's channels to retrieve and architect (ClientTls.of): TLS once a CA is set,
    presenting the service's own certificate (for a server with ACM_TLS_CLIENT_CA_FILE)."""
    for key in [k for k in os.environ if k.startswith("ACM_")]:
        monkeypatch.delenv(key)

    def gateway() -> GatewaySettings:
        return GatewaySettings(
            database_url="sqlite://",
            bus_url="sqlite://",
            cache_url="memory://",
            retrieve_addr="r:1",
            architect_addr="a:1",
        )

    assert ClientTls.of(gateway()) is None
    monkeypatch.setenv("ACM_TLS_CA_FILE", str(pki.ca.ca_file))
    monkeypatch.setenv("ACM_TLS_CERT_FILE", str(pki.client.cert_file))
    monkeypatch.setenv("ACM_TLS_KEY_FILE", str(pki.client.key_file))
    monkeypatch.setenv("ACM_TLS_SERVER_NAME", "acm-retrieve")
    assert ClientTls.of(gateway()) == ClientTls(
        pki.ca.ca_file, pki.client.cert_file, pki.client.key_file, "acm-retrieve"
    )


def test_half_a_certificate_is_refused_before_anything_listens(pki: Pki) -> None:
    with pytest.raises(ValueError, match="both its certificate and its key"):
        ServerTls(pki.server.cert_file)
    with pytest.raises(ValueError, match="needs a server certificate"):
        ServerTls(client_ca_file=pki.ca.ca_file)
    with pytest.raises(ValueError, match="both its certificate and its key"):
        ClientTls(pki.ca.ca_file, cert_file=pki.client.cert_file)


async def test_plaintext_off_loopback_refuses_to_start(tmp_path: Path) -> None:
    with pytest.raises(TransportRefused, match=r"ACM_TLS_CERT_FILE and ACM_TLS_KEY_FILE.*ACM_ALLOW_PLAINTEXT"):
        HealthServer("0.0.0.0:0", API)
    for allowed in (
        HealthServer("0.0.0.0:0", API, tls=ServerTls(allow_plaintext=True)),  # the explicit opt-out
        HealthServer("0.0.0.0:0"),  # health alone: a probe port
        HealthServer("[::1]:0", API),
    ):
        await allowed.server.stop(0)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACM_")}
    done = await asyncio.to_thread(
        subprocess.run,
        [ACM, "serve", "--listen", "0.0.0.0:0", "--data-dir", str(tmp_path / "acm")],
        env=env,
        capture_output=True,
        timeout=60,
    )
    err = done.stderr.decode()
    assert done.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert "plaintext on 0.0.0.0:0" in err and "ACM_TLS_CERT_FILE" in err and "ACM_ALLOW_PLAINTEXT=1" in err, err


async def test_renewed_certificate_files_are_served_to_new_connections(pki: Pki, tmp_path: Path) -> None:
    live = tmp_path / "live"  # the mounted Secret: files replaced in place, as the kubelet does
    live.mkdir()
    cert, key = live / "tls.crt", live / "tls.key"
    cert.write_bytes(pki.server.cert_file.read_bytes())
    key.write_bytes(pki.server.key_file.read_bytes())
    server = HealthServer("127.0.0.1:0", API, tls=ServerTls(cert, key))
    await server.start()
    try:
        addr = f"127.0.0.1:{server.port}"
        old_ca, renewed = pki.ca, Authority(tmp_path / "renewed", "renewed-ca")
        assert await _check(addr, ClientTls(old_ca.ca_file)) == health_pb2.HealthCheckResponse.SERVING
        # A certificate written without its key yet (caught mid-rotation): the server keeps the pair it has.
        new = renewed.issue("server")
        _replace(cert, new.cert_file.read_bytes())
        assert await _check(addr, ClientTls(old_ca.ca_file)) == health_pb2.HealthCheckResponse.SERVING
        _replace(key, new.key_file.read_bytes())
        assert await _check(addr, ClientTls(renewed.ca_file)) == health_pb2.HealthCheckResponse.SERVING
        assert await _refused(addr, ClientTls(old_ca.ca_file)) is grpc.StatusCode.UNAVAILABLE
    finally:
        await server.stop(0)


def _replace(path: Path, data: bytes) -> None:
    staged = path.with_suffix(".new")
    staged.write_bytes(data)
    os.replace(staged, path)


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"ACM_TLS_CERT_FILE": "{cert}"}, "ACM_TLS_CERT_FILE and ACM_TLS_KEY_FILE: set both"),
        (
            {"ACM_TLS_CERT_FILE": "{cert}", "ACM_TLS_KEY_FILE": "/nonexistent/tls.key"},
            "ACM_TLS_KEY_FILE: Value error, /nonexistent/tls.key is not a readable file",
        ),
        ({"ACM_TLS_CLIENT_CA_FILE": "{ca}"}, "ACM_TLS_CLIENT_CA_FILE needs ACM_TLS_CERT_FILE"),
    ],
)
def test_settings_name_the_tls_variable_to_fix(
    env: dict[str, str], said: str, pki: Pki, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key in [k for k in os.environ if k.startswith("ACM_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value.format(cert=pki.server.cert_file, ca=pki.ca.ca_file))
    with pytest.raises(SystemExit):
        load(ServiceSettings)
    assert said in capsys.readouterr().err


@pytest.mark.infra
async def test_store_urls_carry_their_tls_settings_to_the_clients(
    postgres_dsn: str, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """docs/security.md "Transport": the stores' TLS is whatever their URLs say, handed to the client
    unchanged. The test servers speak no TLS, so a URL that requires it fails where the plain one works."""
    rel = await open_relational(postgres_dsn, 2)
    await rel.close()
    with pytest.raises(PoolTimeout):  # the reason is in psycopg's log
        await open_relational(postgres_dsn + ("&" if "?" in postgres_dsn else "?") + "sslmode=require", 2)
    assert "server does not support SSL, but SSL was required" in caplog.text
    plain = await RedisCache.open(redis_url, timeout_s=2)
    await plain.close()
    with pytest.raises((OSError, RedisError)):  # a TLS handshake with a server that answers in plaintext
        await RedisCache.open(redis_url.replace("redis://", "rediss://", 1), timeout_s=2)


def _start(name: str, env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("wb") as log:
        return subprocess.Popen([sys.executable, "-m", f"acm_{name}"], env=env, stdout=log, stderr=log)


def _stop(procs: Iterable[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.infra
@pytest.mark.e2e
async def test_gateway_reaches_the_architect_process_over_mtls(
    pki: Pki, postgres_dsn: str, kafka_bootstrap: str, redis_url: str, tmp_path: Path
) -> None:
    """Two service processes as k8s's TLS component configures them: the architect serves TLS and requires a
    client certificate from the CA; the gateway serves TLS to the SDK and dials the architect with its own
    certificate, checking the architect's (issued for acm-architect) against the CA. DefineAgent goes through
    both; a caller without a client certificate cannot reach the architect at all."""
    gateway_port, architect_port, gateway_probe, architect_probe, retrieve_port = unused_ports(5)
    architect_cert = pki.ca.issue("architect", dns=("acm-architect",), ips=())
    common = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ACM_")},
        "ACM_DATABASE_URL": postgres_dsn,
        "ACM_BUS_URL": f"kafka://{kafka_bootstrap}?namespace=tls-{uuid.uuid4().hex[:8]}.",
        "ACM_SERVICE_TOKEN_SECRET": uuid.uuid4().hex,
        "ACM_MASTER_KEY": new_master_key(),
        "ACM_TLS_CA_FILE": str(pki.ca.ca_file),
    }
    architect_env = {
        **common,
        "ACM_LISTEN_ADDR": f"127.0.0.1:{architect_port}",
        "ACM_HEALTH_ADDR": f"127.0.0.1:{architect_probe}",
        "ACM_EMBEDDER": "",  # archetypes by keywords: no model to load
        "ACM_TLS_CERT_FILE": str(architect_cert.cert_file),
        "ACM_TLS_KEY_FILE": str(architect_cert.key_file),
        "ACM_TLS_CLIENT_CA_FILE": str(pki.ca.ca_file),
    }
    gateway_env = {
        **common,
        "ACM_LISTEN_ADDR": f"127.0.0.1:{gateway_port}",
        "ACM_HEALTH_ADDR": f"127.0.0.1:{gateway_probe}",
        "ACM_ARCHITECT_ADDR": f"127.0.0.1:{architect_port}",
        "ACM_RETRIEVE_ADDR": f"127.0.0.1:{retrieve_port}",  # not called here
        "ACM_TLS_SERVER_NAME": "acm-architect",
        "ACM_CACHE_URL": redis_url,
        "ACM_TLS_CERT_FILE": str(pki.server.cert_file),
        "ACM_TLS_KEY_FILE": str(pki.server.key_file),
    }
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name, env in (("architect", architect_env), ("gateway", gateway_env)):
            procs[name] = _start(name, env, tmp_path / f"{name}.log")
        for _ in range(120):
            dead = [n for n, p in procs.items() if p.poll() is not None]
            assert not dead, (tmp_path / f"{dead[0]}.log").read_text()[-3000:]
            try:  # the probe ports: plaintext, as the kubelet asks
                if {await _check(f"127.0.0.1:{p}", None) for p in (gateway_probe, architect_probe)} == {1}:
                    break
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.5)
        else:
            pytest.fail("the services did not become ready in 60 s")
        rel = await open_relational(postgres_dsn, service="gateway")  # the keys are the gateway's (its schema)
        try:
            _, key = await create_api_key(rel.api_keys, f"tls-{uuid.uuid4().hex[:8]}", "transport test")
        finally:
            await rel.close()
        coder = common_pb2.Scope(customer_id="acme", user_id="bob", agent_id="coder")
        async with AcmClient(f"127.0.0.1:{gateway_port}", key, tls=ClientTls(pki.ca.ca_file)) as client:
            defined = await client.define_agent(coder, "Fixes failing tests in our Python repository")
            assert defined.version == 1
        architect = f"127.0.0.1:{architect_port}"
        assert await _refused(architect, ClientTls(pki.ca.ca_file, server_name="acm-architect")) is (
            grpc.StatusCode.UNAVAILABLE
        )
        assert await _refused(architect, None) is grpc.StatusCode.UNAVAILABLE
    finally:
        _stop(procs.values())
