from __future__ import annotations

from acm.settings import ServiceSettings


class RetrieveSettings(ServiceSettings):
    database_url: str
    vector_url: str
    graph_url: str
    bus_url: str
    embedder: str = "wordllama"
    listen_addr: str = "127.0.0.1:50052"
