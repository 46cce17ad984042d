"""Prefetch policy: ranking a pool, the topic a pool serves, the budget, co-access (pure)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from acm.domain.archetypes import draft
from acm.domain.models import Layer
from acm.domain.prefetch import (
    CONFIRM_K,
    PoolEntry,
    fuse_predictions,
    learn_followers,
    likely_next,
    on_topic,
    pool_confirmed,
    terms,
    topic_words,
    trim,
)
from acm.domain.ranking import WINDOW_BOOST, PoolIndex, in_window, rank, static_order
from acm.domain.retrieved import RetrievedMemory
from acm.domain.scope import Tier
from acm.read.pool import bounded_pool, build_pool, decode_pool, encode_pool

ENTRIES = [
    PoolEntry("Caroline: I went to the LGBTQ support group yesterday.", 0.02, 100.0),
    PoolEntry("Melanie: I painted a sunrise over the lake.", 0.03, 200.0),
    PoolEntry("Melanie: We went camping with the kids.", 0.01, 300.0),
]


def test_terms_drop_stop_words_and_stem() -> None:
    assert terms("When did the groups go camping?") == ["group", "go", "camp"]
    # A question's word meets the same word in another form, as in the keyword index.
    assert terms("What has Melanie painted?")[-1] == terms("She loves painting")[-1] == "paint"


def test_a_question_finds_the_memory_that_says_it_in_another_form() -> None:
    index = PoolIndex(ENTRIES)
    assert index.rank("Has Melanie been painting?")[0][0] == 1


def test_the_pool_ranks_the_matching_memory_first() -> None:
    index = PoolIndex(ENTRIES)
    assert index.rank("When did Caroline go to the support group?")[0][0] == 0
    assert index.rank("What did Melanie paint?")[0][0] == 1
    assert len(index.rank("anything")) == len(ENTRIES)  # the prior orders what the words do not


def test_entries_inside_the_questions_window_rank_higher() -> None:
    index = PoolIndex(ENTRIES)  # said at 100, 200 and 300
    window = in_window([e.at for e in ENTRIES], (150.0, 250.0))
    assert window == {1: WINDOW_BOOST}
    boosted = list(
        rank("What happened then?", index._postings, index.indexed.lengths, index.static, index.order, boost=window)
    )
    assert boosted[0] == (1, index.static[1] + WINDOW_BOOST)
    assert sorted(i for i, _ in boosted) == [0, 1, 2]  # every entry once


def test_the_lazy_ranking_is_the_full_sort_by_score_with_ties_by_index() -> None:
    rng = random.Random(3)
    vocabulary = ["kid", "paint", "lake", "camping", "group", "dog", "work"]
    for _ in range(200):
        n = rng.randint(1, 30)
        static = [rng.choice([0.0, 0.1, 0.25, 0.5]) for _ in range(n)]  # ties on purpose
        postings: dict[str, tuple[list[int], list[int]]] = {}
        lengths = [rng.randint(3, 12) for _ in range(n)]
        for word in vocabulary:
            docs = sorted(rng.sample(range(n), rng.randint(0, n)))
            if docs:
                postings[word] = (docs, [rng.randint(1, 3) for _ in docs])
        query = " ".join(rng.sample(vocabulary, 3))
        got = list(rank(query, postings.get, lengths, static, static_order(static)))
        scores = dict(got)
        assert sorted(scores) == list(range(n))  # every entry, once
        assert got == sorted(got, key=lambda s: (-s[1], s[0]))
        unmatched = [i for i in range(n) if not any(i in postings.get(t, ((), ()))[0] for t in terms(query))]
        assert all(scores[i] == static[i] for i in unmatched)


def test_a_question_is_on_topic_when_it_shares_a_word_other_than_a_name_with_the_latest_turns() -> None:
    topic = set(topic_words("Melanie: I painted a sunrise over the lake with my kids last weekend."))
    assert on_topic("When did Melanie paint a sunrise?", topic)  # "sunrise"
    assert on_topic("Where are the kids?", topic)  # plural folded: "kids" meets "kid"
    assert not on_topic("What is Melanie's favourite book?", topic)  # the name alone is no topic
    assert not on_topic("Did Caroline meet Melanie?", topic)
    assert not on_topic("What did the lake cost?", set())  # a pool without a topic serves nothing
    # The gate does not stem: "painting" may be the latest turns' topic or a long-past one.
    assert not on_topic("What has Melanie been painting?", topic)


def test_a_question_sharing_only_a_word_the_whole_pool_repeats_is_not_about_the_latest_turns() -> None:
    topic = set(topic_words("Melanie: The kids loved the sunrise hike, and I painted it afterwards."))
    pool = {"kids": 40, "sunrise": 2, "hike": 3, "painted": 9}  # in how many of the pool's 100 entries
    by_term = {terms(word)[0]: n for word, n in pool.items()}
    df = lambda t: by_term.get(t, 0)  # noqa: E731
    # One shared word of five, and every other entry mentions kids: a question about long ago.
    assert not on_topic("What types of pottery have Melanie's kids made at school?", topic, df, 100)
    # One shared word of four, but few entries have it: what the latest turns are about.
    assert on_topic("When did Melanie last see a sunrise from the mountains?", topic, df, 100)
    # Two shared words of four: a third of what it asks is in the latest turns.
    assert on_topic("Did the kids like the hike in the rain?", topic, df, 100)
    # Without document frequencies, any shared word will do (as before).
    assert on_topic("What types of pottery have Melanie's kids made at school?", topic)


def test_the_pool_serves_only_when_it_holds_the_questions_best_keyword_matches() -> None:
    pooled = {"a", "b", "c"}
    assert pool_confirmed(["b", "a"], pooled)
    assert not pool_confirmed(["a", "x"], pooled)  # one of the best is outside the pool
    assert not pool_confirmed(["x", "a"], pooled)
    assert pool_confirmed(["c"], pooled)  # only one memory matched at all
    assert not pool_confirmed([], pooled)  # no word matched anything: nothing says the pool holds the answer


def test_the_pool_must_hold_each_of_the_keyword_channels_best_five() -> None:
    # The full retrieval's answer almost always holds the keyword channel's best five: a pool lacking the fifth
    # (a match said long ago, outside what was predicted from the latest turns) answers worse than it.
    best = [f"m{i}" for i in range(CONFIRM_K)]
    assert CONFIRM_K >= 5 and pool_confirmed(best, {*best, "x"})
    assert not pool_confirmed(best, {*best[:-1], "x"})


def test_predictions_fuse_by_reciprocal_rank() -> None:
    fused = fuse_predictions({"a": ["m1", "m2"], "b": ["m2", "m3"]}, {"a": 1.0, "b": 1.0})
    assert fused[0][0] == "m2"


def test_trim_keeps_the_best_within_entries_and_bytes() -> None:
    assert trim([10, 10, 10], 2, 100) == [0, 1]
    assert trim([60, 50, 30], 5, 100) == [0, 2]  # the 50 does not fit after 60; the 30 does


def test_a_pool_with_its_index_fits_the_schema_budget() -> None:
    schema = draft("a", "customer_support", "", {"prefetch": {"max_entries": 1000, "max_bytes": 8192}})
    at = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)
    items = [
        (
            RetrievedMemory(
                f"m{i}", Tier.USER, Layer.MID, "fact", f"fact number {i} about order ORD-{i} " * 3, (f"t{i}",), 20, at
            ),
            1.0 / (i + 1),
        )
        for i in range(400)
    ]
    pool = bounded_pool(items, schema, ["g1", "", ""])
    assert 0 < len(encode_pool(pool)) <= 8192
    assert len(pool.memories) < 400 and len(pool.lengths) == len(pool.memories)
    full = build_pool(items[:3], ["g"])
    assert set(full.postings) >= {"fact", "number", "order"}


def test_a_pool_reads_back_as_stored_and_another_format_reads_as_none() -> None:
    said = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)
    memories = [
        RetrievedMemory("m1", Tier.USER, Layer.MID, "fact", "Sam: the invoice INV-7 is paid ✓", ("t1",), 11, said),
        RetrievedMemory(
            "m2",
            Tier.CUSTOMER,
            Layer.LONG,
            "policy",
            "refunds within 30 days",
            (),
            6,
            said,
            said,
            "s1",
            "tool",
            "kb",
            "untrusted",
        ),
    ]
    pool = build_pool([(m, 1.0) for m in memories], ["g1", "", "g3"], ["invoice"], predicted_from=["session"])
    assert decode_pool(encode_pool(pool)) == pool
    assert decode_pool(encode_pool(pool).replace(b'"v":1', b'"v":2')) is None  # a newer format: a miss
    assert decode_pool(b"\x08\x01garbage") is None  # e.g. a pool of the protobuf era


def test_co_access_is_learned_per_agent() -> None:
    counts = learn_followers({}, ["order"], ["billing"])
    counts = learn_followers(counts, ["order"], ["billing", "issue"])
    assert likely_next(counts, ["order"], 1) == ["billing"]
    assert likely_next(counts, ["unknown"]) == []
