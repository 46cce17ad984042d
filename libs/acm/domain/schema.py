"""Agent schemas: the per-agent rules every service reads (versioned data, validated here).

This is the first cut: a default template that later grows into the archetype library of the
architect issue. Validation errors name the field, so a bad override gets an actionable message."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from acm.domain.retrieval import PRESETS
from acm.domain.scope import Tier

DEFAULT_AGENT = "default"  # the agent id of turns that name none
DEFAULT_CATEGORIES = ("turn", "fact", "preference")


class SchemaInvalid(ValueError):
    """An agent schema that cannot be used; the message names the field."""


@dataclass(frozen=True, slots=True)
class Retention:
    short_ttl_days: float = 2.0
    mid_ttl_days: float = 30.0
    long_ttl_days: float = 365.0


@dataclass(frozen=True, slots=True)
class RetrievalWeights:
    preset: str = "balanced"  # a name from acm.domain.retrieval.PRESETS
    alpha_similarity: float = 0.8
    beta_recency: float = 0.1
    gamma_frequency: float = 0.1
    k: int = 20
    graph_depth: int = 1


@dataclass(frozen=True, slots=True)
class CompactionRules:
    """A session's working memory: compacted (verified) when it crosses soft_ratio of the budget; over
    hard_ratio, fetches degrade (pinned state + summary + newest turns + a notice), then fail loudly."""

    budget_tokens: int = 4000
    soft_ratio: float = 0.7
    recent_turns_verbatim: int = 6
    hard_ratio: float = 1.0
    target_ratio: float = 0.45  # what a compaction shrinks the working memory to
    summary_ratio: float = 0.25  # above it, summary lines whose facts are all pinned are folded away
    max_attempts: int = 3  # verifier back-off steps before a compaction is given up (memory unchanged)
    local_only: bool = False  # never send this agent's sessions to an external LLM endpoint


@dataclass(frozen=True, slots=True)
class PrivacyRules:
    """Cards, IBANs, secrets, one-time codes and national ids are always redacted; these are optional."""

    redact_emails: bool = True
    redact_phones: bool = True


@dataclass(frozen=True, slots=True)
class GateSettings:
    """What the quality gate drops before anything is remembered."""

    drop_chit_chat: bool = True
    drop_log_noise: bool = True
    drop_repeated_errors: bool = True
    drop_seen_stack_traces: bool = True


@dataclass(frozen=True, slots=True)
class AgentSchema:
    agent_id: str
    version: int
    archetype: str
    description: str
    categories: tuple[str, ...] = DEFAULT_CATEGORIES
    category_tiers: dict[str, Tier] = field(default_factory=dict)
    retention: Retention = Retention()
    retrieval: RetrievalWeights = RetrievalWeights()
    compaction: CompactionRules = CompactionRules()
    privacy: PrivacyRules = PrivacyRules()
    gate: GateSettings = GateSettings()

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> AgentSchema:
        return parse(json.loads(raw))


def default_schema(agent_id: str, description: str = "") -> AgentSchema:
    return validate(
        AgentSchema(
            agent_id=agent_id,
            version=1,
            archetype="general",
            description=description,
            category_tiers={"turn": Tier.USER, "fact": Tier.USER, "preference": Tier.USER},
        )
    )


def _number(path: str, value: Any, *, integer: bool = False, minimum: float = 0.0) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or (integer and not isinstance(value, int)):
        raise SchemaInvalid(f"{path} must be {'an integer' if integer else 'a number'}, got {value!r}")
    if value < minimum:
        raise SchemaInvalid(f"{path} must be ≥ {minimum}, got {value!r}")
    return value


def _text(path: str, value: Any) -> str:
    if not isinstance(value, str):
        raise SchemaInvalid(f"{path} must be a string, got {value!r}")
    return value


def _flag(path: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SchemaInvalid(f"{path} must be true or false, got {value!r}")
    return value


def _field(path: str, type_name: Any, value: Any) -> Any:
    if type_name == "str":
        return _text(path, value)
    if type_name == "bool":
        return _flag(path, value)
    return _number(path, value, integer=type_name == "int")


def _section(cls: type, path: str, raw: Any) -> Any:
    if not isinstance(raw, dict):
        raise SchemaInvalid(f"{path} must be an object")
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise SchemaInvalid(f"{path} has unknown field(s): {', '.join(unknown)}")
    values = {name: _field(f"{path}.{name}", known[name].type, value) for name, value in raw.items()}
    return cls(**values)


def parse(raw: dict[str, Any]) -> AgentSchema:
    """Build a schema from JSON-like data, naming the first field that is wrong."""
    try:
        tiers = {str(k): Tier(v) for k, v in dict(raw.get("category_tiers", {})).items()}
    except ValueError as exc:
        raise SchemaInvalid(f"category_tiers: {exc} (use user, customer or client)") from None
    schema = AgentSchema(
        agent_id=str(raw.get("agent_id", "")),
        version=_number("version", raw.get("version", 1), integer=True, minimum=1),
        archetype=str(raw.get("archetype", "general")),
        description=str(raw.get("description", "")),
        categories=tuple(str(c) for c in raw.get("categories", DEFAULT_CATEGORIES)),
        category_tiers=tiers,
        retention=_section(Retention, "retention", raw.get("retention", {})),
        retrieval=_section(RetrievalWeights, "retrieval", raw.get("retrieval", {})),
        compaction=_section(CompactionRules, "compaction", raw.get("compaction", {})),
        privacy=_section(PrivacyRules, "privacy", raw.get("privacy", {})),
        gate=_section(GateSettings, "gate", raw.get("gate", {})),
    )
    return validate(schema)


def validate(schema: AgentSchema) -> AgentSchema:
    if not schema.agent_id:
        raise SchemaInvalid("agent_id is required")
    if schema.compaction.soft_ratio <= 0 or schema.compaction.soft_ratio > 1:
        raise SchemaInvalid("compaction.soft_ratio must be in (0, 1]")
    if schema.compaction.budget_tokens < 1:
        raise SchemaInvalid("compaction.budget_tokens must be ≥ 1")
    _check_compaction(schema.compaction)
    if schema.retrieval.preset not in PRESETS:
        raise SchemaInvalid(f"retrieval.preset {schema.retrieval.preset!r} is not one of: {', '.join(PRESETS)}")
    missing = [c for c in schema.category_tiers if c not in schema.categories]
    if missing:
        raise SchemaInvalid(f"category_tiers names unknown categor(ies): {', '.join(missing)}")
    return schema


def _check_compaction(c: CompactionRules) -> None:
    if not c.soft_ratio <= c.hard_ratio <= 4:
        raise SchemaInvalid(
            f"compaction.hard_ratio must be between soft_ratio ({c.soft_ratio}) and 4, got {c.hard_ratio}"
        )
    if not 0 < c.target_ratio < c.soft_ratio:
        raise SchemaInvalid(f"compaction.target_ratio must be in (0, soft_ratio={c.soft_ratio}), got {c.target_ratio}")
    if not 0 < c.summary_ratio <= 1:
        raise SchemaInvalid(f"compaction.summary_ratio must be in (0, 1], got {c.summary_ratio}")
    if c.recent_turns_verbatim < 0:
        raise SchemaInvalid("compaction.recent_turns_verbatim must be ≥ 0")
    if not 1 <= c.max_attempts <= 10:
        raise SchemaInvalid(f"compaction.max_attempts must be between 1 and 10, got {c.max_attempts}")


def next_version(schema: AgentSchema, previous: AgentSchema | None) -> AgentSchema:
    return replace(schema, version=(previous.version + 1) if previous else 1)
