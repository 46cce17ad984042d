import json
from datetime import UTC, datetime, timedelta

import pytest

from acm.domain.ranking import Candidate, rescore
from acm.domain.retrieval import PRESETS, preset, spread_to_adjacent_turns, weighted_rrf
from acm.domain.schema import SchemaInvalid, default_schema, parse

T0 = datetime(2024, 6, 1, tzinfo=UTC)


def test_weighted_rrf_counts_each_list_by_its_weight() -> None:
    scores = weighted_rrf({"keyword": ["a", "b"], "graph": ["b"]}, {"keyword": 1.0, "graph": 0.5}, k=60)
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["b"] == pytest.approx(1 / 62 + 0.5 / 61)


def test_similarity_dominates_with_the_default_weights() -> None:
    ranked = rescore(
        [Candidate("old-but-relevant", 0.03, T0), Candidate("new-but-weak", 0.01, T0 + timedelta(days=300))],
        preset("balanced"),
    )
    assert ranked[0][0] == "old-but-relevant"


def test_recency_preset_prefers_the_latest_of_two_equal_matches() -> None:
    ranked = rescore(
        [Candidate("older", 0.02, T0), Candidate("newer", 0.02, T0 + timedelta(days=60))], preset("recent")
    )
    assert [mid for mid, _ in ranked] == ["newer", "older"]


def test_recency_is_when_it_was_said_not_when_it_holds() -> None:
    # Said the same day: "I moved to Lisbon in May" is no staler than a new approval for being about May.
    said = T0 + timedelta(days=180)
    ranked = rescore(
        [
            Candidate("moved-in-may", 0.0164, T0, said_at=said),
            Candidate("approval-today", 0.0161, said, said_at=said),
        ],
        preset("balanced"),
    )
    assert ranked[0][0] == "moved-in-may"


def test_frequency_breaks_ties() -> None:
    ranked = rescore([Candidate("once", 0.02, T0), Candidate("often", 0.02, T0, mentions=9)], preset("balanced"))
    assert ranked[0][0] == "often"


def test_time_window_boosts_memories_inside_it() -> None:
    window = (datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 6, 1, tzinfo=UTC))
    ranked = rescore(
        [Candidate("may", 0.015, datetime(2023, 5, 20, tzinfo=UTC)), Candidate("june", 0.02, T0)],
        preset("balanced"),
        window,
    )
    assert ranked[0][0] == "may"


def test_presets_are_data_and_overrides_apply() -> None:
    assert set(PRESETS) >= {"balanced", "recall", "recent", "precise"}
    tuned = preset("recall", alpha=0.5, beta=0.4, gamma=0.1)
    assert (tuned.alpha_similarity, tuned.beta_recency, tuned.graph_depth) == (0.5, 0.4, 2)
    with pytest.raises(ValueError, match="unknown retrieval preset"):
        preset("fastest")


def test_schema_rejects_an_unknown_preset_naming_the_field() -> None:
    raw = json.loads(default_schema("a").to_json())
    raw["retrieval"]["preset"] = "fastest"
    with pytest.raises(SchemaInvalid, match=r"retrieval\.preset"):
        parse(raw)
    raw["retrieval"]["preset"] = 3
    with pytest.raises(SchemaInvalid, match=r"retrieval\.preset must be a string"):
        parse(raw)


def test_the_vector_search_query_leaves_out_names() -> None:
    from acm.domain.retrieval import semantic_query

    assert semantic_query("Where did Caroline move from 4 years ago?") == "Where did move from 4 years ago?"
    assert semantic_query("What is Caroline's identity?") == "What is identity?"
    assert semantic_query("Caroline?") == "Caroline?"  # nothing but a name: kept
    assert semantic_query("status of PO-20261028-0098?") == "status of PO-20261028-0098?"  # ids stay


@pytest.mark.parametrize(
    ("query", "searched"),
    [
        # A place after a preposition of place, or after "to"/"from" with a word of going, stays.
        ("Has Priya ever been to Lisbon?", "Has ever been to Lisbon?"),
        ("Did Tomas go to Nairobi last spring?", "Did go to Nairobi last spring?"),
        ("What did Lena bring back from Osaka?", "What did bring back from Osaka?"),
        ("Which museum did Omar visit in Vienna?", "Which museum did visit in Vienna?"),
        ("Why did Ines move from Quebec?", "Why did move from Quebec?"),
        # A thing: after an article, in quotes, or an acronym.
        ('What did Kofi think of "Silent Harbor"?', 'What did think of "Silent Harbor"?'),
        ("When did Mia hike the Blue Ridge?", "When did hike the Blue Ridge?"),
        ("How long did Ravi work at NASA?", "How long did work at NASA?"),
        # People: the subject, a possessive (whatever precedes it), "to" a person.
        ("What gift did Noor give to Sam?", "What gift did give to ?"),
        ("Where is Anya's studio?", "Where is studio?"),
        ("What did Ben say about the trip to Jun's place?", "What did say about the trip to place?"),
    ],
)
def test_only_people_leave_the_vector_query(query: str, searched: str) -> None:
    from acm.domain.retrieval import semantic_query

    assert semantic_query(query) == searched


