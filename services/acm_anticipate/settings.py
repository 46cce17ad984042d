from __future__ import annotations

from pydantic import Field

from acm.settings import ServiceSettings


class AnticipateSettings(ServiceSettings):
    database_url: str
    bus_url: str
    cache_url: str
    recent_entities: int = Field(32, gt=0)
    hot_state_ttl_s: float = Field(3600.0, gt=0)
