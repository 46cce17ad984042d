"""The pure parts of `acm bench fleet`: the agents' schedule, percentiles, the generated turns, the summary's
shape, the per-second timeline and the CPU/RSS figures."""

from __future__ import annotations

import itertools
import os

import pytest

from acm_benchmarks.fleet_stack import proc_sample
from acm_benchmarks.fleet_stats import (
    SHAPE_KEYS,
    Pacer,
    ProcSample,
    Recorder,
    cpu_points,
    pcts,
    planned_turns,
    proc_usage,
    summarise,
    timeline,
)
from acm_benchmarks.fleet_turns import QUERY_CHARS, agent_turns, template_dialogue

# ---------------------------------------------------------------------------------------------------
# Schedule


def test_an_agent_on_time_gets_its_staggered_slots_until_the_end() -> None:
    pacer = Pacer(agent=1, agents=4, rate=8.0, duration_s=2.0)  # period 0.5 s, phase 1/8 s
    dues: list[float] = []
    while (due := pacer.next_due(now=dues[-1] if dues else 0.0)) is not None:
        dues.append(due)
    assert dues == [0.125, 0.625, 1.125, 1.625]
    assert pacer.skipped == 0
    assert len(dues) == planned_turns(1, 4, 8.0, 2.0)


def test_the_fleets_slots_spread_evenly_at_the_target_rate() -> None:
    agents, rate, duration = 5, 10.0, 3.0
    slots = sorted(Pacer(i, agents, rate, duration).slot(k) for i in range(agents) for k in range(6))
    in_run = [s for s in slots if s < duration]
    assert len(in_run) == rate * duration == sum(planned_turns(i, agents, rate, duration) for i in range(agents))
    gaps = {round(b - a, 9) for a, b in itertools.pairwise(in_run)}
    assert gaps == {1 / rate}


def test_an_agent_more_than_a_period_late_skips_the_missed_slots_instead_of_bursting() -> None:
    pacer = Pacer(agent=0, agents=2, rate=2.0, duration_s=10.0)  # period 1 s: slots 0, 1, 2, ...
    assert pacer.next_due(0.0) == 0.0
    assert pacer.next_due(0.9) == 1.0  # on time: wait for it
    assert pacer.next_due(1.5) == 2.0  # less than a period late: not skipped
    assert pacer.next_due(5.2) == 5.0  # slot 3 was due 2.2 s ago: 3 and 4 are dropped, 5 is run now
    assert pacer.skipped == 2
    assert pacer.next_due(5.3) == 6.0
    assert pacer.next_due(11.0) is None  # the run is over: the loop ends by itself


def test_a_pacer_refuses_nonsense() -> None:
    with pytest.raises(ValueError):
        Pacer(agent=3, agents=3, rate=1.0, duration_s=1.0)
    with pytest.raises(ValueError):
        Pacer(agent=0, agents=1, rate=0.0, duration_s=1.0)


# ---------------------------------------------------------------------------------------------------
# Percentiles


def test_percentiles_interpolate_and_are_none_without_data() -> None:
    assert pcts([float(v) for v in range(1, 101)]) == {"p50": 50.5, "p95": 95.0, "p99": 99.0}
    assert pcts([7.0]) == {"p50": 7.0, "p95": 7.0, "p99": 7.0}
    assert pcts([]) == {"p50": None, "p95": None, "p99": None}


# ---------------------------------------------------------------------------------------------------
# Turns


def test_generated_turns_are_reproducible_and_mix_dialogue_with_tool_json() -> None:
    turns = agent_turns(3, 200, seed=5, tool_share=0.3)
    assert turns == agent_turns(3, 200, seed=5, tool_share=0.3)
    assert turns != agent_turns(4, 200, seed=5, tool_share=0.3)
    assert {"user", "assistant", "tool"} <= {t.role for t in turns}
    from_tools = [t for t in turns if not t.speaker]  # dialogue lines carry their speaker, tool-session turns not
    assert 0.2 < len(from_tools) / len(turns) < 0.4  # near the share asked for
    assert all(t.role == "user" for t in turns if t.speaker)
    assert any(t.role == "tool" and t.content.lstrip().startswith("{") for t in from_tools)  # JSON answers
    assert any(t.role == "assistant" and "({" in t.content for t in from_tools)  # the calls


def test_each_query_is_the_prose_said_before_the_turn() -> None:
    turns = agent_turns(0, 50, seed=1, tool_share=0.0)
    assert all(t.role == "user" for t in turns)
    for before, turn in itertools.pairwise(turns):
        assert turn.query == before.content[:QUERY_CHARS]
    assert all(len(t.query) <= QUERY_CHARS for t in agent_turns(0, 100, seed=1, tool_share=0.5))


