from __future__ import annotations

from pydantic import Field

from acm.settings import ConsumerSettings, OptionalLlm


# ACM_LLM_URL: an optional endpoint that writes the summary (the verifier guards it); empty = none.
class CompactSettings(ConsumerSettings, OptionalLlm):
    listen_addr: str = "127.0.0.1:50054"  # the internal Compact API (the gateway's Compact RPC calls it)
    # host:port of the retrieve service, which serves a session's turns ("in-process" in embedded mode).
    retrieve_addr: str
    rpc_timeout_s: float = Field(5.0, gt=0)
    # Turns read per compaction (the session's newest); older ones are already in working memory.
    max_session_turns: int = Field(2000, gt=0)
