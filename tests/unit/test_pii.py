"""PII redaction: table-driven over tests/data/pii_corpus.jsonl, plus checksums, overlaps and idempotence."""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest

from acm.domain.pii import KINDS, PiiRules, cn_id_ok, iban_ok, luhn_ok, redact

CORPUS_PATH = Path(__file__).resolve().parents[1] / "data" / "pii_corpus.jsonl"
CORPUS: list[dict[str, Any]] = [json.loads(line) for line in CORPUS_PATH.read_text("utf-8").splitlines() if line]
PLACEHOLDER = re.compile(r"\[REDACTED:([a-z_]+)\]")


def _id(entry: dict[str, Any]) -> str:
    return entry["text"][:40]


def test_corpus_is_big_and_varied_enough() -> None:
    assert len(CORPUS) >= 60
    negatives = [e for e in CORPUS if not e["kinds"]]
    assert len(negatives) >= 20  # near-misses matter as much as hits
    assert {k for e in CORPUS for k in e["kinds"]} == set(KINDS)
    for entry in CORPUS:
        assert set(entry) == {"text", "kinds", "must_not_contain"}
        assert set(entry["kinds"]) <= set(KINDS)


@pytest.mark.parametrize("entry", CORPUS, ids=_id)
def test_corpus_entry(entry: dict[str, Any]) -> None:
    result = redact(entry["text"])
    assert sorted(result.counts) == sorted(entry["kinds"]), result.text
    for secret in entry["must_not_contain"]:
        assert secret not in result.text
    if not entry["kinds"]:
        assert result.text == entry["text"]  # a near-miss comes back untouched
    assert {m.group(1) for m in PLACEHOLDER.finditer(result.text)} == set(result.counts)
    assert result.total == len(PLACEHOLDER.findall(result.text))


@pytest.mark.parametrize("entry", CORPUS, ids=_id)
def test_redact_is_idempotent(entry: dict[str, Any]) -> None:
    once = redact(entry["text"])
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.counts == {}  # placeholders never match again


def test_no_secret_survives_when_turns_are_combined() -> None:
    # Property check: whatever surrounds a value, it is still redacted and no placeholder is re-matched.
    rng = random.Random(20261028)
    positives = [e for e in CORPUS if e["must_not_contain"]]
    for _ in range(300):
        parts = rng.sample(CORPUS, 3)
        glue = rng.choice(["\n", " ", ". ", " and ", "; "])
        text = glue.join(p["text"] for p in parts)
        result = redact(text)
        for part in parts:
            for secret in part["must_not_contain"]:
                if any(secret in other["text"] for other in parts if secret not in other["must_not_contain"]):
                    continue  # the same characters are legitimately in another part (e.g. "1234 ms")
                assert secret not in result.text, (secret, text)
        assert redact(result.text).text == result.text
    assert positives


# --- checksums ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("digits", "valid"),
    [
        ("4111111111111111", True),
        ("5555555555554444", True),
        ("378282246310005", True),
        ("4111111111111112", False),
        ("1234567812345678", False),
    ],
)
def test_luhn(digits: str, valid: bool) -> None:
    assert luhn_ok(digits) is valid


def test_card_number_must_pass_luhn() -> None:
    assert redact("card 4111 1111 1111 1111").text == "card [REDACTED:card]"
    assert redact("order 4111 1111 1111 1112 shipped").counts == {}
    assert redact("order number 1234567812345678").counts == {}


def test_card_keeps_the_cvv_and_dates_outside_the_placeholder() -> None:
    result = redact("4111 1111 1111 1111 123, expires 08/27")
    assert result.text == "[REDACTED:card] 123, expires 08/27"


@pytest.mark.parametrize(
    ("iban", "valid"),
    [
        ("DE89370400440532013000", True),
        ("GB82WEST12345698765432", True),
        ("NL91ABNA0417164300", True),
        ("DE89370400440532013001", False),  # checksum
        ("GB82WEST1234569876543", False),  # length for GB
        ("XX89370400440532013000", False),  # unknown country
    ],
)
def test_iban_checksum(iban: str, valid: bool) -> None:
    assert iban_ok(iban) is valid


def test_iban_with_and_without_spaces_and_trailing_words() -> None:
    assert redact("GB82WEST12345698765432").text == "[REDACTED:iban]"
    assert redact("to DE89 3704 0044 0532 0130 00 BIC COBADEFFXXX").text == "to [REDACTED:iban] BIC COBADEFFXXX"
    assert redact("to DE89 3704 0044 0532 0130 01 please").counts == {}


