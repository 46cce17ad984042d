"""How a service's gRPC server listens: TLS from certificate files that are re-read when they change, optional
client certificates (mTLS), plaintext only on a loopback address, and a plaintext health port for probes.

docs/security.md "Transport" says what is encrypted and what is not."""

from __future__ import annotations

import ipaddress
import logging
import os
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2_grpc

from acm.channels import read_pem
from acm.settings import ServiceSettings

log = logging.getLogger("acm.transport")


class TransportRefused(Exception):
    """The server cannot listen as configured (plaintext on a non-loopback address, unreadable certificates);
    the message names the settings to change."""


def is_loopback(addr: str) -> bool:
    """Whether ``addr`` (host:port, [v6]:port or unix:path) can be reached from this host only."""
    if addr.startswith(("unix:", "unix-abstract:")):
        return True
    host = addr.rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # "", a wildcard written as a name, or another host name: reachable from elsewhere
        return False


@dataclass(frozen=True)
class ServerTls:
    """A gRPC API's transport. No ``cert_file``: plaintext, on a loopback address only unless ``allow_plaintext``.
    ``client_ca_file``: callers must present a certificate signed by it (mTLS). ``probe_addr``: with TLS on, where
    a plaintext health-only server answers the kubelet's gRPC probes, which cannot speak TLS."""

    cert_file: Path | None = None
    key_file: Path | None = None
    client_ca_file: Path | None = None
    allow_plaintext: bool = False
    probe_addr: str = "127.0.0.1:0"

    def __post_init__(self) -> None:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("a server certificate needs both its certificate and its key file")
        if self.client_ca_file is not None and self.cert_file is None:
            raise ValueError("requiring client certificates (a client CA) needs a server certificate")

    @classmethod
    def of(cls, settings: ServiceSettings) -> ServerTls:
        return cls(
            settings.tls_cert_file,
            settings.tls_key_file,
            settings.tls_client_ca_file,
            settings.allow_plaintext,
            settings.health_addr,
        )

    def listen(self, server: grpc.aio.Server, addr: str, service_names: Sequence[str]) -> int:
        """Add ``addr`` to ``server``; its port, 0 when it cannot bind (as add_insecure_port).

        A server of health alone (no ``service_names``: the Kafka consumers' probe port) says only whether the
        process is up, so it may listen in plaintext anywhere; one with an API may not, without a certificate,
        unless ``allow_plaintext``."""
        if self.cert_file is not None and self.key_file is not None and service_names:
            files = CertificateFiles(self.cert_file, self.key_file, self.client_ca_file)
            credentials = grpc.dynamic_ssl_server_credentials(
                files.initial, files.fetch, require_client_authentication=self.client_ca_file is not None
            )
            return server.add_secure_port(addr, credentials)
        self.check(addr, service_names)
        return server.add_insecure_port(addr)

    def check(self, addr: str, service_names: Sequence[str]) -> None:
        """TransportRefused when ``addr`` would serve an API in plaintext to other hosts (see listen)."""
        if service_names and self.cert_file is None and not self.allow_plaintext and not is_loopback(addr):
            raise TransportRefused(
                f"will not serve {', '.join(service_names)} in plaintext on {addr}, which is reachable from other "
                "hosts: set ACM_TLS_CERT_FILE and ACM_TLS_KEY_FILE (TLS), listen on 127.0.0.1, or set "
                "ACM_ALLOW_PLAINTEXT=1 on a private network only"
            )

    def probe_server(self, servicer: health.aio.HealthServicer, service_names: Sequence[str]) -> ProbeServer | None:
        """The plaintext health port next to a TLS API (None when the API is plaintext: it answers probes)."""
        if self.cert_file is None or not service_names:
            return None
        return ProbeServer(servicer, self.probe_addr)


# No certificate and no opt-out: plaintext on a loopback address only.
LOOPBACK_ONLY = ServerTls()


class ProbeServer:
    """grpc.health.v1 alone, in plaintext, sharing the API server's health servicer (so the same statuses): it
    tells whether the process serves, nothing else."""

    def __init__(self, servicer: health.aio.HealthServicer, addr: str) -> None:
        self.server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        health_pb2_grpc.add_HealthServicer_to_server(servicer, self.server)
        self.port = self.server.add_insecure_port(addr)
        if self.port == 0:
            raise OSError(f"cannot listen on {addr} (ACM_HEALTH_ADDR, the health port for probes)")


class CertificateFiles:
    """The server's certificate, key and client CA, re-read when one of the files changes: cert-manager renews
    the Secret and the kubelet swaps the mounted files, and new connections get the new certificate without a
    restart (open ones keep theirs). gRPC asks before every handshake, so the check is three stat() calls."""

    def __init__(self, cert_file: Path, key_file: Path, client_ca_file: Path | None) -> None:
        self._paths = [p for p in (cert_file, key_file, client_ca_file) if p is not None]
        self._cert_file, self._key_file, self._client_ca_file = cert_file, key_file, client_ca_file
        self._stamp = self._stat()
        try:
            self.initial = self._load()
        except ValueError as exc:
            raise TransportRefused(f"{exc} (ACM_TLS_CERT_FILE, ACM_TLS_KEY_FILE, ACM_TLS_CLIENT_CA_FILE)") from None
        self._refused: tuple[tuple[int, int, int], ...] | None = None

    def _stat(self) -> tuple[tuple[int, int, int], ...]:
        stamps = []
        for path in self._paths:
            try:
                st = os.stat(path)  # follows the kubelet's ..data symlink to the current files
            except OSError:
                stamps.append((0, 0, 0))
            else:
                stamps.append((st.st_ino, st.st_mtime_ns, st.st_size))
        return tuple(stamps)

    def _load(self) -> grpc.ServerCertificateConfiguration:
        # A certificate read with another certificate's key (files caught mid-rotation) would fail every
        # handshake: the pair is checked first, by the files, and the bytes kept only if nothing moved meanwhile.
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(self._cert_file, self._key_file)
        except (ssl.SSLError, OSError) as exc:
            raise ValueError(f"{self._cert_file} and {self._key_file}: not a certificate and its key: {exc}") from None
        cert = read_pem(self._cert_file, "certificate")
        key = read_pem(self._key_file, "key")
        client_ca = read_pem(self._client_ca_file, "client CA certificate") if self._client_ca_file else None
        return grpc.ssl_server_certificate_configuration([(key, cert)], root_certificates=client_ca)

    def fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """The new configuration when the files changed and read whole, else None (keep the current one)."""
        stamp = self._stat()
        if stamp == self._stamp:
            return None
        try:
            config = self._load()
        except ValueError as exc:
            if stamp != self._refused:  # once per change, not at every connection
                log.warning("keeping the current certificate: %s", exc)
                self._refused = stamp
            return None
        if self._stat() != stamp:  # moved while being read: the next connection reads them again
            return None
        self._stamp = stamp
        log.info("certificate files changed: new connections use the new certificate")
        return config
