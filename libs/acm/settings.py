"""Settings from the environment, one class per service, built once at start-up.

Store and bus backends are picked by URL scheme, so one code path serves both modes:
  database  postgresql://…            | sqlite:///path/acm.db
  vectors   http(s)://qdrant:6333     | qdrant-local:///path | qdrant-local://:memory: | edge:///path
  graph     bolt:// or neo4j://…      | sqlite:///path/graph.db
  cache     redis://…                 | memory://
  bus       kafka://host:9092[,host2][?namespace=prefix.] | sqlite:///path/bus.db  (embedded only)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TypeVar

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict


class ServiceSettings(BaseSettings):
    """What every service has: a name for logs and a health/gRPC address."""

    model_config = SettingsConfigDict(env_prefix="ACM_", extra="ignore", frozen=True)

    log_level: str = "INFO"
    # Deadline for every outbound call to a store or the bus.
    store_timeout_s: float = Field(5.0, gt=0)
    health_addr: str = "127.0.0.1:0"
    # Compute threads of the embedder (ONNX Runtime's intra-op pool) and of numpy's BLAS. 1 by default: extra
    # threads fight the event loop, the stores and the other replicas for the cores.
    compute_threads: int = Field(1, ge=1)
    # Where `make install` (python -m acm.models fetch) put the bge models; empty: ~/.cache/acm/models.
    models_dir: Path | None = None
    # "files": the models folder only (no network at run time); "huggingface": the same files by name from
    # the Hub (huggingface_hub's cache), checked against the same SHA-256.
    models_source: str = Field("files", pattern="^(files|huggingface)$")


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
            name = prefix + "_".join(str(p) for p in err["loc"]).upper()
            lines.append(f"  {name}: {err['msg']}")
        print("\n".join(lines), file=sys.stderr)
        raise SystemExit(2) from None
