"""Kafka client security from the bus URL: TLS (with a private CA and a client certificate for mTLS) and
SASL, as FastStream security objects, so the producer, the consumers and the admin client all use it.

    kafka://host:9093?tls=1[&ssl_cafile=ca.pem][&ssl_certfile=c.pem&ssl_keyfile=k.pem]
    kafka://user:password@host:9093?sasl_mechanism=SCRAM-SHA-512&tls=1

A password in the URL is as secret as the database URL's: keep the URL in a Secret."""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote

from faststream.security import BaseSecurity, SASLPlaintext, SASLScram256, SASLScram512

_SASL = {"PLAIN": SASLPlaintext, "SCRAM-SHA-256": SASLScram256, "SCRAM-SHA-512": SASLScram512}
_TRUE = {"1", "true", "yes", "on"}


def split_userinfo(netloc: str) -> tuple[str, str, str]:
    """(user, password, hosts) of a netloc that may list several hosts ("u:p@h1:9092,h2:9092")."""
    userinfo, at, hosts = netloc.rpartition("@")
    if not at:
        return "", "", netloc
    user, _, password = userinfo.partition(":")
    return unquote(user), unquote(password), hosts


def kafka_security(user: str, password: str, query: Mapping[str, str]) -> BaseSecurity | None:
    """None for a plaintext connection; raises ValueError naming the URL parameter that is wrong."""
    files = {name: query.get(name, "") for name in ("ssl_cafile", "ssl_certfile", "ssl_keyfile")}
    for name, path in files.items():
        if path and not Path(path).is_file():
            raise ValueError(f"bus url: {name}={path} is not a readable file")
    if bool(files["ssl_certfile"]) != bool(files["ssl_keyfile"]):
        raise ValueError("bus url: ssl_certfile and ssl_keyfile go together (a client certificate and its key)")
    use_tls = query.get("tls", "").lower() in _TRUE or any(files.values())
    context: ssl.SSLContext | None = None
    if use_tls:
        context = ssl.create_default_context(cafile=files["ssl_cafile"] or None)
        if files["ssl_certfile"]:
            context.load_cert_chain(files["ssl_certfile"], files["ssl_keyfile"])
    mechanism = query.get("sasl_mechanism", "").upper()
    if mechanism:
        if mechanism not in _SASL:
            raise ValueError(f"bus url: sasl_mechanism={mechanism} is not one of {', '.join(_SASL)}")
        if not user or not password:
            raise ValueError("bus url: SASL needs a user and a password (kafka://user:password@host:port?...)")
        return _SASL[mechanism](user, password, ssl_context=context, use_ssl=use_tls)
    if user or password:
        raise ValueError("bus url: a user or password without sasl_mechanism would be ignored")
    return BaseSecurity(ssl_context=context, use_ssl=True) if use_tls else None
