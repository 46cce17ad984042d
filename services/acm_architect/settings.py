from __future__ import annotations

from acm.settings import DEFAULT_EMBEDDER, KeysFromGateway, OptionalLlm, ServiceSettings


# ACM_LLM_URL: an OpenAI-compatible endpoint drafts schemas when set.
class ArchitectSettings(ServiceSettings, KeysFromGateway, OptionalLlm):
    database_url: str
    bus_url: str
    listen_addr: str = "127.0.0.1:50053"  # the internal Architect API (the gateway calls it)
    # Match descriptions to archetypes by embeddings too ("" → keywords only). Whatever ACM_EMBEDDER says, the
    # matching uses all-MiniLM-L6-v2, the model its thresholds are calibrated on (acm_architect.app).
    embedder: str = DEFAULT_EMBEDDER
