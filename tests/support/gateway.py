"""A gateway built in a test with acm_gateway.app.build_servicer, which is handed its bus and retriever."""

from __future__ import annotations

from acm_gateway.settings import GatewaySettings


def gateway_settings(database_url: str) -> GatewaySettings:
    """Settings for such a gateway: the addresses of what it is handed are never used, the cache is in-process."""
    return GatewaySettings(
        database_url=database_url,
        bus_url="unused://",
        retrieve_addr="unused:1",
        architect_addr="unused:1",
        cache_url="memory://",
    )
