import random
from collections.abc import Iterator

from acm.domain.extract import mentions
from acm.domain.ranking import reciprocal_rank_fusion
from acm.domain.tokens import pack, pack_until_full
from acm_anticipate.usecases import merge_recent


def test_pack_keeps_rank_order_and_never_exceeds_budget() -> None:
    packed = pack(["a", "b", "c", "d"], [40, 70, 30, 20], budget=100)
    assert [item for item, _ in packed.items] == ["a", "c", "d"]
    assert packed.total_tokens == 90
    assert packed.dropped == 1


def test_pack_with_zero_budget_keeps_nothing() -> None:
    assert pack(["a"], [1], budget=0).items == []


def test_pack_until_full_keeps_what_pack_keeps_and_stops_reading_when_nothing_more_fits() -> None:
    rng = random.Random(7)
    for _ in range(300):
        sizes = [rng.randint(1, 60) for _ in range(rng.randint(0, 40))]
        budget = rng.randint(0, 400)
        read: list[int] = []

        def produced(sizes: list[int] = sizes, read: list[int] = read) -> Iterator[tuple[int, int]]:
            for i, size in enumerate(sizes):
                read.append(i)
                yield i, size

        kept, total = pack_until_full(produced(), budget, min(sizes, default=0))
        expected = pack(list(range(len(sizes))), sizes, budget)
        assert kept == expected.items
        assert total == expected.total_tokens
        if read and read[-1] < len(sizes) - 1:  # it stopped early: no unread item could have fitted
            assert budget - total < min(sizes)


def test_rrf_rewards_agreement() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "d"]])
    assert fused[0][0] == "b"
    assert {item for item, _ in fused} == {"a", "b", "c", "d"}


def test_mentions_finds_names_ids_and_amounts() -> None:
    found = {
        (m.text, m.type) for m in mentions("Hi Sarah, approve PO-20261028-0098 for 125,000.00 CNY in New York City.")
    }
    assert ("Sarah", "name") in found
    assert ("PO-20261028-0098", "id") in found
    assert ("125,000.00 CNY", "amount") in found
    assert ("New York City", "name") in found
    assert not any(text in ("Hi", "I") for text, _ in found)


def test_merge_recent_is_newest_first_deduplicated_and_bounded() -> None:
    assert merge_recent(["Bob", "Ann"], ["ann", "Cy"], limit=3) == ["Cy", "ann", "Bob"]
