"""Settings from the environment, one class per service, built once at start-up.

Store and bus backends are picked by URL scheme, so one code path serves both modes:
  database  postgresql://…            | sqlite:///path/<service>.db  (each service its own: acm.ownership)
  vectors   http(s)://qdrant:6333     | qdrant-local:///path | qdrant-local://:memory: | edge:///path
  graph     bolt:// or neo4j://…      | sqlite:///path/graph.db
  cache     redis://…                 | memory://
  bus       kafka://host:9092[,host2][?namespace=prefix.] | sqlite:///path/bus.db  (embedded only)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Self, TypeVar

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class ServiceSettings(BaseSettings):
    """What every service has: a name for logs and a health/gRPC address."""

    model_config = SettingsConfigDict(env_prefix="ACM_", extra="ignore", frozen=True)

    log_level: str = "INFO"
    # Deadline for every outbound call to a store or the bus.
    store_timeout_s: float = Field(5.0, gt=0)
    health_addr: str = "127.0.0.1:0"
    # Prometheus GET /metrics on this port, all interfaces (acm.metrics.serve_prometheus); unset: not served.
    metrics_port: int | None = Field(None, ge=1, le=65535)
    # Compute threads of the embedder (ONNX Runtime's intra-op pool) and of numpy's BLAS. 1 by default: extra
    # threads fight the event loop, the stores and the other replicas for the cores.
    compute_threads: int = Field(1, ge=1)
    # Where `make install` (python -m acm.models fetch) put the bge models; empty: ~/.cache/acm/models.
    models_dir: Path | None = None
    # "files": the models folder only (no network at run time); "huggingface": the same files by name from
    # the Hub (huggingface_hub's cache), checked against the same SHA-256.
    models_source: str = Field("files", pattern="^(files|huggingface)$")
    # Transport (docs/security.md "Transport"). This process's certificate and key (PEM): its gRPC API is served
    # over TLS with them (re-read when the files change: cert-manager renews them), and it presents them to the
    # internal services it calls.
    tls_cert_file: Path | None = None
    tls_key_file: Path | None = None
    # Set: the gRPC API requires a client certificate signed by this CA (mTLS between services).
    tls_client_ca_file: Path | None = None
    # Set: calls to the internal services (retrieve, architect) go over TLS, their certificates checked by it.
    tls_ca_file: Path | None = None
    # The name checked in those certificates instead of the address's host (empty: the host).
    tls_server_name: str = ""
    # Without a certificate the gRPC API listens on a loopback address only; true allows plaintext on any
    # (docker compose's private network, or a cluster fenced by NetworkPolicy; never the open internet).
    allow_plaintext: bool = False

    @field_validator("tls_cert_file", "tls_key_file", "tls_client_ca_file", "tls_ca_file", mode="before")
    @classmethod
    def _unset_when_empty(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("tls_cert_file", "tls_key_file", "tls_client_ca_file", "tls_ca_file")
    @classmethod
    def _readable(cls, path: Path | None) -> Path | None:
        if path is not None and not (path.is_file() and os.access(path, os.R_OK)):
            raise ValueError(f"{path} is not a readable file")
        return path

    @model_validator(mode="after")
    def _certificate_with_its_key(self) -> Self:
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError("ACM_TLS_CERT_FILE and ACM_TLS_KEY_FILE: set both (a certificate and its key) or neither")
        if self.tls_client_ca_file is not None and self.tls_cert_file is None:
            raise ValueError("ACM_TLS_CLIENT_CA_FILE needs ACM_TLS_CERT_FILE and ACM_TLS_KEY_FILE (mTLS is over TLS)")
        return self


class KeysFromGateway(BaseSettings):
    """A service that verifies envelope signatures reads the API keys through the gateway, which owns them
    (its internal Keys API; embedded mode reads the gateway's store in-process). Calls carry the service token
    (ACM_SERVICE_TOKEN_SECRET) and ACM_STORE_TIMEOUT_S as their deadline."""

    model_config = SettingsConfigDict(env_prefix="ACM_", extra="ignore", frozen=True)

    gateway_addr: str = "127.0.0.1:50051"  # host:port of the gateway (ACM_GATEWAY_ADDR)
    # How long an answer is kept: a revoked key still verifies on a replica for at most this long (0: not kept).
    key_cache_ttl_s: float = Field(5.0, ge=0)


class SchemasFromArchitect(BaseSettings):
    """A service that reads agent schemas reads them through the architect, which owns them (its GetAgent RPC;
    embedded mode reads the architect's store in-process). Calls carry the service token and ACM_STORE_TIMEOUT_S
    as their deadline."""

    model_config = SettingsConfigDict(env_prefix="ACM_", extra="ignore", frozen=True)

    architect_addr: str = "127.0.0.1:50053"  # host:port of the architect (ACM_ARCHITECT_ADDR)
    # How long an answer is kept: a new schema version (DefineAgent) is used within this long (0: not kept).
    schema_cache_ttl_s: float = Field(5.0, ge=0)


class ConsumerSettings(ServiceSettings, KeysFromGateway, SchemasFromArchitect):
    """A service behind the gateway that consumes the bus (ingest, retrieve, compact, anticipate): its own store,
    the cache, the bus, and the owners' keys and schemas over gRPC (acm.owners.open_consumer)."""

    database_url: str  # its own store (acm.ownership)
    bus_url: str
    cache_url: str


class OptionalLlm(BaseSettings):
    """An optional OpenAI-compatible endpoint (ACM_LLM_URL; empty: none, the service keeps to its deterministic
    path). What it is asked is the service's own (acm.adapters.openai_llm.llm_from_settings opens it)."""

    model_config = SettingsConfigDict(env_prefix="ACM_", extra="ignore", frozen=True)

    llm_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    llm_timeout_s: float = Field(20.0, gt=0)


# ACM_EMBEDDER: bge-small-en-v1.5, bge-small-en-v1.5-int8, bge-small-zh-v1.5-int8 or all-minilm-l6-v2 (ingest
# and retrieve must use the same; changing it is a re-index: `acm reindex`). bge int8 by measurement
# (results/embedders-choice.json): LoCoMo recall@1000 as MiniLM's overall, multi-hop +2.4, at about half
# MiniLM's ingest cost a turn; fp32 is no better and 2.6x int8's ingest cost.
DEFAULT_EMBEDDER = "bge-small-en-v1.5-int8"


S = TypeVar("S", bound=BaseSettings)


def load(cls: type[S]) -> S:
    """Build the settings or exit with a message naming each missing or invalid variable."""
    try:
        return cls()
    except ValidationError as exc:
        prefix = str(cls.model_config.get("env_prefix", ""))
        lines = [f"{cls.__name__}: cannot start, fix these environment variables:"]
        for err in exc.errors():
            if err["loc"]:
                lines.append(f"  {prefix + '_'.join(str(p) for p in err['loc']).upper()}: {err['msg']}")
            else:  # a rule over several variables: its message names them
                lines.append(f"  {err['msg'].removeprefix('Value error, ')}")
        print("\n".join(lines), file=sys.stderr)
        raise SystemExit(2) from None
