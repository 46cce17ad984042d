"""The gateway counts an assembled context piece by piece (so that counts of what repeats between Fetches are
remembered); the sum must be the exact count of the joined text in both encodings."""

from __future__ import annotations

import itertools
import random

import pytest

from acm.adapters.tokenizer import TiktokenCounter
from acm.domain.compaction.engine import SessionTurn
from acm.domain.models import utcnow
from acm.v1 import common_pb2
from acm_gateway.session_context import SEPARATOR, ShownMemories, joined_count, recent_pieces, recent_text

ENDINGS = [
    "done.",
    "ok!",
    "🎉",
    "是的。",
    "42",
    "a/b",
    "line\n",
    "trailing   ",
    "(24 May 2023)",
    "'quoted'",
    "x\n\n",
    "-",
]
BODIES = ["Caroline: I ran a charity race", 'tool[erp]: {"po_id": "PO-1"}', "  indented", "价格 125,000.00 CNY", ""]
HEADERS = ["Pinned state (current values):\n- po", "Summary of earlier turns:\n- a", "Recent turns:\nuser: hi"]


def _memories(texts: list[str]) -> list[common_pb2.Memory]:
    return [common_pb2.Memory(text=t) for t in texts]


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_piecewise_count_is_exact(encoding: str) -> None:
    counter = TiktokenCounter()
    rng = random.Random(7)
    texts = [b + e for b, e in itertools.product(BODIES, ENDINGS)]
    for _ in range(300):
        # As assembled: pinned, memories (line by line), summary, recent; a separator after all but the last.
        memories = _memories(rng.sample(texts, rng.randint(1, 8)))
        shown = ShownMemories(memories, lambda t: counter.count(t, encoding))
        sections = [[rng.choice(HEADERS) + rng.choice(ENDINGS)], shown.pieces()]
        sections += [[rng.choice(HEADERS) + rng.choice(ENDINGS)] for _ in range(rng.randint(0, 2))]
        pieces: list[str] = []
        for i, section in enumerate(sections):
            pieces.extend(section)
            if i < len(sections) - 1:
                pieces[-1] += SEPARATOR
        assert joined_count(pieces, lambda t: counter.count(t, encoding)) == counter.count("".join(pieces), encoding)


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_shown_memories_count_their_lines_exactly_as_they_drop(encoding: str) -> None:
    counter = TiktokenCounter()
    texts = [b + e for b, e in itertools.product(BODIES, ENDINGS)]
    shown = ShownMemories(_memories(texts[:12]), lambda t: counter.count(t, encoding))
    while shown.memories:
        assert shown.lines_tokens() == counter.count("".join(shown.pieces()[1:]), encoding)
        assert shown.text().startswith("Relevant memories:\n- ") and shown.text().count("\n- ") == len(shown.memories)
        shown.pop()
    assert shown.lines_tokens() == 0 and shown.text() == ""


def test_memories_show_the_utc_day_they_were_said() -> None:
    late = common_pb2.Memory(text="Melanie: I ran a charity race")
    late.created_at.FromSeconds(1684972799)  # 2023-05-24T23:59:59Z
    shown = ShownMemories([late, common_pb2.Memory(text="undated")], len)
    assert shown.lines == ["- [24 May 2023] Melanie: I ran a charity race\n", "- undated\n"]


@pytest.mark.parametrize("budget", [0, 5, 17, 40, 90, 10_000])
def test_fit_drops_exactly_what_a_line_by_line_check_would(budget: int) -> None:
    counter = TiktokenCounter()
    texts = [b + e for b, e in itertools.product(BODIES, ENDINGS)][:20]
    fitted = ShownMemories(_memories(texts), counter.count)
    stepwise = ShownMemories(_memories(texts), counter.count)
    expected = 0
    while stepwise.lines and stepwise.lines_tokens() > budget:
        stepwise.pop()
        expected += 1
    assert fitted.fit(budget) == expected and fitted.lines == stepwise.lines


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_recent_turns_counted_turn_by_turn_sum_to_the_exact_count(encoding: str) -> None:
    counter = TiktokenCounter()
    rng = random.Random(11)
    texts = [b + e for b, e in itertools.product(BODIES, ENDINGS)] + ["\nstarts with a newline", " spaced"]
    for _ in range(300):
        chosen = rng.sample(texts, rng.randint(1, 6))
        turns = [SessionTurn(f"t{i}", "user", text, 0, utcnow()) for i, text in enumerate(chosen)]
        pieces = recent_pieces(turns)
        assert "".join(pieces) == recent_text(turns)
        exact = counter.count(recent_text(turns), encoding)
        assert joined_count(pieces, lambda t: counter.count(t, encoding)) == exact


def test_a_response_holds_copies_of_the_cached_turn_messages() -> None:
    from acm.v1 import gateway_pb2
    from acm_gateway.session_context import _turn_pb

    turn = SessionTurn("t1", "user", "Caroline: hi", 3, utcnow(), speaker="Caroline")
    response = gateway_pb2.FetchResponse(recent_turns=[_turn_pb(turn)])
    response.recent_turns[0].content = "changed"
    assert _turn_pb(turn).content == "hi"
