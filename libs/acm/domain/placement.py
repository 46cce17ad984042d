"""Where the agent's schema puts a fact: its category (or none: not kept), scope tier, retention layer
and expiry. Pure; ingest calls it for every fact it drafts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from acm.domain.models import Layer
from acm.domain.retention import ttl_days
from acm.domain.schema import AgentSchema
from acm.domain.scope import Tier


@dataclass(frozen=True, slots=True)
class Placement:
    category: str
    tier: Tier
    layer: Layer


@lru_cache(maxsize=4096)
def _cue(word: str) -> re.Pattern[str]:
    # Whole-word for words, substring for cues with punctuation (".py", "po-").
    if re.fullmatch(r"[\w ]+", word):
        return re.compile(rf"\b{re.escape(word.lower())}\b")
    return re.compile(re.escape(word.lower()))


def category_of(schema: AgentSchema, sentence: str, lasting: bool) -> str:
    """The first category (in schema order) with a cue in the sentence; a lasting statement without a
    cue is a preference when the schema keeps those; otherwise the fallback ("" → not kept)."""
    text = sentence.lower()
    for category in schema.categories:
        if any(_cue(w).search(text) for w in schema.category_keywords.get(category, ())):
            return category
    if lasting and "preference" in schema.categories:
        return "preference"
    return schema.fallback_category


def place(schema: AgentSchema, sentence: str, lasting: bool, has_slot: bool) -> Placement | None:
    """None when the schema does not keep this kind of fact."""
    category = category_of(schema, sentence, lasting and not has_slot)
    if not category:
        return None
    tier = schema.category_tiers.get(category, Tier.USER)
    named = schema.category_layers.get(category)
    if named:
        layer = Layer(named)
    else:
        layer = Layer.LONG if lasting else Layer.MID
    return Placement(category, tier, layer)


def expires_at(schema: AgentSchema, layer: Layer, written_at: datetime) -> datetime:
    """When a memory of ``layer`` written at ``written_at`` expires under the schema's retention."""
    return written_at + timedelta(days=ttl_days(schema.retention, layer))


def promoted(schema: AgentSchema, layer: Layer, mentions: int, other_session: bool) -> Layer:
    """SHORT → MID → LONG: a MID fact repeated often enough, or said again in another session, lasts."""
    if layer is Layer.MID and (other_session or mentions >= schema.retention.promote_after_mentions):
        return Layer.LONG
    return layer
