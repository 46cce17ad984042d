"""The HTTP/JSON listener follows the gRPC API's transport rule: plaintext on a loopback address only (unless
allowed), TLS with the server's certificate, and a client certificate required when a client CA is set."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from acm.transport import ServerTls, TransportRefused
from acm_gateway.http_api import HttpGateway
from acm_gateway.http_server import HttpServer
from tests.support.pki import Authority

APP = HttpGateway(object())  # routes only: these calls never reach a servicer


@asynccontextmanager
async def serving(tls: ServerTls, addr: str = "127.0.0.1:0") -> AsyncIterator[HttpServer]:
    server = HttpServer(APP, addr, tls)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def _status(url: str, verify: ssl.SSLContext | bool) -> int:
    async with httpx.AsyncClient(verify=verify, timeout=5) as client:
        return (await client.get(url)).status_code


def test_plaintext_off_the_loopback_is_refused_unless_allowed() -> None:
    with pytest.raises(TransportRefused, match="ACM_TLS_CERT_FILE"):
        HttpServer(APP, "0.0.0.0:0", ServerTls())


async def test_plaintext_on_any_address_when_allowed() -> None:
    async with serving(ServerTls(allow_plaintext=True), "0.0.0.0:0") as server:
        assert await _status(f"http://127.0.0.1:{server.port}/v1/nothing", False) == 404


async def test_tls_and_a_required_client_certificate(tmp_path: Path) -> None:
    ca = Authority(tmp_path / "pki", "acm-test-ca")
    cert, client = ca.issue("server"), ca.issue("client")
    async with serving(ServerTls(cert.cert_file, cert.key_file)) as server:
        url = f"https://127.0.0.1:{server.port}/v1/nothing"
        assert await _status(url, ssl.create_default_context(cafile=ca.ca_file)) == 404
        with pytest.raises(httpx.ConnectError):  # the system's CAs do not know this one
            await _status(url, True)

    mtls = ServerTls(cert.cert_file, cert.key_file, client_ca_file=ca.ca_file)
    async with serving(mtls) as server:
        url = f"https://127.0.0.1:{server.port}/v1/nothing"
        with pytest.raises((httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)):
            await _status(url, ssl.create_default_context(cafile=ca.ca_file))
        with_cert = ssl.create_default_context(cafile=ca.ca_file)
        with_cert.load_cert_chain(client.cert_file, client.key_file)
        assert await _status(url, with_cert) == 404
