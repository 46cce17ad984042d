"""The gateway counts an assembled context piece by piece (so that counts of what repeats between Fetches are
remembered); the sum must be the exact count of the joined text in both encodings."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime

import pytest

from acm.adapters.tokenizer import TiktokenCounter
from acm.domain.compaction.engine import SessionTurn
from acm.domain.models import Layer, utcnow
from acm.domain.retrieved import Ranked, RetrievedMemory
from acm.domain.scope import Tier
from acm.read.session_context import SEPARATOR, ShownMemories, joined_count, recent_pieces, recent_text

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


DAY = 86400
MAY_24_2023 = 1684972799 // DAY  # days since the epoch


def _memory(text: str, said: int | None = None) -> Ranked:
    """A retrieved memory said at ``said`` (seconds since the epoch; None: undated)."""
    at = None if said is None else datetime.fromtimestamp(said, UTC)
    return Ranked(RetrievedMemory("", Tier.USER, Layer.MID, "fact", text, (), 0, at), 0.0)


def _memories(texts: list[str], days: list[int | None] | None = None) -> list[Ranked]:
    """Memories in rank order; with ``days``, each said at noon of that day (None: undated)."""
    out = []
    for i, t in enumerate(texts):
        day = days[i % len(days)] if days else None
        out.append(_memory(t, None if day is None else day * DAY + DAY // 2 + i))
    return out


DATED: list[list[int | None] | None] = [None, [MAY_24_2023, MAY_24_2023 - 3, None, MAY_24_2023 + 40]]


@pytest.mark.parametrize("days", DATED)
@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_piecewise_count_is_exact(encoding: str, days: list[int | None] | None) -> None:
    counter = TiktokenCounter()
    rng = random.Random(7)
    texts = [b + e for b, e in itertools.product(BODIES, ENDINGS)]
    for _ in range(300):
        # As assembled: pinned, memories (line by line), summary, recent; a separator after all but the last.
        memories = _memories(rng.sample(texts, rng.randint(1, 8)), rng.sample(days, len(days)) if days else None)
        shown = ShownMemories(memories, lambda t: counter.count(t, encoding))
        sections = [[rng.choice(HEADERS) + rng.choice(ENDINGS)], shown.pieces()]
        sections += [[rng.choice(HEADERS) + rng.choice(ENDINGS)] for _ in range(rng.randint(0, 2))]
        pieces: list[str] = []
        for i, section in enumerate(sections):
            pieces.extend(section)
            if i < len(sections) - 1:
                pieces[-1] += SEPARATOR
        assert joined_count(pieces, lambda t: counter.count(t, encoding)) == counter.count("".join(pieces), encoding)


@pytest.mark.parametrize("days", DATED)
@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_shown_memories_count_their_lines_exactly_as_they_drop(encoding: str, days: list[int | None] | None) -> None:
    counter = TiktokenCounter()
    texts = [b + e for b, e in itertools.product(BODIES, ENDINGS)]
    memories = _memories(texts[:12], days)
    shown = ShownMemories(list(memories), lambda t: counter.count(t, encoding))
    while shown.memories:
        assert shown.memories == memories[: len(shown.memories)]  # the lowest-ranked went first
        assert shown.lines_tokens() == counter.count("".join(shown.pieces()[1:]), encoding)
        assert shown.text().startswith("Relevant memories:\n") and shown.text().count("\n- ") == len(shown.memories)
        shown.pop()
    assert shown.lines_tokens() == 0 and shown.text() == ""


def test_memories_are_shown_by_the_utc_day_they_were_said_oldest_first_one_date_line_per_day() -> None:
    race = _memory("Melanie: I ran a charity race", 1684972799)  # 2023-05-24T23:59:59Z
    pottery = _memory("Melanie: I signed up for a pottery class", 1684972799 - 3600)  # earlier that day
    move = _memory("Caroline: I moved from Sweden", 1684972800)  # 2023-05-25T00:00:00Z
    # Rank order: the race first; shown by day, then when said; the undated first, under no date.
    shown = ShownMemories([race, move, _memory("undated"), pottery], len)
    assert shown.text() == (
        "Relevant memories:\n"
        "- undated\n"
        "[24 May 2023]\n"
        "- Melanie: I signed up for a pottery class\n"
        "- Melanie: I ran a charity race\n"
        "[25 May 2023]\n"
        "- Caroline: I moved from Sweden"
    )
    shown.pop()  # the pottery class: its day stays, the race still said on it
    shown.pop()  # the undated one
    shown.pop()  # the move, and its day's line with it
    assert shown.text() == "Relevant memories:\n[24 May 2023]\n- Melanie: I ran a charity race"
    assert shown.lines_tokens() == len("[24 May 2023]\n- Melanie: I ran a charity race")


@pytest.mark.parametrize("days", DATED)
@pytest.mark.parametrize("budget", [0, 5, 17, 40, 90, 10_000])
def test_fit_drops_exactly_what_a_line_by_line_check_would(budget: int, days: list[int | None] | None) -> None:
    counter = TiktokenCounter()
    texts = [b + e for b, e in itertools.product(BODIES, ENDINGS)][:20]
    fitted = ShownMemories(_memories(texts, days), counter.count)
    stepwise = ShownMemories(_memories(texts, days), counter.count)
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
    from acm_gateway.convert import _turn_pb

    turn = SessionTurn("t1", "user", "Caroline: hi", 3, utcnow(), speaker="Caroline")
    response = gateway_pb2.FetchResponse(recent_turns=[_turn_pb(turn)])
    response.recent_turns[0].content = "changed"
    assert _turn_pb(turn).content == "hi"
