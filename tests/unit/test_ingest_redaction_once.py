"""Ingest redacts a turn once (issue 20): redacted_turn scans content, metadata and tool JSON, and plan_turn takes
its text and counts instead of scanning the content again. The stored text and the job's counts are those of the
two passes before, except where the second pass, reading raw JSON text without its keys, took a keyed id for a
card and counted it on top."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

from acm.domain.models import Role, Turn
from acm.domain.pii import redact_turn
from acm.domain.schema import default_schema
from acm.domain.scope import Scope
from acm_ingest.pipeline import IMAGE_CAPTION, TurnPlan, pii_rules, plan_turn, redacted_turn

SCHEMA = default_schema("bot")
RULES = pii_rules(SCHEMA)
SCOPE = Scope("c", "acme", "u", "bot", "s")


def _turn(content: str, role: Role = Role.USER, tool: str = "", metadata: dict[str, str] | None = None) -> Turn:
    return Turn(
        turn_id="t",
        scope=SCOPE,
        role=role,
        content=content,
        tool_name=tool,
        metadata=metadata or {},
        occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def _two_passes(turn: Turn) -> tuple[TurnPlan, dict[str, int]]:
    """Ingest before issue 20: redact_turn, then plan_turn's own scan of the content; the counts summed."""
    redacted, counts = redact_turn(turn, RULES)
    plan = plan_turn(redacted, SCHEMA, frozenset())
    return plan, dict(Counter(plan.redactions) + Counter(counts))


def _one_pass(turn: Turn) -> TurnPlan:
    redacted, counts = redacted_turn(turn, RULES)
    return plan_turn(redacted, SCHEMA, frozenset(), redacted=counts)


SAID = _turn(
    "Mail me at bob.lee@example.com, card 4111 1111 1111 1111 please.",
    metadata={IMAGE_CAPTION: "a note saying call +1 415 555 0134", "ref": "jane@corp.io"},
)
TOOL = _turn(
    '{"user": {"email": "ann@shop.com", "password": "hunter2!x", "iban": "DE89370400440532013000"}}',
    Role.TOOL,
    "crm.get_user",
)


@pytest.mark.parametrize(
    ("turn", "counts"),
    [
        (SAID, {"email": 2, "card": 1, "phone": 1}),  # content, caption and another metadata value
        (TOOL, {"email": 1, "secret": 1, "iban": 1}),  # JSON strings read after their keys
    ],
    ids=["content-and-metadata", "tool-json"],
)
def test_one_pass_counts_and_stores_what_two_did(turn: Turn, counts: dict[str, int]) -> None:
    before, before_counts = _two_passes(turn)
    after = _one_pass(turn)
    assert after.redactions == before_counts == counts  # one per value: none counted twice
    assert after.text == before.text and "[REDACTED:" in after.text
    assert after.facts == before.facts and after.shown == before.shown


def test_a_keyed_id_the_second_pass_took_for_a_card_is_no_longer_counted() -> None:
    charge = _turn(
        '{"id": "ch_3SJdJaK4XCwq4Iu2lrTDTkXE", "object": "charge", "amount": 51952, "payment_method_details": '
        '{"card": {"last4": "1947", "brand": "mastercard"}}, "receipt_number": "8794332792289267"}',
        Role.TOOL,
        "zendesk_ticket",  # tests/data/safety/pii_dev7.jsonl, pii-dev7-0278
    )
    before, before_counts = _two_passes(charge)
    assert before_counts == {"card": 1} and "8794332792289267" not in before.text  # what the second scan did
    after = _one_pass(charge)
    assert after.redactions == {} and '"receipt_number": "8794332792289267"' in after.text


def test_a_control_byte_inside_a_value_hides_no_part_of_it() -> None:
    # Stripped before the one scan: the two passes scanned first and stripped after, leaving "bob" behind.
    after = _one_pass(_turn("my card is 4111 1111\x1b[0m 1111 1111 and mail bob\x1b[1m@example.com"))
    assert after.text == "my card is [REDACTED:card] and mail [REDACTED:email]"
    assert after.redactions == {"card": 1, "email": 1}


def test_two_ibans_in_one_sentence_are_both_redacted_in_one_pass() -> None:
    plan = _one_pass(_turn("Pay to DE89370400440532013000 and refund to GB29NWBK60161331926819."))
    assert plan.redactions == {"iban": 2}, plan.text
