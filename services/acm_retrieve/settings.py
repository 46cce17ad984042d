from __future__ import annotations

from acm.settings import ServiceSettings


class RetrieveSettings(ServiceSettings):
    database_url: str
    vector_url: str
    graph_url: str
    bus_url: str
    # all-MiniLM-L6-v2 (numpy): +9.5 points of LoCoMo recall@1000 over wordllama (results/embedders.json);
    # ingest and retrieve must use the same one.
    embedder: str = "minilm"
    listen_addr: str = "127.0.0.1:50052"
