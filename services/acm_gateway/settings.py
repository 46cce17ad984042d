from __future__ import annotations

import socket

from pydantic import Field

from acm.settings import ServiceSettings


class GatewaySettings(ServiceSettings):
    database_url: str
    bus_url: str
    retrieve_addr: str  # host:port of the retrieve service
    architect_addr: str  # host:port of the architect service (DefineAgent, GetAgent, ListAgents)
    compact_addr: str = "127.0.0.1:50054"  # host:port of the compact service (the Compact RPC); its default address
    # Prefetch pools (anticipate) and the session tokens that tell whether a kept session context is current.
    cache_url: str
    listen_addr: str = "127.0.0.1:50051"
    max_turn_bytes: int = Field(65536, gt=0)
    default_budget_tokens: int = Field(2000, gt=0)
    max_budget_tokens: int = Field(128_000, gt=0)
    rpc_timeout_s: float = Field(5.0, gt=0)
    # Deadline of a Compact call: it may wait for the compact service's LLM summary (its ACM_LLM_TIMEOUT_S).
    compact_timeout_s: float = Field(30.0, gt=0)
    max_session_turns: int = Field(2000, gt=0)  # turns read to assemble a session's context
    # Names this replica's warm-up consumer group (each replica warms its own memory): the pod's name in k8s.
    instance_id: str = Field(default_factory=socket.gethostname, min_length=1)
