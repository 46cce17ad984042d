"""The pure parts of `acm bench locomo`: LoCoMo loading (dates, sessions, evidence quirks), recall, BM25,
budget filling and summaries — on a tiny synthetic LoCoMo-format file, never the real data."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from acm_benchmarks.locomo import (
    BM25,
    GROUPS,
    SYSTEMS,
    Outcome,
    SentenceHybrid,
    _ask_baseline,
    _baselines,
    evidence_recall,
    fill_budget,
    lead_line,
    lead_over_best_baseline,
    load_conversations,
    normalise_evidence,
    parse_conversation,
    parse_session_datetime,
    percentile,
    rrf,
    split_turns,
    stemmed_tokens,
    summarise,
    tokenize,
)


def _synthetic() -> list[dict[str, Any]]:
    return [
        {
            "sample_id": "syn-1",
            "conversation": {
                "speaker_a": "Ana",
                "speaker_b": "Ben",
                "session_2_date_time": "9:05 am on 2 June, 2023",
                "session_2": [
                    {"speaker": "Ben", "dia_id": "D2:1", "text": "Look at my garden!", "blip_caption": "a rose bed"},
                    {"speaker": "Ana", "dia_id": "D2:2", "text": "Lovely roses."},
                ],
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Ana", "dia_id": "D1:1", "text": "I started pottery classes."},
                    {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice, where?"},
                    {"speaker": "Ana", "dia_id": "D1:3", "text": "At the studio near the harbour."},
                ],
                # A date with no session list: the data has these; there is nothing to ingest.
                "session_3_date_time": "10:00 am on 1 July, 2023",
            },
            "qa": [
                {"question": "Where are the pottery classes?", "answer": "port", "evidence": ["D1:3"], "category": 4},
                {"question": "What did Ana start and where?", "answer": 7, "evidence": ["D1:1; D1:3"], "category": 1},
                {"question": "What grows in Ben's garden?", "answer": "roses", "evidence": ["D:2:1"], "category": 2},
                {"question": "Padded?", "answer": "x", "evidence": ["D2:02", "D2:2"], "category": 3},
                {"question": "No evidence here", "answer": "x", "evidence": [], "category": 3},
                {"question": "Unanswerable?", "adversarial_answer": "no", "evidence": ["D1:2"], "category": 5},
            ],
            "observation": {"ignored": True},
            "session_summary": {},
            "event_summary": {},
        }
    ]


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "syn.json"
    path.write_text(json.dumps(_synthetic()))
    return path


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),
        ("12:28 pm on 8 November, 2023", datetime(2023, 11, 8, 12, 28, tzinfo=UTC)),
        ("10:37 AM on 27 June 2023", datetime(2023, 6, 27, 10, 37, tzinfo=UTC)),
    ],
)
def test_session_dates_parse_as_written(raw: str, expected: datetime) -> None:
    assert parse_session_datetime(raw) == expected


@pytest.mark.parametrize("raw", ["8 May 2023", "1:56 pm on 8 Smarch, 2023", ""])
def test_unparseable_session_dates_fail_loudly(raw: str) -> None:
    with pytest.raises(ValueError):
        parse_session_datetime(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["D1:3"], ("D1:3",)),
        (["D8:6; D9:17"], ("D8:6", "D9:17")),  # two ids in one string
        (["D:11:26"], ("D11:26",)),  # stray colon
        (["D30:05"], ("D30:5",)),  # zero padding
        (["D2:2", "D2:02"], ("D2:2",)),  # duplicates once normalised
        ([], ()),
        (["", "n/a"], ()),
    ],
)
def test_evidence_is_normalised(raw: list[str], expected: tuple[str, ...]) -> None:
    assert normalise_evidence(raw) == expected


def test_loading_keeps_order_times_captions_and_skips_what_cannot_be_scored(data_file: Path) -> None:
    [conv] = load_conversations(data_file)
    assert conv.sample_id == "syn-1"
    # Sessions in number order; session_3 has a date but no turns.
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    start = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert [t.occurred_at for t in conv.turns[:3]] == [start + timedelta(seconds=i) for i in range(3)]
    assert conv.turns[3].occurred_at == datetime(2023, 6, 2, 9, 5, tzinfo=UTC)
    garden = conv.turns[3]
    assert garden.turn_id == "syn-1:D2:1"
    assert garden.content == "Look at my garden! [shares a rose bed]"
    assert garden.item_text == "Ben: Look at my garden! [shares a rose bed]"
    assert conv.turns[4].content == "Lovely roses."

    assert conv.skipped_no_evidence == 1
    assert [q.category for q in conv.questions] == [4, 1, 2, 3, 5]
    assert conv.questions[1].evidence == ("syn-1:D1:1", "syn-1:D1:3")
    assert conv.questions[2].evidence == ("syn-1:D2:1",)
    assert conv.questions[3].evidence == ("syn-1:D2:2",)
    assert set(conv.evidence_fixed) == {"D1:1; D1:3", "D:2:1", "D2:02"}
    assert conv.evidence_dangling == ()


def test_limit_takes_the_first_conversations(tmp_path: Path) -> None:
    two = _synthetic() * 2
    two[1] = {**two[1], "sample_id": "syn-2"}
    path = tmp_path / "two.json"
    path.write_text(json.dumps(two))
    assert [c.sample_id for c in load_conversations(path, 1)] == ["syn-1"]
    assert [c.sample_id for c in load_conversations(path)] == ["syn-1", "syn-2"]


def test_evidence_pointing_at_no_turn_is_kept_and_reported(tmp_path: Path) -> None:
    data = _synthetic()
    data[0]["qa"] = [{"question": "q", "answer": "a", "evidence": ["D1:1", "D9:9"], "category": 4}]
    path = tmp_path / "d.json"
    path.write_text(json.dumps(data))
    [conv] = load_conversations(path)
    assert conv.questions[0].evidence == ("syn-1:D1:1", "syn-1:D9:9")
    assert conv.evidence_dangling == ("syn-1:D9:9",)


def test_recall_counts_each_turn_a_memory_covers() -> None:
    evidence = ["c:D1:1", "c:D1:2", "c:D2:5"]
    # One memory spanning two evidence turns, one unrelated, one with the third.
    items = [["c:D1:1", "c:D1:2"], ["c:D9:9"], ["c:D2:5", "c:D2:6"]]
    assert evidence_recall(evidence, items) == 1.0
    assert evidence_recall(evidence, items[:2]) == pytest.approx(2 / 3)
    assert evidence_recall(evidence, items[1:2]) == 0.0
    assert evidence_recall(evidence, []) == 0.0
    assert evidence_recall(["c:D1:1", "c:D1:1"], [["c:D1:1"]]) == 1.0  # duplicated evidence counts once
    with pytest.raises(ValueError):
        evidence_recall([], items)


def test_tokenizer_lowercases_and_drops_stop_words() -> None:
    assert tokenize("Where did Ana's pottery CLASS start in 2023?") == ["ana", "pottery", "class", "start", "2023"]


def test_bm25_ranks_the_rare_matching_term_first_and_omits_non_matches() -> None:
    corpus = [
        "Ana: I went to the market today.",
        "Ben: The market was busy and the market was loud.",
        "Ana: My pottery teacher praised my vase.",
        "Ben: Nothing to report.",
        "Ana: The market sells pottery too, a whole pottery market with pottery.",
    ]
    bm25 = BM25(corpus)
    ranking = bm25.rank("Who praised the vase at pottery?")
    assert ranking[0] == 2  # the only turn with "praised" and "vase"
    assert set(ranking) == {2, 4}  # only turns sharing a term are retrieved
    market = bm25.rank("market")
    assert set(market) == {0, 1, 4}
    assert market.index(1) < market.index(0)  # twice the term in a similar length beats once
    assert bm25.rank("the and of") == []  # stop words only
    assert bm25.rank("zebra") == []


def test_bm25_prefers_the_shorter_document_at_equal_term_frequency() -> None:
    bm25 = BM25(["kayak", "kayak trip with many many many other words in it", "unrelated"])
    assert bm25.rank("kayak") == [0, 1]
    scores = bm25.scores("kayak")
    assert scores[0] > scores[1] > 0


def test_fill_budget_stops_at_the_first_item_that_does_not_fit() -> None:
    sizes = [400, 500, 300, 50]
    assert fill_budget([0, 1, 2, 3], sizes, 1000) == [0, 1]
    assert fill_budget([3, 2, 1, 0], sizes, 1000) == [3, 2, 1]
    assert fill_budget([0], sizes, 100) == []


def test_percentile_interpolates() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([5.0], 95) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0], 95) == pytest.approx(9.55)


def _outcome(category: int, r1000: float, r2000: float, ms: float) -> Outcome:
    return Outcome(category, {1000: r1000, 2000: r2000}, {5: r1000, 10: r2000}, ms, {1000: 900, 2000: 1800})


def test_summary_has_every_group_in_percent_with_nulls_for_empty_ones() -> None:
    summary = summarise([_outcome(1, 0.5, 1.0, 10.0), _outcome(1, 0.0, 0.5, 20.0), _outcome(4, 1 / 3, 1.0, 30.0)])
    assert list(summary) == list(GROUPS) == ["all", "1", "2", "3", "4", "5"]
    assert summary["all"] == {
        "recall_1000": 27.8,
        "recall_2000": 83.3,
        "recall_at_5": 27.8,
        "recall_at_10": 83.3,
        "fetch_p50_ms": 20.0,
        "fetch_p95_ms": 29.0,
        "n": 3,
    }
    assert summary["1"]["recall_1000"] == 25.0 and summary["1"]["n"] == 2
    assert summary["4"]["recall_1000"] == 33.3
    assert summary["2"] == {
        "recall_1000": None,
        "recall_2000": None,
        "recall_at_5": None,
        "recall_at_10": None,
        "fetch_p50_ms": None,
        "fetch_p95_ms": None,
        "n": 0,
    }


def test_stemmed_tokens_fold_word_forms_after_dropping_stop_words() -> None:
    assert stemmed_tokens("She painted the paintings of her dogs") == ["paint", "paint", "dog"]
    assert stemmed_tokens("") == []


def test_stemmed_bm25_meets_other_forms_of_a_word_the_plain_one_misses() -> None:
    corpus = ["Ana: I love painting sunsets.", "Ben: My dogs are great.", "Ana: Nothing new."]
    assert BM25(corpus).rank("Who painted? Which dog?") == []
    stemmed = BM25(corpus, analyzer=stemmed_tokens)
    assert set(stemmed.rank("Who painted? Which dog?")) == {0, 1}
    assert stemmed.rank("painter") == []  # Snowball keeps "painter" apart from "paint"


def test_rrf_rewards_agreement_and_breaks_ties_by_item_order() -> None:
    # 1 is second in both lists: 2 / 62 beats 1 / 61 for the items first in only one.
    assert rrf([[0, 1, 2], [3, 1]], k=60) == [1, 0, 3, 2]
    assert rrf([[2], [1]], k=60) == [1, 2]  # equal scores: item order
    assert rrf([[], []]) == []


def test_sentences_are_credited_to_their_whole_turn_with_speaker_and_caption() -> None:
    conv = parse_conversation(_synthetic()[0])
    items = split_turns(conv.turns)
    by_text = dict(zip(items.texts, items.turn_ids, strict=True))
    assert by_text["Ana: I started pottery classes."] == "syn-1:D1:1"
    assert by_text["Ben: Nice, where?"] == "syn-1:D1:2"
    # The caption travels with its turn (as ACM ingests it) and is credited to it.
    assert any(t.startswith("Ben: ") and "rose bed" in t and by_text[t] == "syn-1:D2:1" for t in items.texts)
    assert items.turn_ids.count("syn-1:D1:3") == 1


class _WordsEmbedder:
    """Stemmed bag of words hashed into 64 dimensions (crc32: the same in every process)."""

    name = "words"
    dim = 64

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            v = [0.0] * self.dim
            for word in stemmed_tokens(text):
                v[zlib.crc32(word.encode()) % self.dim] += 1.0
            vectors.append(v)
        return vectors

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed(texts)


def _long_turn_conversation() -> dict[str, Any]:
    filler = " ".join(f"Filler sentence number {i} about the weather and nothing else." for i in range(30))
    return {
        "sample_id": "syn-2",
        "conversation": {
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": f"{filler} I adopted a kitten named Miso. {filler}"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "The weather was nice today."},
            ],
        },
        "qa": [{"question": "What is the name of the kitten Ana adopted?", "evidence": ["D1:1"], "category": 4}],
    }


def test_sentence_hybrid_credits_a_sentence_to_its_turn_and_packs_it_by_the_same_rule() -> None:
    conv = parse_conversation(_long_turn_conversation())
    question = conv.questions[0]
    baselines = _baselines(conv, _WordsEmbedder(), count=len)  # a token per character: the long turn > 2,000
    assert list(baselines) == list(SYSTEMS[1:])
    hybrid = baselines["hybrid_sent"]
    assert isinstance(hybrid.ranker, SentenceHybrid)
    ranking = hybrid.ranker.rank(question.text)
    assert "Miso" in split_turns(conv.turns).texts[ranking[0]] and hybrid.turn_ids[ranking[0]] == "syn-2:D1:1"
    outcome = _ask_baseline(hybrid, question, "syn-2")
    assert outcome.recall == {1000: 1.0, 2000: 1.0} and outcome.at_k[5] == 1.0
    assert 0 < outcome.bundle_tokens[1000] <= 1000
    # The whole turn does not fit a bundle: rank-order filling stops there, so a turn baseline finds nothing.
    turn_level = _ask_baseline(baselines["bm25_stem"], question, "syn-2")
    assert turn_level.recall == {1000: 0.0, 2000: 0.0} and turn_level.at_k[5] == 1.0


def _systems(all_: dict[str, float | None], multi_hop: dict[str, float | None]) -> dict[str, Any]:
    return {
        name: {"all": {"recall_1000": all_[name]}, "1": {"recall_1000": multi_hop[name]}, "2": {"recall_1000": None}}
        for name in SYSTEMS
    }


def test_lead_is_over_the_strongest_baseline_of_each_group_and_may_be_negative() -> None:
    systems = _systems(
        {"acm": 91.4, "bm25": 69.0, "bm25_stem": 73.5, "vector": 77.7, "hybrid_sent": 86.2},
        {"acm": 76.9, "bm25": 40.4, "bm25_stem": 45.0, "vector": 78.1, "hybrid_sent": 77.7},
    )
    lead = lead_over_best_baseline(systems)
    assert lead == {
        "all": {"baseline": "hybrid_sent", "points": 5.2},
        "1": {"baseline": "vector", "points": -1.2},
    }  # temporal: no figures, left out
    assert lead_line(lead) == "ACM − best baseline (recall@1000): +5.2 overall (hybrid_sent), -1.2 multi-hop (vector)"
