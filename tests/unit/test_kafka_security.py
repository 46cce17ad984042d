"""The bus URL's TLS and SASL parameters become the Kafka clients' security settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from faststream.kafka.security import parse_security
from faststream.security import BaseSecurity, SASLScram512

from acm.adapters.kafka_bus import KafkaBus
from acm.adapters.kafka_security import kafka_security, split_userinfo
from acm.bootstrap import ConfigError, open_bus
from tests.support.pki import Authority


@pytest.fixture
def ca(tmp_path: Path) -> Authority:
    return Authority(tmp_path / "pki", "kafka-test-ca")


def test_a_plain_url_is_plaintext() -> None:
    assert kafka_security("", "", {"namespace": "x."}) is None
    bus = open_bus("kafka://h1:9092,h2:9092?namespace=x.", client_id="t")
    assert isinstance(bus, KafkaBus)


def test_userinfo_is_split_from_several_hosts_and_unquoted() -> None:
    assert split_userinfo("svc%40acme:p%3Ass@h1:9093,h2:9093") == ("svc@acme", "p:ss", "h1:9093,h2:9093")
    assert split_userinfo("h1:9092") == ("", "", "h1:9092")


def test_tls_with_a_private_ca_and_a_client_certificate(ca: Authority) -> None:
    client = ca.issue("client")
    query = {"ssl_cafile": str(ca.ca_file), "ssl_certfile": str(client.cert_file), "ssl_keyfile": str(client.key_file)}
    security = kafka_security("", "", query)
    assert isinstance(security, BaseSecurity) and security.use_ssl and security.ssl_context is not None
    assert parse_security(security)["security_protocol"] == "SSL"


def test_scram_over_tls(ca: Authority) -> None:
    query = {"sasl_mechanism": "scram-sha-512", "tls": "1", "ssl_cafile": str(ca.ca_file)}
    security = kafka_security("acm", "s3cret", query)
    assert isinstance(security, SASLScram512)
    settings = parse_security(security)
    assert settings["security_protocol"] == "SASL_SSL"
    assert (settings["sasl_plain_username"], settings["sasl_plain_password"]) == ("acm", "s3cret")


@pytest.mark.parametrize(
    ("user", "password", "query", "names"),
    [
        ("", "", {"ssl_cafile": "/nonexistent/ca.pem"}, "ssl_cafile"),
        ("", "", {"sasl_mechanism": "GSSAPI-ish"}, "sasl_mechanism"),
        ("", "", {"sasl_mechanism": "PLAIN"}, "user and a password"),
        ("acm", "pw", {}, "without sasl_mechanism"),
    ],
)
def test_a_wrong_parameter_is_named(user: str, password: str, query: dict[str, str], names: str) -> None:
    with pytest.raises(ValueError, match=names):
        kafka_security(user, password, query)


def test_a_certificate_without_its_key_is_refused_at_open(ca: Authority) -> None:
    client = ca.issue("client")
    with pytest.raises(ConfigError, match="ssl_certfile and ssl_keyfile go together"):
        open_bus(f"kafka://h:9093?ssl_certfile={client.cert_file}", client_id="t")
