"""Where `acm bench prefetch` asks its questions: the drawn placements (end of a session, after a turn) read
no gold field, are reproducible from the seed, and land where they say; the pure summaries score only the
evidence said so far and pair the two systems' answers."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from acm_benchmarks.locomo import Conversation, Question, parse_conversation
from acm_benchmarks.prefetch import (
    DEFAULT_SEED,
    Asked,
    Tally,
    ask_points,
    compare,
    drawn_points,
    placement_points,
    said_evidence,
    summarise,
)


def _conversation() -> Conversation:
    sessions: dict[str, Any] = {}
    for n in range(1, 6):
        sessions[f"session_{n}_date_time"] = f"1:56 pm on {n} May, 2023"
        sessions[f"session_{n}"] = [
            {"speaker": "Ana" if i % 2 else "Ben", "dia_id": f"D{n}:{i}", "text": f"Session {n}, line {i}."}
            for i in range(1, 5)
        ]
    qa = [
        {"question": f"Question {j}?", "evidence": [f"D{1 + j % 5}:{1 + j % 4}"], "category": 1 + j % 5}
        for j in range(40)
    ]
    return parse_conversation({"sample_id": "syn-p", "conversation": sessions, "qa": qa})


def _by_text(points: dict[int, list[Question]]) -> dict[str, int]:
    return {q.text: i for i, qs in points.items() for q in qs}


def _without_gold(conv: Conversation, rng: random.Random) -> Conversation:
    """The same questions, shuffled, with other evidence (another turn's, or none) and other categories."""
    turn_ids = [t.turn_id for t in conv.turns]
    questions = [
        dataclasses.replace(q, evidence=tuple(rng.sample(turn_ids, rng.randint(0, 3))), category=rng.randint(1, 5))
        for q in conv.questions
    ]
    rng.shuffle(questions)
    return dataclasses.replace(conv, questions=tuple(questions))


@pytest.mark.parametrize("placement", ["session-end", "random"])
def test_drawn_ask_points_read_no_gold_field(placement: str) -> None:
    conv = _conversation()
    points = _by_text(drawn_points(conv, placement, DEFAULT_SEED))
    assert len(points) == 40
    for trial in range(3):
        assert _by_text(drawn_points(_without_gold(conv, random.Random(trial)), placement, DEFAULT_SEED)) == points


def test_the_evidence_placement_does_read_the_gold_evidence() -> None:
    """The contrast that makes the test above mean something: the same change moves the old ask points."""
    conv = _conversation()
    assert _by_text(ask_points(_without_gold(conv, random.Random(0)))) != _by_text(ask_points(conv))


def test_session_end_asks_after_the_last_turn_of_a_session_and_spreads_over_sessions() -> None:
    conv = _conversation()
    ends = {i for i, t in enumerate(conv.turns) if i == len(conv.turns) - 1 or conv.turns[i + 1].session != t.session}
    points = drawn_points(conv, "session-end", DEFAULT_SEED)
    assert set(points) <= ends and len(set(points)) >= 3
    assert sum(len(qs) for qs in points.values()) == 40
    assert list(points) == sorted(points)  # the replay walks the turns in order


def test_random_asks_after_turns_drawn_by_the_seed() -> None:
    conv = _conversation()
    points = drawn_points(conv, "random", DEFAULT_SEED)
    assert all(0 <= i < len(conv.turns) for i in points) and len(points) >= 10
    assert drawn_points(conv, "random", DEFAULT_SEED) == points  # reproducible
    assert _by_text(drawn_points(conv, "random", DEFAULT_SEED + 1)) != _by_text(points)
    assert placement_points(conv, "random", DEFAULT_SEED) == points
    assert placement_points(conv, "evidence", DEFAULT_SEED) == ask_points(conv)
    with pytest.raises(ValueError, match="not a drawn placement"):
        drawn_points(conv, "evidence", DEFAULT_SEED)


def test_only_the_evidence_said_by_the_ask_point_is_scored() -> None:
    conv = _conversation()
    q = dataclasses.replace(conv.questions[0], evidence=("syn-p:D1:2", "syn-p:D3:1", "syn-p:D9:9"))
    assert said_evidence(conv, q, 0) == ()
    assert said_evidence(conv, q, 1) == ("syn-p:D1:2",)
    assert said_evidence(conv, q, len(conv.turns) - 1) == ("syn-p:D1:2", "syn-p:D3:1")  # D9:9 is no turn


def _asked(recall: float | None, served: bool, warm: bool | None = None) -> Asked:
    return Asked(recall, 1.0, served, warm)


def test_summaries_leave_unscored_questions_out_of_recall_and_hit_rate_and_pair_the_systems() -> None:
    tally = Tally()
    tally.asked["prefetch"] = [
        _asked(1.0, True, True),
        _asked(0.0, True, False),
        _asked(None, True),
        _asked(1.0, False, False),
    ]
    tally.asked["no_prefetch"] = [_asked(1.0, False), _asked(1.0, False), _asked(None, False), _asked(0.5, False)]
    s = summarise(tally, 100)
    assert s["prefetch"]["n"] == 4 and s["prefetch"]["n_scored"] == 3
    assert s["prefetch"]["served_from_prefetch_pct"] == 75.0  # of every Fetch, scored or not
    assert s["prefetch"]["hit_rate_pct"] == 33.3  # of the scored ones
    assert s["prefetch"]["recall_pct"] == 66.7 and s["no_prefetch"]["recall_pct"] == 83.3
    assert s["prefetch"]["recall_pct_served_from_prefetch"] == 50.0
    c = compare(tally)
    assert c["recall_difference_pts"] == -16.6
    assert c["served_from_prefetch"] == {
        "n": 3,
        "n_scored": 2,
        "recall_pct_prefetch": 50.0,
        "recall_pct_no_prefetch": 100.0,
        "recall_difference_pts": -50.0,
        "lowered": 1,
        "raised": 0,
    }
