"""The pure parts of `acm bench fetch-load`: queries per client, a level's summary, the target check, ratios."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

from acm_benchmarks.fetch_load import (
    Conversation,
    Level,
    client_queries,
    parse_clients,
    parse_env,
    ratios,
    summarise_level,
    target_check,
)

AT = datetime(2024, 1, 1, tzinfo=UTC)


def _conv(name: str, n: int) -> Conversation:
    return Conversation(name, ((name, "hi", AT),), tuple(f"{name} q{i}" for i in range(n)))


def test_each_client_asks_its_conversation_in_an_order_of_its_own() -> None:
    convs = [_conv("a", 50), _conv("b", 50)]
    q0, q1, q2 = (client_queries(convs, i, seed=7) for i in range(3))
    assert sorted(q0) == sorted(convs[0].questions) and sorted(q1) == sorted(convs[1].questions)
    assert sorted(q2) == sorted(q0) and q2 != q0  # same conversation, another order
    assert client_queries(convs, 0, seed=7) == q0  # seeded


def test_level_summary_counts_refusals_apart_from_errors() -> None:
    level = Level(16, served_ms=[float(i) for i in range(1, 101)], refused_ms=[0.5, 0.7])
    level.errors = Counter({"RESOURCE_EXHAUSTED": 2, "DEADLINE_EXCEEDED": 1})
    level.seconds, level.server_cpu_s = 10.0, 1.0
    s = summarise_level(level)
    assert s["fetches"] == 100 and s["fetches_per_s"] == 10.0
    assert s["fetch_ms"]["p50"] == pytest.approx(50.5) and s["fetch_ms"]["max"] == 100.0
    assert s["errors"] == 1 and s["resource_exhausted"] == 2
    assert s["server_cpu_ms_per_fetch"] == 10.0 and s["server_cpu_cores"] == 0.1


def test_target_needs_the_p99_bound_and_no_error_or_refusal() -> None:
    def lv(clients: int, p99: float, errors: int = 0, refused: int = 0) -> dict[str, object]:
        return {"clients": clients, "fetch_ms": {"p99": p99}, "errors": errors, "resource_exhausted": refused}

    assert target_check([lv(8, 500.0)]) is None
    assert target_check([lv(16, 99.0)])["met"] is True  # type: ignore[index]
    assert target_check([lv(16, 101.0)])["met"] is False  # type: ignore[index]
    assert target_check([lv(16, 50.0, refused=1)])["met"] is False  # type: ignore[index]


def test_ratios_pair_levels_by_client_count() -> None:
    def lv(clients: int, p50: float, p99: float, rate: float) -> dict[str, object]:
        return {"clients": clients, "fetch_ms": {"p50": p50, "p99": p99}, "fetches_per_s": rate}

    out = ratios([lv(1, 10, 20, 50), lv(16, 100, 300, 60)], [lv(16, 200, 600, 30)])
    assert out == [{"clients": 16, "p50": 0.5, "p99": 0.5, "fetches_per_s": 2.0}]


def test_arguments() -> None:
    assert parse_clients("1, 4,16") == (1, 4, 16)
    assert parse_env(["ACM_FETCH_MAX_IN_FLIGHT=4", "X=a=b"]) == {"ACM_FETCH_MAX_IN_FLIGHT": "4", "X": "a=b"}
    for bad in ("", "0", "x"):
        with pytest.raises(SystemExit):
            parse_clients(bad)
    with pytest.raises(SystemExit):
        parse_env(["novalue"])
