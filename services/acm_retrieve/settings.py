from __future__ import annotations

from acm.settings import DEFAULT_EMBEDDER, KeysFromGateway, SchemasFromArchitect, ServiceSettings


class RetrieveSettings(ServiceSettings, KeysFromGateway, SchemasFromArchitect):
    database_url: str
    vector_url: str
    graph_url: str
    bus_url: str
    # Where the prefetched pools' generations are (Redis, shared with ingest, anticipate and the gateway).
    cache_url: str
    # ACM_EMBEDDER (acm.settings.DEFAULT_EMBEDDER); ingest and retrieve must use the same one.
    embedder: str = DEFAULT_EMBEDDER
    listen_addr: str = "127.0.0.1:50052"
