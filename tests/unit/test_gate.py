"""Quality gate: table-driven over tests/data/gate_corpus.jsonl, fingerprints, rules, a session."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from acm.domain.gate import REASONS, GateRules, decide, fingerprint

CORPUS_PATH = Path(__file__).resolve().parents[1] / "data" / "gate_corpus.jsonl"
CORPUS: list[dict[str, Any]] = [json.loads(line) for line in CORPUS_PATH.read_text("utf-8").splitlines() if line]
RULES = GateRules()


def _id(entry: dict[str, Any]) -> str:
    return f"{entry['reason']}:{entry['text'][:30]}"


def _seen(texts: list[str]) -> set[str]:
    return {fp for text in texts if (fp := fingerprint(text)) is not None}


def test_corpus_covers_every_reason() -> None:
    assert len(CORPUS) >= 40
    assert {e["reason"] for e in CORPUS} == set(REASONS)
    for entry in CORPUS:
        assert {"text", "role", "keep", "reason"} <= set(entry) <= {"text", "role", "keep", "reason", "seen_before"}
        assert entry["keep"] is (entry["reason"] == "kept")


@pytest.mark.parametrize("entry", CORPUS, ids=_id)
def test_corpus_entry(entry: dict[str, Any]) -> None:
    decision = decide(entry["text"], entry["role"], RULES, _seen(entry.get("seen_before", [])))
    assert (decision.keep, decision.reason) == (entry["keep"], entry["reason"])


# --- fingerprints -------------------------------------------------------------------------------

PY_TRACE = """Traceback (most recent call last):
  File "/home/alice/proj/app/handlers.py", line 42, in handle
    result = compute(payload)
  File "/home/alice/proj/app/logic.py", line 17, in compute
    return totals[key]
           ~~~~~~^^^^^