def test_locomo_dialogue_is_replayed_in_order_each_agent_starting_in_its_own_conversation() -> None:
    convs = [[("Ann", f"a{i}") for i in range(3)], [("Bo", f"b{i}") for i in range(3)]]
    first = agent_turns(0, 4, seed=1, dialogue=convs, tool_share=0.0)
    second = agent_turns(1, 4, seed=1, dialogue=convs, tool_share=0.0)
    assert [t.content for t in first] == ["a0", "a1", "a2", "b0"]
    assert [t.content for t in second] == ["b0", "b1", "b2", "a0"]
    assert first[0].speaker == "Ann" and second[0].speaker == "Bo"


def test_template_dialogue_alternates_two_speakers_and_fills_every_slot() -> None:
    lines = template_dialogue(10, seed=2)
    assert len(lines) == 10 and lines == template_dialogue(10, seed=2)
    assert len({s for s, _ in lines}) == 2 and lines[0][0] != lines[1][0]
    assert all("{" not in text for _, text in lines)


def test_a_tool_share_outside_0_1_is_refused() -> None:
    with pytest.raises(ValueError):
        agent_turns(0, 5, seed=1, tool_share=1.5)


# ---------------------------------------------------------------------------------------------------
# Summary


def _recorded() -> Recorder:
    rec = Recorder()
    rec.accepted = [0.1, 0.5, 1.2, 1.9, 2.5]
    rec.processed = [0.4, 1.5, 2.2, 3.1, 4.5]  # two after the 3 s window: the drain
    rec.fetches = [(0.2, 10.0), (0.6, 30.0), (1.3, 20.0)]
    rec.freshness = [(0.0, 400.0), (2.0, 900.0)]
    rec.lag = [(0.0, 0, {}), (1.0, 3, {"ingest": 2, "retrieve": 1}), (2.5, 1, {"ingest": 1})]
    rec.errors.update({"Fetch:UNAVAILABLE": 2, "Ingest:DEADLINE_EXCEEDED": 1})
    rec.probes_sent = 3
    rec.probes_timed_out = 1
    rec.probe_fetches = 9
    rec.procs = {"embedded": [ProcSample(0.0, 1.0, 100 * 2**20), ProcSample(1.0, 1.5, 120 * 2**20)]}
    return rec


def test_the_summary_has_the_issues_shape_first() -> None:
    result = summarise(_recorded(), mode="embedded", agents=4, duration_s=3.0, replicas=1)
    assert tuple(result)[: len(SHAPE_KEYS)] == SHAPE_KEYS
    assert set(result["freshness_ms"]) == set(result["fetch_ms"]) == {"p50", "p95", "p99"}
    assert result["ingest_turns_per_s"] == 1.0  # 3 jobs done within the 3 s of load
    assert (result["accepted"], result["processed"], result["processed_in_window"]) == (5, 5, 3)
    assert result["errors"] == 3
    assert result["errors_by_code"] == {"Fetch:UNAVAILABLE": 2, "Ingest:DEADLINE_EXCEEDED": 1}
    assert result["max_lag"] == 3 and result["lag_by_group_max"] == {"ingest": 2, "retrieve": 1}
    assert result["fetch_concurrency"] == 4 and result["replicas"] == 1
    assert result["freshness_ms"]["p50"] == 650.0
    assert result["freshness_samples"] == [[0.0, 400.0], [2.0, 900.0]]
    assert result["freshness_probes"] == {"sent": 3, "found": 2, "timed_out": 1, "fetches": 9}
    assert len(result["timeline"]) == 5  # through the last job seen done (4.5 s)


def test_the_timeline_counts_per_second_and_carries_the_last_lag_forward() -> None:
    rows = timeline(_recorded(), 5)
    assert [r["accepted"] for r in rows] == [2, 2, 1, 0, 0]
    assert [r["processed"] for r in rows] == [1, 1, 1, 1, 1]
    assert [r["lag"] for r in rows] == [0, 3, 1, 1, 1]
    assert [r["fetch_p95_ms"] for r in rows] == [29.0, 20.0, None, None, None]
    assert [r["fetches"] for r in rows] == [2, 1, 0, 0, 0]
    assert [r["cpu_pct"] for r in rows] == [{}, {"embedded": 50.0}, {}, {}, {}]  # the span ending in second 1


def test_cpu_and_rss_per_process() -> None:
    samples = [ProcSample(0.0, 1.0, 50 * 2**20), ProcSample(2.0, 2.0, 80 * 2**20), ProcSample(3.0, 2.9, 60 * 2**20)]
    assert cpu_points(samples) == [(2.0, 50.0), (3.0, pytest.approx(90.0))]
    usage = proc_usage({"ingest": samples, "gone": []})
    assert usage == {"ingest": {"cpu_pct_mean": 63.3, "cpu_pct_max": 90.0, "rss_mb_max": 80.0, "rss_mb_last": 60.0}}


def test_a_process_is_read_from_proc_and_a_gone_one_is_none() -> None:
    sample = proc_sample(os.getpid(), 1.0)
    assert sample is not None and sample.cpu_s > 0 and sample.rss_bytes > 10 * 2**20
    assert proc_sample(2**22 + 1, 1.0) is None  # above the kernel's pid limit: never a process
