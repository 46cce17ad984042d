"""Agent schemas: the per-agent rules every service reads (versioned data, validated here).

A schema says which categories of memory an agent keeps and what to extract for each, which scope tier
and retention layer each category is written to, how retrieval weighs candidates, what compaction pins,
what PII is redacted, what the quality gate drops and how much the prefetch cache may hold per session.
The archetype library (acm.domain.archetypes) drafts schemas; this module parses and validates them, and
every error names the field, so a bad override gets an actionable message."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from typing import Any

from acm.domain.errors import InvalidRequest
from acm.domain.retrieval import PRESETS
from acm.domain.scope import Tier

DEFAULT_AGENT = "default"  # the agent id of turns that name none
DEFAULT_CATEGORIES = ("turn", "fact", "preference")


class SchemaInvalid(InvalidRequest):
    """An agent schema that cannot be used; the message names the field."""


LAYERS = ("short", "mid", "long")


@dataclass(frozen=True, slots=True)
class Retention:
    """How long each layer lives, and when a memory moves up (SHORT → MID → LONG)."""

    short_ttl_days: float = 2.0
    mid_ttl_days: float = 30.0
    long_ttl_days: float = 365.0
    # A MID fact mentioned this many times (or said again in another session) is promoted to LONG.
    promote_after_mentions: int = 3


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
    # The pinned state's cap: the highest-ranked pins that fit are shown, the rest stay memories.
    pinned_max_tokens: int = 600
    pinned_max_entities: int = 40


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
class PrefetchBudget:
    """What the anticipate service may keep warm for one session of this agent."""

    max_entries: int = 200
    max_bytes: int = 262_144
    ttl_s: float = 3600.0


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
    # category → what to extract for it (guidance for an LLM extractor, documentation for people).
    extract: dict[str, str] = field(default_factory=dict)
    # category → cue words: a fact containing one belongs to that category (the first of `categories` wins).
    category_keywords: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # category → retention layer ("short", "mid", "long"); unset → mid (lasting statements long).
    category_layers: dict[str, str] = field(default_factory=dict)
    # Category of a fact that matches no cue; "" → such facts are not kept.
    fallback_category: str = "fact"
    # category → categories worth prefetching when it comes up in a session.
    related_categories: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Categories whose memories are open work (tasks, pending approvals): always prefetched.
    open_task_categories: tuple[str, ...] = ()
    entity_types: tuple[str, ...] = ()
    # Entity attributes compaction must keep verbatim (ids, amounts, statuses); data for the compact service.
    pinned_fields: tuple[str, ...] = ()
    prefetch: PrefetchBudget = PrefetchBudget()

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> AgentSchema:
        return _parsed(raw)


@lru_cache(maxsize=256)
def _parsed(raw: str) -> AgentSchema:
    # Services re-read the stored schema on every request; the schema is frozen, so one parse per version.
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


def _strings(path: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise SchemaInvalid(f"{path} must be a list of strings, got {value!r}")
    return tuple(_text(f"{path}[{i}]", v) for i, v in enumerate(value))


def _mapping(path: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SchemaInvalid(f"{path} must be an object, got {value!r}")
    return {_text(f"{path} key", k): v for k, v in value.items()}


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


KNOWN_FIELDS = frozenset(f.name for f in fields(AgentSchema))


def parse(raw: dict[str, Any]) -> AgentSchema:
    """Build a schema from JSON-like data, naming the first field that is wrong."""
    if not isinstance(raw, dict):
        raise SchemaInvalid("the schema must be a JSON object")
    unknown = sorted(set(raw) - KNOWN_FIELDS)
    if unknown:
        raise SchemaInvalid(f"unknown field(s): {', '.join(unknown)}")
    tiers: dict[str, Tier] = {}
    for name, value in _mapping("category_tiers", raw.get("category_tiers", {})).items():
        try:
            tiers[name] = Tier(value)
        except ValueError:
            raise SchemaInvalid(
                f"category_tiers.{name}: unknown tier {value!r} (use user, customer or client)"
            ) from None
    layers = {
        k: _text(f"category_layers.{k}", v)
        for k, v in _mapping("category_layers", raw.get("category_layers", {})).items()
    }
    schema = AgentSchema(
        agent_id=_text("agent_id", raw.get("agent_id", "")),
        version=_number("version", raw.get("version", 1), integer=True, minimum=1),
        archetype=_text("archetype", raw.get("archetype", "general")),
        description=_text("description", raw.get("description", "")),
        categories=_strings("categories", raw.get("categories", list(DEFAULT_CATEGORIES))),
        category_tiers=tiers,
        retention=_section(Retention, "retention", raw.get("retention", {})),
        retrieval=_section(RetrievalWeights, "retrieval", raw.get("retrieval", {})),
        compaction=_section(CompactionRules, "compaction", raw.get("compaction", {})),
        privacy=_section(PrivacyRules, "privacy", raw.get("privacy", {})),
        gate=_section(GateSettings, "gate", raw.get("gate", {})),
        extract={k: _text(f"extract.{k}", v) for k, v in _mapping("extract", raw.get("extract", {})).items()},
        category_keywords={
            k: _strings(f"category_keywords.{k}", v)
            for k, v in _mapping("category_keywords", raw.get("category_keywords", {})).items()
        },
        category_layers=layers,
        fallback_category=_text("fallback_category", raw.get("fallback_category", "fact")),
        related_categories={
            k: _strings(f"related_categories.{k}", v)
            for k, v in _mapping("related_categories", raw.get("related_categories", {})).items()
        },
        open_task_categories=_strings("open_task_categories", raw.get("open_task_categories", [])),
        entity_types=_strings("entity_types", raw.get("entity_types", [])),
        pinned_fields=_strings("pinned_fields", raw.get("pinned_fields", [])),
        prefetch=_section(PrefetchBudget, "prefetch", raw.get("prefetch", {})),
    )
    return validate(schema)


def _known(path: str, names: Any, categories: tuple[str, ...]) -> None:
    missing = [c for c in names if c not in categories]
    if missing:
        raise SchemaInvalid(f"{path} names unknown categor(ies): {', '.join(missing)}")


def validate(schema: AgentSchema) -> AgentSchema:
    if not schema.agent_id:
        raise SchemaInvalid("agent_id is required")
    if not schema.categories:
        raise SchemaInvalid("categories must name at least one category")
    if schema.compaction.soft_ratio <= 0 or schema.compaction.soft_ratio > 1:
        raise SchemaInvalid("compaction.soft_ratio must be in (0, 1]")
    if schema.compaction.budget_tokens < 1:
        raise SchemaInvalid("compaction.budget_tokens must be ≥ 1")
    if schema.compaction.pinned_max_tokens < 1 or schema.compaction.pinned_max_entities < 1:
        raise SchemaInvalid("compaction.pinned_max_tokens and compaction.pinned_max_entities must be ≥ 1")
    _check_compaction(schema.compaction)
    if schema.retrieval.preset not in PRESETS:
        raise SchemaInvalid(f"retrieval.preset {schema.retrieval.preset!r} is not one of: {', '.join(PRESETS)}")
    if schema.retrieval.k < 1:
        raise SchemaInvalid("retrieval.k must be ≥ 1")
    r = schema.retention
    if not r.short_ttl_days <= r.mid_ttl_days <= r.long_ttl_days:
        raise SchemaInvalid("retention: TTLs must grow from short_ttl_days to mid_ttl_days to long_ttl_days")
    if r.promote_after_mentions < 1:
        raise SchemaInvalid("retention.promote_after_mentions must be ≥ 1")
    if schema.prefetch.max_entries < 1 or schema.prefetch.max_bytes < 1024 or schema.prefetch.ttl_s <= 0:
        raise SchemaInvalid("prefetch: max_entries must be ≥ 1, max_bytes ≥ 1024 and ttl_s > 0")
    _known("category_tiers", schema.category_tiers, schema.categories)
    _known("extract", schema.extract, schema.categories)
    _known("category_keywords", schema.category_keywords, schema.categories)
    _known("category_layers", schema.category_layers, schema.categories)
    _known("related_categories", schema.related_categories, schema.categories)
    _known("related_categories", [c for cs in schema.related_categories.values() for c in cs], schema.categories)
    _known("open_task_categories", schema.open_task_categories, schema.categories)
    if schema.fallback_category:
        _known("fallback_category", [schema.fallback_category], schema.categories)
    for name, layer in schema.category_layers.items():
        if layer not in LAYERS:
            raise SchemaInvalid(f"category_layers.{name}: unknown layer {layer!r} (use short, mid or long)")
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


def to_data(schema: AgentSchema) -> dict[str, Any]:
    """JSON-ready data (tuples as lists) that parse() reads back to an equal schema."""
    data: dict[str, Any] = json.loads(schema.to_json())
    return data


def merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``overrides`` over ``base``: objects merge key by key, anything else replaces."""
    out = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out
