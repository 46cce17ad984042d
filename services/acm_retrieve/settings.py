from __future__ import annotations

from acm.settings import DEFAULT_EMBEDDER, ConsumerSettings


class RetrieveSettings(ConsumerSettings):
    vector_url: str
    graph_url: str
    # ACM_CACHE_URL: where the prefetched pools' generations are (Redis, shared with ingest, anticipate, gateway).
    # ACM_EMBEDDER (acm.settings.DEFAULT_EMBEDDER); ingest and retrieve must use the same one.
    embedder: str = DEFAULT_EMBEDDER
    listen_addr: str = "127.0.0.1:50052"
