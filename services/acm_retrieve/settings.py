from __future__ import annotations

from pydantic import Field

from acm.settings import ServiceSettings


class RetrieveSettings(ServiceSettings):
    database_url: str
    vector_url: str
    bus_url: str
    embedder: str = "wordllama"
    listen_addr: str = "127.0.0.1:50052"
    # Candidates taken from each retriever before fusion.
    candidates: int = Field(50, gt=0, le=1000)