KeyError: 'user_42'"""


def test_the_same_exception_thrown_twice_has_one_fingerprint() -> None:
    again = (
        PY_TRACE.replace("/home/alice/proj", "/srv/ci/build-8812")
        .replace("line 42", "line 47")
        .replace("line 17", "line 19")
        .replace("user_42", "user_1007")
    )
    assert fingerprint(PY_TRACE) == fingerprint(again)
    fp = fingerprint(PY_TRACE)
    assert fp is not None and fp.startswith("trace:")


def test_a_different_exception_or_key_has_another_fingerprint() -> None:
    assert fingerprint(PY_TRACE) != fingerprint(PY_TRACE.replace("KeyError", "IndexError"))
    assert fingerprint(PY_TRACE) != fingerprint(PY_TRACE.replace("'user_42'", "'order_7'"))
    assert fingerprint(PY_TRACE) != fingerprint(PY_TRACE.replace("in compute", "in total"))


def test_error_lines_ignore_timestamps_addresses_and_ids() -> None:
    first = "2026-10-28T10:00:01.123Z ERROR [worker-3] pool 0x7f3a2b10 gone, req 3f1c9a7e-2b4d-4c8e-9f00-1a2b3c4d5e6f"
    again = "2026-10-29T23:59:59.999Z ERROR [worker-11] pool 0x7f99aa00 gone, req 9b2f0c1d-7e6a-4b3c-8d2e-0f1e2d3c4b5a"
    assert fingerprint(first) == fingerprint(again)
    fp = fingerprint(first)
    assert fp is not None and fp.startswith("error:")


@pytest.mark.parametrize(
    "text",
    [
        "Can you check why the report shows an error in the totals?",
        "The failure rate dropped to 2% after the fix.",
        "We had a critical meeting about exceptions to the refund policy.",
        "ok",
        "",
    ],
)
def test_prose_about_errors_is_not_an_error(text: str) -> None:
    assert fingerprint(text) is None


def test_debug_chatter_around_an_error_does_not_change_its_fingerprint() -> None:
    error = "ERROR payments: card declined by issuer (code 05)"
    assert fingerprint(error) == fingerprint(f"DEBUG retry 1 of 3\nDEBUG backoff 200ms\n{error}")


# --- decisions ----------------------------------------------------------------------------------


def test_a_session_keeps_the_first_error_and_drops_repeats() -> None:
    seen: set[str] = set()
    outcomes = []
    for turn in [PY_TRACE, PY_TRACE.replace("line 42", "line 43"), "fixed it, thanks. Deploying now.", PY_TRACE]:
        decision = decide(turn, "tool", RULES, seen)
        outcomes.append(decision.reason)
        if decision.keep and decision.fingerprint:
            seen.add(decision.fingerprint)  # the caller owns `seen`
    assert outcomes == ["kept", "seen_stack_trace", "kept", "seen_stack_trace"]


def test_rules_switch_each_drop_off() -> None:
    error = "ERROR db: connection refused"
    seen = _seen([error, PY_TRACE])
    keep_all = GateRules(chit_chat=False, log_noise=False, repeated_errors=False, seen_stack_traces=False)
    assert decide("thanks!", "user", keep_all, set()).reason == "kept"
    assert decide("DEBUG cache miss key=42", "tool", keep_all, set()).reason == "kept"
    assert decide(error, "tool", keep_all, seen).reason == "kept"
    assert decide(PY_TRACE, "tool", keep_all, seen).reason == "kept"
    assert decide(error, "tool", RULES, seen).reason == "repeated_error"
    assert decide(PY_TRACE, "tool", RULES, seen).reason == "seen_stack_trace"


def test_min_chars() -> None:
    assert decide("No", "user", RULES, set()).reason == "kept"
    assert decide("N", "user", RULES, set()).reason == "empty"
    assert decide("No", "user", GateRules(min_chars=3), set()).reason == "empty"
    assert decide("是", "user", RULES, set()).reason == "kept"  # one CJK character counts two


@pytest.mark.parametrize(
    "text",
    ["hi", "thanks!", "ok 👍", "lol", "sounds good", "好的", "谢谢", "Thank you so much!! :)", "🙏🙏", "ok cool"],
)
def test_pure_chit_chat_is_dropped(text: str) -> None:
    assert decide(text, "user", RULES, set()).reason == "chit_chat"


@pytest.mark.parametrize(
    "text", ["ok, book it for Friday", "yes, the 14th works", "No", "Yes", "nope", "thanks, the invoice is INV-2231"]
)
def test_short_turns_with_content_are_kept(text: str) -> None:
    assert decide(text, "user", RULES, set()).keep


def test_machine_roles_are_never_chit_chat() -> None:
    assert decide("OK", "tool", RULES, set()).keep
    assert not decide("OK", "assistant", RULES, set()).keep


def test_decide_is_quick_on_2kb_turns() -> None:
    texts = [(e["text"] + "\n") * (2048 // (len(e["text"]) + 1) + 1) for e in CORPUS if e["text"]]
    texts = [t[:2048] for t in texts]
    start = time.process_time()
    for text in texts:
        decide(text, "tool", RULES, {"trace:0000000000000000"})
    per_turn = (time.process_time() - start) / len(texts)
    assert per_turn < 0.003  # typically well under 1 ms; generous for loaded CI machines


@pytest.mark.parametrize(
    "text",
    ["Thanks, Melanie!", "Hey Mel", "Caroline, congrats!", "Woohoo Melanie!", "Bye Ms. Chen", "Thanks, Sarah Chen!"],
)
def test_pleasantries_addressed_by_name_are_chit_chat(text: str) -> None:
    assert decide(text, "user", RULES, set()).reason == "chit_chat"


@pytest.mark.parametrize(
    "text",
    [
        "Paris",
        "Dr. Smith",
        "Great, Friday!",
        "Thanks, I will",
        "Wow Mel, that painting's amazing!",
        "Hi Bob, the server is down",
    ],
)
def test_a_name_alone_or_with_content_is_kept(text: str) -> None:
    assert decide(text, "user", RULES, set()).keep


@pytest.mark.parametrize(
    "text", ["No worries, Mel!", "Way to go, Jon!", "Glad I could help, Maria.", "Ahhahha, really!?"]
)
def test_a_pleasantry_starting_with_a_capital_is_not_taken_for_a_name(text: str) -> None:
    assert decide(text, "user", RULES, set()).reason == "chit_chat"