def test_two_ibans_close_together_are_both_redacted() -> None:
    # The first match may run on into the second; the scan resumes where the IBAN ends, not after the match.
    both = redact("Pay to DE89370400440532013000 and refund to GB29NWBK60161331926819.")
    assert both.text == "Pay to [REDACTED:iban] and refund to [REDACTED:iban]."
    spaced = redact("DE89 3704 0044 0532 0130 00 or GB29 NWBK 6016 1331 9268 19")
    assert spaced.counts == {"iban": 2}, spaced.text


def test_chinese_resident_id_checksum() -> None:
    assert cn_id_ok("11010519491231002X")
    assert not cn_id_ok("110105194912310021")  # wrong check character
    assert not cn_id_ok("110105194913310020")  # month 13
    assert redact("resident 11010519491231002X").counts == {"national_id": 1}  # no keyword needed
    assert redact("reference 110105194912310021").counts == {}
    # Introduced by its name, an id is redacted even with a typo in it.
    assert redact("身份证号码110105194912310021").counts == {"national_id": 1}


def test_ssn_invalid_areas_are_not_ids() -> None:
    assert redact("SSN 123-45-6789").counts == {"national_id": 1}
    for invalid in ("000-12-3456", "666-12-3456", "912-12-3456", "123-00-4567", "123-45-0000"):
        assert redact(f"number {invalid} on file").counts == {}, invalid


# --- overlaps, rules, placeholders ---------------------------------------------------------------


def test_overlapping_matches_are_redacted_once_as_the_most_sensitive_kind() -> None:
    # The card detector and the password detector both match the digits: one placeholder, one count.
    result = redact("password: 4111111111111111")
    assert result.text == "password: [REDACTED:secret]"
    assert result.counts == {"secret": 1}
    # The phone keyword rule and the E.164 rule overlap on the same number.
    result = redact("call me at +44 20 7946 0958")
    assert result.text == "call me at [REDACTED:phone]"
    assert result.counts == {"phone": 1}


def test_rules_can_keep_emails_and_phones_but_never_the_rest() -> None:
    text = "Mail jane@corp.com, call +1 415 555 2671, card 4242 4242 4242 4242, my password is hunter2"
    keep_contacts = PiiRules(emails=False, phones=False)
    result = redact(text, keep_contacts)
    assert "jane@corp.com" in result.text
    assert "+1 415 555 2671" in result.text
    assert "4242 4242 4242 4242" not in result.text
    assert "hunter2" not in result.text
    assert result.counts == {"card": 1, "secret": 1}
    assert redact(text).counts == {"email": 1, "phone": 1, "card": 1, "secret": 1}


def test_existing_placeholders_are_left_alone() -> None:
    text = "password is [REDACTED:secret] and card [REDACTED:card]; national id: [REDACTED:national_id]"
    result = redact(text)
    assert result.text == text
    assert result.counts == {}


def test_not_pii_lookalikes_survive() -> None:
    text = (
        "PO-20261028-0098 approved on 2026-10-28 at 10:30 for $1,234,567.89; deployed v3.11.4 "
        "to 192.168.100.254 in 2025, ticket INC-4111111111111111, ISBN 978-3-16-148410-0"
    )
    assert redact(text).text == text


def test_redaction_is_deterministic() -> None:
    text = " ".join(e["text"] for e in CORPUS[:20])
    assert redact(text) == redact(text)


def test_no_rule_backtracks_catastrophically() -> None:
    # Not a speed target (that is `acm bench safety`'s job): a guard against a regex whose cost explodes on
    # long runs of digits, separators and cue words. Such a rule takes seconds per turn; a sound one ~1-3 ms.
    rng = random.Random(7)
    turns = [" ".join(rng.sample([e["text"] for e in CORPUS], 25))[:2048] for _ in range(20)]
    turns += ["card " + "4 " * 1000, "password is " + "a-" * 1000, "IBAN " + "DE89 " * 400, "0" * 4000]
    start = time.process_time()
    for turn in turns:
        redact(turn)
    per_turn = (time.process_time() - start) / len(turns)
    assert per_turn < 0.25, f"{per_turn * 1000:.0f} ms a turn: a rule backtracks"
