from __future__ import annotations

import re
import socket
from typing import Self

from pydantic import Field, field_validator, model_validator

from acm.admission import Limits
from acm.settings import SchemasFromArchitect, ServiceSettings


class GatewaySettings(ServiceSettings, SchemasFromArchitect):
    database_url: str
    bus_url: str
    retrieve_addr: str  # host:port of the retrieve service
    architect_addr: str  # host:port of the architect service (DefineAgent, GetAgent, ListAgents)
    compact_addr: str = "127.0.0.1:50054"  # host:port of the compact service (the Compact RPC); its default address
    # Prefetch pools (anticipate) and the session tokens that tell whether a kept session context is current.
    cache_url: str
    listen_addr: str = "127.0.0.1:50051"
    # HTTP/JSON API (docs/http-api.md), host:port; empty: not served. Same transport rule as listen_addr.
    http_addr: str = ""
    # Browser origins whose pages may call the HTTP API (CORS), comma-separated; empty: none (docs/http-api.md).
    cors_origins: str = ""
    # A folder of benchmark results whose plots (*.png) the operator console shows; empty: none.
    results_dir: str = ""
    max_turn_bytes: int = Field(65536, gt=0)
    # ACM_SECRET_MODEL (on): after the rules, the learned second opinion for secrets said in prose
    # (acm.domain.secret_model); false: the rules alone. Set ingest's the same (it redacts again).
    secret_model: bool = True
    default_budget_tokens: int = Field(2000, gt=0)
    max_budget_tokens: int = Field(128_000, gt=0)
    rpc_timeout_s: float = Field(5.0, gt=0)
    # Deadline of a Compact call: it may wait for the compact service's LLM summary (its ACM_LLM_TIMEOUT_S).
    compact_timeout_s: float = Field(30.0, gt=0)
    max_session_turns: int = Field(2000, gt=0)  # turns read to assemble a session's context
    # Names this replica's warm-up consumer group (each replica warms its own memory): the pod's name in k8s.
    instance_id: str = Field(default_factory=socket.gethostname, min_length=1)
    # Admission (docs/operations.md "Fetch under load"): Fetches running at once, waiting for a turn, and the
    # longest wait; beyond them RESOURCE_EXHAUSTED at once, so a queue never grows without bound past capacity.
    # A Fetch holds the event loop ~3 ms (its SQLite reads) and embeds its query in a worker thread, so running
    # 16 at once costs the served ones nothing measurable; 4 refused some of a 16-agent fleet's Fetches.
    fetch_max_in_flight: int = Field(16, ge=1)
    fetch_max_queued: int = Field(48, ge=0)
    fetch_max_queue_wait_s: float = Field(1.0, ge=0)
    # An admitted Fetch still running after this is cancelled and refused the same way (a Fetch only reads).
    fetch_max_run_s: float = Field(5.0, gt=0)
    # The same for Ingest and IngestBatch (each publishes to the bus and writes a job row).
    ingest_max_in_flight: int = Field(16, ge=1)
    ingest_max_queued: int = Field(256, ge=0)
    ingest_max_queue_wait_s: float = Field(1.0, ge=0)

    # Postgres connections of this replica: a Fetch or Ingest holds one per statement, so the Fetches and
    # Ingests in flight rarely need more than this at once; mind the server's max_connections across replicas.
    db_pool_min: int = Field(1, ge=0)
    db_pool_max: int = Field(16, ge=1)
    # Wraps the bus's data keys (acm.sealing, docs/privacy.md): 32 bytes, urlsafe base64; required in distributed
    # mode (the gateway refuses to start without it); `acm keys master-key` makes one. Lost: every sealed record
    # on the bus is unreadable (as after a Forget of everyone).
    master_key: str = Field("", repr=False)
    # While a master-key rotation runs (docs/privacy.md): the old master key(s), comma-separated, which still
    # unwrap the data keys `acm keys rotate-master` has not re-wrapped yet. Empty once it reports 0 left.
    master_key_previous: str = Field("", repr=False)
    # How long a direct Kafka publisher may seal with a key from GetSealingKey (its valid_until): a Forget meanwhile
    # destroys the key, and what it seals after that is forgotten too (docs/privacy.md, "Direct publishers").
    sealing_key_ttl_s: float = Field(60.0, gt=0, le=3600)

    @field_validator("cors_origins")
    @classmethod
    def _origins_valid(cls, value: str) -> str:
        return ",".join(parse_origins(value))

    def cors_origins_list(self) -> tuple[str, ...]:
        return parse_origins(self.cors_origins)

    @model_validator(mode="after")
    def _pool_in_order(self) -> Self:
        if self.db_pool_min > self.db_pool_max:
            raise ValueError("ACM_DB_POOL_MIN must be at most ACM_DB_POOL_MAX")
        return self

    def fetch_limits(self) -> Limits:
        return Limits(
            self.fetch_max_in_flight, self.fetch_max_queued, self.fetch_max_queue_wait_s, self.fetch_max_run_s
        )

    def ingest_limits(self) -> Limits:
        return Limits(self.ingest_max_in_flight, self.ingest_max_queued, self.ingest_max_queue_wait_s)


_ORIGIN = re.compile(r"https?://[^/\s?#]+")


def parse_origins(text: str) -> tuple[str, ...]:
    """ACM_CORS_ORIGINS: comma-separated origins (``https://ops.example.com``, scheme and host, no path), or
    ``*`` for any page. ValueError names the first one that is not an origin."""
    origins = tuple(o.strip().rstrip("/") for o in text.split(",") if o.strip())
    for origin in origins:
        if origin != "*" and not _ORIGIN.fullmatch(origin):
            raise ValueError(f"ACM_CORS_ORIGINS: {origin!r} is not an origin like https://ops.example.com")
    return origins
