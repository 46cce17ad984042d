"""Typed relations from the words between two mentions of one sentence (rules, no LLM)."""

from __future__ import annotations

import pytest

from acm.domain.extract import mentions, typed_relations


def rel(sentence: str) -> list[tuple[str, str, str]]:
    return typed_relations(sentence, mentions(sentence))


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Sarah Chen works at Acme Corp.", ("Sarah Chen", "works_at", "Acme Corp")),
        ("Tom, who works for Globex, called.", ("Tom", "works_at", "Globex")),
        ("Tom reports to Sarah Chen since May.", ("Tom", "reports_to", "Sarah Chen")),
        ("Priya approved PO-20261028-0098 yesterday.", ("Priya", "approved", "PO-20261028-0098")),
        ("Lee rejected INC-42.", ("Lee", "rejected", "INC-42")),
        ("PO-20261028-0098 for 125,000.00 CNY was submitted.", ("PO-20261028-0098", "amount", "125,000.00 CNY")),
        ("Sarah is Tom's manager.", ("Sarah", "manager_of", "Tom")),
        ("Caroline moved to Sweden.", ("Caroline", "lives_in", "Sweden")),
        ("Melanie has joined the Riverside Pottery Club.", ("Melanie", "member_of", "Riverside Pottery Club")),
    ],
)
def test_a_stated_relation_is_extracted(sentence: str, expected: tuple[str, str, str]) -> None:
    assert rel(sentence) == [expected]


@pytest.mark.parametrize(
    "sentence",
    [
        "Sarah met Tom at Acme.",  # meeting someone at a place says nothing about employment
        "Jon, Gina and Maria went to Paris.",
        "Did Sarah work at Acme?",  # a question states nothing
    ],
)
def test_no_relation_without_the_exact_words_between(sentence: str) -> None:
    assert rel(sentence) == []


def test_an_amount_relates_only_to_an_id_and_names_only_to_names_or_ids() -> None:
    assert rel("Sarah paid $40 to Tom.") == []
    assert rel("Sarah approved $400.") == []


def test_several_relations_in_one_sentence_come_in_order() -> None:
    assert rel("Tom reports to Sarah Chen and Priya works at Acme.") == [
        ("Tom", "reports_to", "Sarah Chen"),
        ("Priya", "works_at", "Acme"),
    ]


def test_an_id_of_two_digits_is_one_mention() -> None:
    assert [(m.text, m.type) for m in mentions("Lee rejected INC-42.")] == [("INC-42", "id"), ("Lee", "name")]
