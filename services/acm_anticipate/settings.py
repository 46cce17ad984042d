from __future__ import annotations

from pydantic import Field

from acm.settings import ConsumerSettings


class AnticipateSettings(ConsumerSettings):
    retrieve_addr: str  # host:port of the retrieve service ("in-process" in embedded mode)
    recent_entities: int = Field(32, gt=0)
    hot_state_ttl_s: float = Field(3600.0, gt=0)
    # Token budget of each predicted retrieval that fills a session's pool (the schema bounds the pool).
    predict_budget_tokens: int = Field(3000, gt=0)
    rpc_timeout_s: float = Field(5.0, gt=0)
