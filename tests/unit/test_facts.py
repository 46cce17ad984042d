"""Which sentences of a turn become facts: pleasantries addressed to someone are still pleasantries."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from acm.domain.facts import facts_from_turn, in_context, replied_sentence
from acm.domain.gate import is_chit_chat, is_lead_in
from acm.domain.models import Role, Turn
from acm.domain.schema import default_schema
from acm.domain.scope import Scope
from acm_ingest.pipeline import plan_turn

AT = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "Thanks, Melanie!",
        "Hey Mel!",
        "Sounds great, Mel.",
        "Thanks Sarah and John!",
        "Hey Mel, what's up?",
        "Cool, John!",  # "Cool" is capitalised like a name, and is the pleasantry
        "Awesome, Maria!",
    ],
)
def test_a_pleasantry_addressed_to_someone_is_a_pleasantry(text: str) -> None:
    assert is_chit_chat(text)


@pytest.mark.parametrize(
    "text",
    [
        "Luna and Oliver!",  # the answer to "what are your cats called?": nothing but names is content
        "Melanie went to Paris.",
        "Thanks, Melanie, the pottery class was on Friday.",
        "Wow, great pic!",
    ],
)
def test_content_is_not_a_pleasantry(text: str) -> None:
    assert not is_chit_chat(text)


def test_only_the_content_sentences_of_a_turn_become_facts() -> None:
    drafts = facts_from_turn("Caroline", "Thanks, Melanie! I went to the LGBTQ support group yesterday.", AT)
    assert [d.text for d in drafts] == ["Caroline: I went to the LGBTQ support group yesterday. (7 May 2023)"]


def test_a_turn_that_only_thanks_someone_leaves_no_fact() -> None:
    scope = Scope("local", "acme", "alice", "bot", "s1")
    turn = Turn("t1", scope, Role.USER, "Thanks, Melanie!", AT, metadata={"speaker": "Caroline"})
    plan = plan_turn(turn, default_schema("bot"), frozenset())
    assert plan.facts == ()
    names = plan_turn(
        Turn("t2", scope, Role.USER, "Luna and Oliver!", AT, metadata={"speaker": "Caroline"}),
        default_schema("bot"),
        frozenset(),
    )
    assert [f.text for f in names.facts] == ["Caroline: Luna and Oliver!"]


@pytest.mark.parametrize(
    "text",
    [
        "Yep, Caroline.",
        "Yeah, Caroline!",
        "Absolutely, Mel!",
        "Agreed, Caroline.",
        "I totally agree, Caroline.",
        "Yes!",
    ],
)
def test_agreement_addressed_to_someone_is_a_lead_in(text: str) -> None:
    assert is_lead_in(text)


@pytest.mark.parametrize(
    "text",
    ["Yes, the order is PO-123.", "Yep, Luna and Oliver!", "Right now I live in Lisbon.", "Yes, Friday works."],
)
def test_agreement_with_content_is_not_a_lead_in(text: str) -> None:
    assert not is_lead_in(text)


def test_agreement_that_opens_a_longer_turn_is_not_a_fact_but_a_bare_yes_still_is_an_answer() -> None:
    drafts = facts_from_turn("Melanie", "Yeah, Caroline! It takes courage to talk about our own stories.", AT)
    assert [d.text for d in drafts] == ["Melanie: It takes courage to talk about our own stories."]
    assert [d.text for d in facts_from_turn("Melanie", "Yes, Caroline.", AT)] == ["Melanie: Yes, Caroline."]


def test_a_turn_answers_the_question_someone_else_asked_last() -> None:
    previous = "Caroline: Hey Mel! How was the camping trip?"
    assert replied_sentence(previous, "Melanie") == "How was the camping trip?"
    assert replied_sentence(previous, "Caroline") == ""  # continuing one's own thought
    assert replied_sentence("Caroline: The trip was great.", "Melanie") == ""  # a statement asks nothing
    assert replied_sentence("no speaker here", "Melanie") == ""
    assert in_context("Melanie: We went on a hike.", "How was the camping trip?") == (
        "How was the camping trip? Melanie: We went on a hike."
    )
    assert in_context("Melanie: We went on a hike.", "") == "Melanie: We went on a hike."
