"""The schema decides what is kept, at which tier, in which layer, for how long (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

from acm.domain.archetypes import draft
from acm.domain.models import Layer
from acm.domain.placement import category_of, expires_at, place, promoted
from acm.domain.schema import default_schema
from acm.domain.scope import Tier

SUPPORT = draft("s", "customer_support", "")
CODING = draft("c", "coding_agent", "")
SENTENCES = {
    "refund": "I was charged twice and want a refund of $49.99 for order ORD-1234.",
    "build": "The build fails in src/app.py with a KeyError on the main branch.",
    "decision": "We decided to use Postgres instead of MongoDB for the ledger.",
    "smalltalk": "The weather in Lisbon was lovely this weekend.",
}


def test_the_same_sentences_are_kept_differently_by_two_schemas() -> None:
    support = {k: place(SUPPORT, s, False, False) for k, s in SENTENCES.items()}
    coding = {k: place(CODING, s, False, False) for k, s in SENTENCES.items()}
    assert support["refund"] is not None and support["refund"].category == "billing"
    assert coding["refund"] is None  # a coding agent keeps no billing facts
    assert coding["build"] is not None and coding["build"].category == "error"
    assert coding["decision"] is not None and coding["decision"].tier is Tier.CUSTOMER  # the team's decision
    assert coding["decision"].layer is Layer.LONG
    assert support["smalltalk"] is None and coding["smalltalk"] is None


def test_the_default_schema_keeps_everything_as_before() -> None:
    schema = default_schema("d")
    fact = place(schema, SENTENCES["smalltalk"], False, False)
    assert fact is not None and (fact.category, fact.tier, fact.layer) == ("fact", Tier.USER, Layer.MID)
    lasting = place(schema, "I love hiking.", True, False)
    assert lasting is not None and (lasting.category, lasting.layer) == ("preference", Layer.LONG)
    assert category_of(schema, "I love hiking.", True) == "preference"


def test_retention_and_promotion_follow_the_schema() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    assert (expires_at(SUPPORT, Layer.MID, at) - at).days == 30
    assert (expires_at(CODING, Layer.MID, at) - at).days == 14
    assert promoted(SUPPORT, Layer.MID, 2, False) is Layer.LONG
    assert promoted(CODING, Layer.MID, 2, False) is Layer.MID  # coding promotes after 3 mentions
    assert promoted(CODING, Layer.MID, 1, True) is Layer.LONG  # said again in another session
