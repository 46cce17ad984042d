"""Agent schemas: the default for an agent seen for the first time, DefineAgent (archetype matched to a
description, or drafted by an LLM when one is configured, merged with overrides, validated), GetAgent
and ListAgents. Every new version is stored, then announced on the schemas topic."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, Field

from acm import topics
from acm.domain.archetypes import ARCHETYPES, CATEGORY_FIELDS, GENERAL, NAMES, Embed, draft, match
from acm.domain.schema import DEFAULT_AGENT, AgentSchema, SchemaInvalid, default_schema, merge, to_data
from acm.domain.scope import Scope
from acm.envelopes import envelope
from acm.ports.architect import AgentNotFoundError, SchemaRejectedError
from acm.ports.bus import EventBus
from acm.ports.llm import Llm
from acm.ports.stores import SchemaRepo
from acm.structured import StructuredAnswerFailed, ask_structured

log = logging.getLogger("acm.architect")


class SchemaRejected(SchemaRejectedError):
    """The LLM's draft could not be used; the previous version stays active."""


class AgentNotFound(AgentNotFoundError):
    pass


async def announce(bus: EventBus, scope: Scope, schema: AgentSchema, traceparent: str = "") -> None:
    event = envelope(scope, traceparent=traceparent)
    event.schema_changed.agent_id = schema.agent_id
    event.schema_changed.version = schema.version
    await bus.publish(topics.SCHEMAS, f"{scope.client_id}/{schema.agent_id}", event.SerializeToString())


@dataclass
class EnsureAgent:
    """The first turn of an unknown agent gives it the default schema, once."""

    schemas: SchemaRepo
    bus: EventBus

    async def __call__(self, scope: Scope, traceparent: str = "") -> AgentSchema:
        agent_id = scope.agent_id or DEFAULT_AGENT
        current = await self.schemas.latest(scope, agent_id)
        if current is not None:
            return current
        schema = default_schema(agent_id)
        if await self.schemas.put(scope.client_id, schema):
            await announce(self.bus, scope, schema, traceparent)
        return schema


class CategoryDraft(BaseModel):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")
    extract: str
    keywords: list[str] = Field(default_factory=list, max_length=30)
    tier: str = "user"
    layer: str = "mid"


class LlmSchemaDraft(BaseModel):
    """What the model is asked for: the parts of a schema that depend on what the agent does."""

    archetype: str = Field(description="closest of: " + ", ".join(NAMES))
    categories: list[CategoryDraft] = Field(min_length=1, max_length=20)
    entity_types: list[str] = Field(default_factory=list, max_length=20)
    pinned_fields: list[str] = Field(default_factory=list, max_length=20)
    retrieval_preset: str = "balanced"


def from_llm_draft(d: LlmSchemaDraft) -> dict[str, Any]:
    """The draft as schema overrides (validated by parse like any other)."""
    names = [c.name for c in d.categories]
    return {
        "archetype": "custom",
        "categories": ["turn", *[n for n in names if n != "turn"]],
        "extract": {c.name: c.extract for c in d.categories},
        "category_keywords": {c.name: c.keywords for c in d.categories if c.keywords},
        "category_tiers": {c.name: c.tier for c in d.categories},
        "category_layers": {c.name: c.layer for c in d.categories},
        "fallback_category": names[0],
        "related_categories": {},
        "open_task_categories": [],
        "entity_types": d.entity_types,
        "pinned_fields": d.pinned_fields,
        "retrieval": {"preset": d.retrieval_preset},
    }


@dataclass
class Defined:
    schema: AgentSchema
    rationale: str


@dataclass
class DefineAgent:
    schemas: SchemaRepo
    bus: EventBus
    embed: Embed | None = None
    llm: Llm | None = None
    llm_failures: int = 0
    llm_reasons: list[str] = field(default_factory=list)

    async def __call__(
        self, scope: Scope, description: str, overrides_json: str, archetype: str, traceparent: str = ""
    ) -> Defined:
        agent_id = scope.agent_id or DEFAULT_AGENT
        overrides = _overrides(overrides_json)
        if archetype and archetype not in NAMES:
            raise SchemaInvalid(f"archetype {archetype!r} does not exist; use one of: {', '.join(NAMES)}")
        previous = await self.schemas.latest(scope, agent_id)
        by_llm = not archetype and self.llm is not None
        if archetype:
            chosen, rationale = archetype, f"archetype {archetype!r} requested"
        elif by_llm:
            chosen, rationale, overrides = await self._llm_draft(description, overrides, previous)
        else:
            found = match(description, self.embed)
            chosen, rationale = found.archetype, found.rationale
        schema = draft(agent_id, chosen, description, overrides, replacing=self._replacing(by_llm))
        schema = replace(schema, version=(previous.version + 1) if previous else 1)
        if not await self.schemas.put(scope.client_id, schema):
            raise SchemaRejected(f"version {schema.version} of {agent_id!r} was written concurrently; retry")
        await announce(self.bus, scope, schema, traceparent)
        return Defined(schema, rationale)

    async def _llm_draft(
        self, description: str, overrides: dict[str, Any], previous: AgentSchema | None
    ) -> tuple[str, str, dict[str, Any]]:
        assert self.llm is not None
        try:
            answer = await ask_structured(
                self.llm,
                LlmSchemaDraft,
                system="You design memory schemas for LLM agents. Answer with JSON only.",
                prompt=f"Design the memory categories for this agent:\n{description}",
            )
            drafted = from_llm_draft(answer)
            base = answer.archetype if answer.archetype in ARCHETYPES else GENERAL
            # Validate the model's part before the caller's overrides hide a problem in it.
            draft("check", base, description, drafted, replacing=CATEGORY_FIELDS)
        except (StructuredAnswerFailed, SchemaInvalid) as exc:
            self.llm_failures += 1
            self.llm_reasons.append(str(exc))
            kept = f"version {previous.version} stays active" if previous else "no schema was created"
            log.warning("LLM schema draft rejected (%s); %s", exc, kept)
            raise SchemaRejected(f"the LLM's schema draft was rejected: {exc}; {kept}") from exc
        return base, f"drafted by the LLM over {base!r}", merge(drafted, overrides)

    def _replacing(self, drafted_by_llm: bool) -> tuple[str, ...]:
        return CATEGORY_FIELDS if drafted_by_llm else ()


def _overrides(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SchemaInvalid(f"overrides_json is not valid JSON: {exc.msg} at position {exc.pos}") from None
    if not isinstance(data, dict):
        raise SchemaInvalid("overrides_json must be a JSON object")
    return data


@dataclass
class GetAgent:
    schemas: SchemaRepo

    async def __call__(self, scope: Scope, version: int) -> AgentSchema:
        agent_id = scope.agent_id or DEFAULT_AGENT
        found = await (
            self.schemas.version(scope, agent_id, version) if version else self.schemas.latest(scope, agent_id)
        )
        if found is None:
            which = f"version {version} of " if version else ""
            raise AgentNotFound(f"no schema for {which}agent {agent_id!r} in this client")
        return found


@dataclass
class ListAgents:
    schemas: SchemaRepo

    async def __call__(self, scope: Scope) -> Sequence[AgentSchema]:
        return await self.schemas.agents(scope)


def schema_json(schema: AgentSchema) -> str:
    return json.dumps(to_data(schema), sort_keys=True)
