from __future__ import annotations

from pydantic import Field

from acm.settings import ServiceSettings


class CompactSettings(ServiceSettings):
    database_url: str
    bus_url: str
    cache_url: str
    # Share of the budget the trimmed working context may use, leaving room for new turns.
    target_ratio: float = Field(0.5, gt=0, le=1)
    max_session_turns: int = Field(2000, gt=0)
