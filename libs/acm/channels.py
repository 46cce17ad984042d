"""The one way ACM opens a gRPC channel: to the gateway (the SDK and CLI) and between services (the gateway and
anticipate calling retrieve and architect), in plaintext or over TLS with an optional client certificate."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import grpc

from acm.settings import ServiceSettings


def read_pem(path: Path, what: str) -> bytes:
    """The file's bytes, or ValueError naming it and what it was for (read when a channel or server opens)."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the {what} {path}: {exc.strerror}") from None


@dataclass(frozen=True)
class ClientTls:
    """TLS of a client's channel. ``ca_file`` None: the system's roots (a gateway with a public certificate).
    ``cert_file`` and ``key_file``: this client's certificate, for a server that requires one (mTLS).
    ``server_name``: the name checked in the server's certificate instead of the address's host (tests)."""

    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    server_name: str = ""

    def __post_init__(self) -> None:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("a client certificate needs both its certificate and its key file")

    @classmethod
    def of(cls, settings: ServiceSettings) -> ClientTls | None:
        """A service's TLS towards the internal services it calls: on when ACM_TLS_CA_FILE is set, presenting
        ACM_TLS_CERT_FILE / ACM_TLS_KEY_FILE when those are set (needed where ACM_TLS_CLIENT_CA_FILE is)."""
        if settings.tls_ca_file is None:
            return None
        return cls(settings.tls_ca_file, settings.tls_cert_file, settings.tls_key_file, settings.tls_server_name)

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=read_pem(self.ca_file, "CA certificate") if self.ca_file else None,
            private_key=read_pem(self.key_file, "client key") if self.key_file else None,
            certificate_chain=read_pem(self.cert_file, "client certificate") if self.cert_file else None,
        )


def open_channel(addr: str, tls: ClientTls | None = None, *, round_robin: bool = False) -> grpc.aio.Channel:
    """A channel to ``addr`` (host:port): plaintext when ``tls`` is None.

    ``round_robin``: balance over every address the name resolves to (a headless Service in k8s), so one
    caller spreads its calls over all replicas instead of pinning one."""
    options: list[tuple[str, str]] = [("grpc.lb_policy_name", "round_robin")] if round_robin else []
    if tls is None:
        return grpc.aio.insecure_channel(addr, options=options)
    if tls.server_name:
        options.append(("grpc.ssl_target_name_override", tls.server_name))
    return grpc.aio.secure_channel(addr, tls.credentials(), options=options)
