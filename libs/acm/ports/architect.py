"""How the gateway reaches the architect: in-process in embedded mode, over gRPC in distributed mode.
The requests' scopes are already authenticated (client set by the gateway)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from acm.domain.errors import NotFound, Rejected
from acm.domain.scope import Scope


class AgentNotFoundError(NotFound):
    """No such agent (or version) in the caller's client."""


class SchemaRejectedError(Rejected):
    """A drafted schema could not be used; the previous version stays active."""


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """What DefineAgent is given: a description to match (or draft from), optional overrides (a JSON object of
    schema fields) and an optional archetype that skips the matching."""

    description: str
    overrides_json: str = ""
    archetype: str = ""


@dataclass(frozen=True, slots=True)
class AgentInfo:
    """One version of an agent's schema, as the architect hands it out."""

    agent_id: str
    version: int
    archetype: str
    schema_json: str
    rationale: str = ""  # why this archetype (DefineAgent only)


class Architect(Protocol):
    """``scope`` names the client and, for one agent, agent_id."""

    async def define_agent(self, scope: Scope, definition: AgentDefinition) -> AgentInfo:
        """Raises InvalidRequest naming the field for an invalid schema, SchemaRejectedError for a rejected draft."""

    async def get_agent(self, scope: Scope, version: int = 0) -> AgentInfo:
        """The version asked for (0: the latest). Raises AgentNotFoundError."""

    async def list_agents(self, scope: Scope) -> Sequence[AgentInfo]: ...