def test_person_names_are_told_by_grammar() -> None:
    from acm.domain.retrieval import person_names

    assert person_names("Has Priya ever been to Lisbon?") == ["Priya"]  # "Has" is no part of the name
    assert person_names("According to Noor, is the Grand Canyon worth it?") == ["Noor"]
    assert person_names("Was it in Lisbon or in Porto?") == []


def _turns(*spec: tuple[str, str, int]) -> dict[str, tuple[str, datetime]]:
    return {mid: (session, T0 + timedelta(seconds=second)) for mid, session, second in spec}


def test_a_reply_between_two_ranked_turns_rises_above_weak_matches() -> None:
    # "How do you find time?" (t1) and "Great that you do!" (t3) rank; the reply between them (t2,
    # "I run every morning") shares no word with the question and was not ranked at all.
    turn_of = _turns(("t1", "s", 1), ("t2", "s", 2), ("t3", "s", 3), ("weak", "s", 50), ("t4", "s", 4))
    ranked = [("t1", 1.0), ("t3", 0.8), ("weak", 0.2)]
    out = dict(spread_to_adjacent_turns(ranked, turn_of, ["t2", "t4"], anchors=2, weight=0.15))
    assert out["t2"] == pytest.approx(0.15 * 1.0 + 0.15 * 0.8)  # after t1, before t3
    assert out["t4"] == pytest.approx(0.15 * 0.8)  # after t3 only
    assert out["t1"] == 1.0 and out["weak"] == 0.2  # no ranked turn next to them gives anything
    assert [mid for mid, _ in spread_to_adjacent_turns(ranked, turn_of, ["t2", "t4"], 2, 0.15)] == [
        "t1",
        "t3",
        "t2",
        "weak",
        "t4",
    ]


def test_only_the_nearest_turn_on_each_side_and_only_in_the_same_session() -> None:
    turn_of = _turns(("a", "s1", 10), ("near", "s1", 9), ("far", "s1", 5), ("other", "s2", 11), ("same", "s1", 10))
    out = dict(spread_to_adjacent_turns([("a", 1.0)], turn_of, ["near", "far", "other", "same"], 1, 0.5))
    assert out == {"a": 1.0, "near": 0.5, "far": 0.0, "other": 0.0, "same": 0.0}


def test_only_the_first_anchors_give_and_zero_anchors_changes_nothing() -> None:
    turn_of = _turns(("a", "s", 1), ("b", "s", 10), ("after-a", "s", 2), ("after-b", "s", 11))
    ranked = [("a", 1.0), ("b", 0.9)]
    out = dict(spread_to_adjacent_turns(ranked, turn_of, ["after-a", "after-b"], 1, 0.5))
    assert out["after-a"] == 0.5 and out["after-b"] == 0.0
    assert spread_to_adjacent_turns(ranked, turn_of, [], 0, 0.5) == ranked


def test_an_anchor_gives_in_proportion_to_its_sessions_share_of_the_anchors() -> None:
    # Two of the three best matches are in s1: a question about that exchange; the one in s2 is a stray.
    turn_of = _turns(("a1", "s1", 10), ("a2", "s1", 20), ("b", "s2", 10), ("r1", "s1", 11), ("rb", "s2", 11))
    ranked = [("a1", 1.0), ("b", 1.0), ("a2", 0.5)]
    out = dict(spread_to_adjacent_turns(ranked, turn_of, ["r1", "rb"], anchors=3, weight=0.3))
    assert out["r1"] == pytest.approx(0.3 * (1.0 + 0.5) * 2 / 3)  # the turn after a1 and the one before a2
    assert out["rb"] == pytest.approx(0.3 * 1.0 * 1 / 3)


def test_anchors_give_but_keep_their_own_score() -> None:
    # Three matching turns in a row lift only what is around them, not each other above a lone better match.
    turn_of = _turns(("a", "s1", 1), ("b", "s1", 2), ("c", "s1", 3), ("best", "s2", 1), ("after-c", "s1", 4))
    ranked = [("best", 1.0), ("a", 0.8), ("b", 0.8), ("c", 0.8)]
    out = spread_to_adjacent_turns(ranked, turn_of, ["a", "b", "c", "after-c"], anchors=4, weight=0.3)
    assert out[:4] == ranked
    assert dict(out)["after-c"] == pytest.approx(0.3 * 0.8 * 3 / 4)


def test_an_answered_question_ranks_through_its_answer() -> None:
    from acm.domain.retrieval import asks

    # q ("What got you into climbing?") ranks first; the reply after it ("My cousin took me once") did not rank.
    turn_of = _turns(("q", "s", 1), ("reply", "s", 2), ("fact", "s2", 9), ("open", "s3", 5))
    ranked = [("q", 1.0), ("fact", 0.9), ("open", 0.8)]
    out = dict(spread_to_adjacent_turns(ranked, turn_of, ["reply"], 3, 0.3, {"q", "open"}, 0.5))
    assert out["reply"] == pytest.approx(1.0)  # the answer takes the question's place
    assert out["q"] == pytest.approx(0.5)  # the question stays, below it
    assert out["open"] == pytest.approx(0.8)  # a question with no turn after it keeps its score
    assert out["fact"] == pytest.approx(0.9)
    assert asks("Lu: What got you into climbing?") and asks("Lu: Are you free then? (7 May 2023)")
    assert not asks("Lu: I asked why.")
