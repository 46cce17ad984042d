"""The archetype library, description matching, overrides and schema validation (pure)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from acm.domain.archetypes import ARCHETYPES, GENERAL, NAMES, draft, keyword_scores, match
from acm.domain.schema import AgentSchema, SchemaInvalid, merge, parse, to_data
from acm.domain.scope import Tier

REQUIRED = {"customer_support", "coding_agent", "sales_crm", "it_operations", "procurement", "personal_assistant"}


def test_the_library_has_the_six_archetypes_each_valid_and_complete() -> None:
    assert REQUIRED <= set(ARCHETYPES)
    for name in ARCHETYPES:
        schema = draft("a1", name, "")
        assert schema.archetype == name
        assert len(schema.categories) >= 5
        # Every category but the turn preview says what to extract.
        assert set(schema.categories) - {"turn"} <= set(schema.extract), name
        assert schema.entity_types and schema.pinned_fields, name
        assert schema.prefetch.max_entries > 0 and schema.prefetch.max_bytes > 0
        assert AgentSchema.from_json(schema.to_json()) == schema  # stored as data, read back equal


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("Answers customers about refunds, invoices and their orders", "customer_support"),
        ("Fixes failing tests and refactors the Python repository", "coding_agent"),
        ("Tracks leads, deals and the sales pipeline in our CRM", "sales_crm"),
        ("On-call incident responder for outages and alerts", "it_operations"),
        ("Routes purchase requests to the right approval chain and checks budget", "procurement"),
        ("A personal assistant that remembers my friends, family and travel plans", "personal_assistant"),
        ("", GENERAL),
        ("zzz qqq", GENERAL),
    ],
)
def test_descriptions_match_archetypes_by_keywords(description: str, expected: str) -> None:
    assert match(description).archetype == expected


def test_an_embedding_matches_a_description_without_keywords() -> None:
    """Any embedder works: here one that maps the coding archetype's summary near the description."""
    coding = ARCHETYPES["coding_agent"].summary

    def embed(texts: list[str]) -> Sequence[Sequence[float]]:
        return [[1.0, 0.0] if t in (coding, "helps engineers ship changes") else [0.0, 1.0] for t in texts]

    assert keyword_scores("helps engineers ship changes")["coding_agent"] == 0.0
    found = match("helps engineers ship changes", embed)
    assert found.archetype == "coding_agent"
    assert "embedding 1.00" in found.rationale


def test_overrides_merge_over_the_archetype() -> None:
    schema = draft("a1", "customer_support", "", {"retention": {"mid_ttl_days": 7}, "pinned_fields": ["sku"]})
    assert schema.retention.mid_ttl_days == 7
    assert schema.retention.long_ttl_days == 365  # the rest of the section is the archetype's
    assert schema.pinned_fields == ("sku",)
    assert merge({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}}) == {"a": {"b": 1, "c": 3}}


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"category_tiers": {"billing": "galaxy"}}, "category_tiers.billing"),
        ({"retention": {"mid_ttl_days": -1}}, "retention.mid_ttl_days"),
        ({"retrieval": {"alpha_similarity": "high"}}, "retrieval.alpha_similarity"),
        ({"retrieval": {"k": 2.5}}, "retrieval.k"),
        ({"retrieval": {"preset": "psychic"}}, "retrieval.preset"),
        ({"archetype": "wizard"}, "archetype"),
        ({"category_layers": {"billing": "forever"}}, "category_layers.billing"),
        ({"category_keywords": {"nope": ["x"]}}, "category_keywords"),
        ({"prefetch": {"max_entries": 0}}, "prefetch"),
        ({"colour": "blue"}, "colour"),
        ({"agent_id": "other"}, "agent_id"),
    ],
)
def test_an_invalid_schema_names_the_field(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(SchemaInvalid, match=field.replace(".", r"\.")):
        draft("a1", "customer_support", "", overrides)


def test_an_archetype_that_does_not_exist_is_named() -> None:
    with pytest.raises(SchemaInvalid, match="archetype 'wizard' does not exist"):
        draft("a1", "wizard", "")
    assert set(NAMES) == {GENERAL, *ARCHETYPES}


def test_a_schema_round_trips_through_json() -> None:
    schema = draft("a1", "procurement", "approvals")
    data = json.loads(json.dumps(to_data(schema)))
    assert parse(data) == schema
    assert schema.category_tiers["supplier"] is Tier.CUSTOMER
