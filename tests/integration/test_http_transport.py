"""The HTTP/JSON listener follows the gRPC API's transport rule: plaintext on a loopback address only (unless
allowed), TLS with the server's certificate, and a client certificate required when a client CA is set."""

from __future__ import annotations

import asyncio
import os
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
    server = HttpServer(APP, addr, tls, reload_every_s=0.05)
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


async def test_renewed_certificate_files_reach_new_connections(tmp_path: Path) -> None:
    old_ca, new_ca = Authority(tmp_path / "old", "old-ca"), Authority(tmp_path / "new", "new-ca")
    live = tmp_path / "live"  # the mounted Secret: files replaced in place, as the kubelet does
    live.mkdir()
    cert, key = live / "tls.crt", live / "tls.key"
    old, new = old_ca.issue("server"), new_ca.issue("server")
    cert.write_bytes(old.cert_file.read_bytes())
    key.write_bytes(old.key_file.read_bytes())
    trusts_old = ssl.create_default_context(cafile=old_ca.ca_file)
    trusts_new = ssl.create_default_context(cafile=new_ca.ca_file)
    async with serving(ServerTls(cert, key)) as server:
        url = f"https://127.0.0.1:{server.port}/v1/nothing"
        assert await _status(url, trusts_old) == 404
        _replace(cert, new.cert_file.read_bytes())  # without its key yet: the pair in use is kept
        await asyncio.sleep(0.3)
        assert await _status(url, trusts_old) == 404
        _replace(key, new.key_file.read_bytes())
        for _ in range(100):
            await asyncio.sleep(0.05)
            try:
                assert await _status(url, trusts_new) == 404
                break
            except httpx.ConnectError:
                continue
        else:
            pytest.fail("the renewed certificate never reached a new connection")
        with pytest.raises(httpx.ConnectError):
            await _status(url, trusts_old)


def _replace(path: Path, data: bytes) -> None:
    staged = path.with_suffix(".new")
    staged.write_bytes(data)
    os.replace(staged, path)
