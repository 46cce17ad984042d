from __future__ import annotations

from acm.settings import ServiceSettings


class ArchitectSettings(ServiceSettings):
    database_url: str
    bus_url: str
