"""The HTTP/JSON listener (uvicorn) beside the gateway's gRPC server: the same transport rule (plaintext on a
loopback address only, unless ACM_ALLOW_PLAINTEXT; TLS and mTLS from the same certificate files) and the same
start and stop as the gRPC server it belongs to (acm_gateway.app.GatewayServer)."""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl

import uvicorn
from starlette.types import ASGIApp

from acm.transport import CertificateFiles, ServerTls

log = logging.getLogger("acm.gateway.http")
HTTP_API = "acm.v1.Gateway (HTTP/JSON)"  # named in the transport rule's refusal


def _bind(addr: str) -> socket.socket:
    """A listening socket on ``addr`` (host:port or [v6]:port; port 0 picks one), without SO_REUSEPORT, so a
    second server on the same port fails instead of sharing it."""
    host, _, port = addr.rpartition(":")
    family, kind, proto, _, address = socket.getaddrinfo(host.strip("[]") or None, int(port), type=socket.SOCK_STREAM)[
        0
    ]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(256)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


class HttpServer:
    """Serves ``app`` on ``addr``. TransportRefused when it would serve in plaintext off the loopback, or when
    the certificate files are not a certificate and its key. Renewed certificate files reach new connections
    within ``reload_every_s``, as the gRPC listener's do (open connections keep theirs)."""

    def __init__(self, app: ASGIApp, addr: str, tls: ServerTls, reload_every_s: float = 5.0) -> None:
        tls.check(addr, [HTTP_API])
        self._files = (
            CertificateFiles(tls.cert_file, tls.key_file, tls.client_ca_file)
            if tls.cert_file is not None and tls.key_file is not None
            else None
        )
        self._tls = tls
        self._reload_every_s = reload_every_s
        self._follow: asyncio.Task[None] | None = None
        self._sock = _bind(addr)
        self.port: int = self._sock.getsockname()[1]
        self._config = uvicorn.Config(
            app,
            log_config=None,  # the process's logging as configured (acm.runtime.configure_logging)
            access_log=False,  # one line per request comes from the app (acm.requests), as for gRPC
            lifespan="off",
            proxy_headers=False,
            timeout_graceful_shutdown=5,
            ssl_certfile=tls.cert_file,
            ssl_keyfile=tls.key_file,
            ssl_ca_certs=str(tls.client_ca_file) if tls.client_ca_file else None,
            ssl_cert_reqs=ssl.CERT_REQUIRED if tls.client_ca_file else ssl.CERT_NONE,
        )
        self._server = uvicorn.Server(self._config)
        self._loop: asyncio.Task[None] | None = None

    async def start(self) -> None:
        # uvicorn's serve() would take SIGINT/SIGTERM from the process's own handling (wait_for_stop_signal):
        # its start-up, loop and shut-down are run here instead.
        self._config.load()
        self._server.lifespan = self._config.lifespan_class(self._config)
        await self._server.startup(sockets=[self._sock])
        self._loop = asyncio.create_task(self._server.main_loop(), name="http api")
        log.info("HTTP/JSON API on port %d (%s)", self.port, "TLS" if self._files is not None else "plaintext")
        if self._files is not None and self._config.ssl is not None:
            self._follow = asyncio.create_task(
                self._follow_certificates(self._files, self._config.ssl), name="http api certificates"
            )

    async def _follow_certificates(self, files: CertificateFiles, context: ssl.SSLContext) -> None:
        """Load changed certificate files into the context the listener gives each new connection, once they
        are read whole and pair up (CertificateFiles: a certificate caught without its new key is not taken)."""
        tls = self._tls
        while True:
            await asyncio.sleep(self._reload_every_s)
            if files.fetch() is None:
                continue
            try:
                context.load_cert_chain(str(tls.cert_file), str(tls.key_file))
                if tls.client_ca_file is not None:
                    context.load_verify_locations(str(tls.client_ca_file))
            except (ssl.SSLError, OSError) as exc:  # moved again while being read: the next change is taken
                log.warning("HTTP API: keeping the current certificate: %s", exc)

    async def stop(self) -> None:
        """Stop taking connections; calls in progress get timeout_graceful_shutdown to finish."""
        if self._follow is not None:
            self._follow.cancel()
            await asyncio.gather(self._follow, return_exceptions=True)
            self._follow = None
        if self._loop is None:
            self._sock.close()
            return
        self._server.should_exit = True
        await self._loop
        self._loop = None
        await self._server.shutdown(sockets=[self._sock])
        self._sock.close()
