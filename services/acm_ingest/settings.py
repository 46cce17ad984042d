from __future__ import annotations

from pydantic import Field

from acm.settings import ServiceSettings


class IngestSettings(ServiceSettings):
    database_url: str
    graph_url: str
    bus_url: str
    cache_url: str
    embedder: str = "wordllama"
    max_turn_bytes: int = Field(65536, gt=0)
    # Session working-memory budget; crossing soft_ratio of it asks compact to shrink the session.
    session_budget_tokens: int = Field(4000, gt=0)
    session_soft_ratio: float = Field(0.7, gt=0, le=1)
