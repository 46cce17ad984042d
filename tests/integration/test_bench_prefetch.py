"""`acm bench prefetch` end to end on the tiny synthetic LoCoMo-format file of the locomo smoke test:
turns replayed into sessions, each question asked (after its last evidence turn, at a drawn session's end,
after a drawn turn) through both gateways; the JSON has the promised shape per placement and a question
repeating its evidence turn is served from the prefetch pool."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from acm_benchmarks.locomo import parse_conversation
from acm_benchmarks.prefetch import ask_points
from tests.integration.test_bench_locomo_cli import _synthetic

KEYS = {
    "hit_rate_pct",
    "served_from_prefetch_pct",
    "fetch_p50_ms",
    "fetch_p95_ms",
    "fetch_p50_ms_on_hit",
    "fetch_p50_ms_served_from_prefetch",
    "fetch_p95_ms_served_from_prefetch",
    "fetch_p50_ms_fallback",
    "recall_pct",
    "recall_pct_served_from_prefetch",
    "cache_bytes_per_session",
    "cache_bytes_per_session_max",
    "cache_bytes_bound",
    "n",
    "n_scored",
}
PLACEMENT_KEYS = {
    "rule",
    "uses_gold",
    "systems",
    "recall_difference_pts",
    "served_from_prefetch",
    "sessions",
    "gateway_outcomes",
    "duration_s",
}


def test_questions_are_asked_right_after_their_last_evidence_turn() -> None:
    conv = parse_conversation(_synthetic()[0])
    points = ask_points(conv)
    by_question = {q.text: i for i, qs in points.items() for q in qs}
    assert conv.turns[by_question["Which hobbies does Omar have?"]].dia_id == "D1:4"
    assert conv.turns[by_question["When did Nadia adopt the iguana?"]].dia_id == "D2:3"


def test_bench_prefetch_runs_end_to_end(tmp_path: Path) -> None:
    data = tmp_path / "synthetic-locomo.json"
    data.write_text(json.dumps(_synthetic()))
    out = tmp_path / "results" / "prefetch-syn.json"
    acm = str(Path(sys.executable).parent / "acm")
    proc = subprocess.run(
        [acm, "bench", "prefetch", "--data", str(data), "--json", str(out), "--data-dir", str(tmp_path / "acm")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("5/5 asked") == 3 and proc.stdout.count("3/3 asked") == 3, proc.stdout

    result = json.loads(out.read_text())
    assert set(result) == {"placements", "run"}
    assert list(result["placements"]) == ["evidence", "session-end", "random"]
    for placement, block in result["placements"].items():
        assert set(block) == PLACEMENT_KEYS, placement
        assert block["uses_gold"] == (placement == "evidence")
        assert set(block["systems"]) == {"prefetch", "no_prefetch"}
        for name, row in block["systems"].items():
            assert set(row) == KEYS, (placement, name)
            assert row["n"] == 8 and 0 < row["n_scored"] <= 8, (placement, name)
            assert 0 <= row["recall_pct"] <= 100 and row["fetch_p95_ms"] >= row["fetch_p50_ms"] > 0, name
        with_prefetch, without = block["systems"]["prefetch"], block["systems"]["no_prefetch"]
        assert without["served_from_prefetch_pct"] == 0.0 and without["cache_bytes_per_session"] == 0
        assert without["fetch_p50_ms_on_hit"] is None
        assert with_prefetch["hit_rate_pct"] == 0 or with_prefetch["fetch_p50_ms_on_hit"] > 0
        assert 0 < with_prefetch["cache_bytes_per_session_max"] <= with_prefetch["cache_bytes_bound"]
        assert block["recall_difference_pts"] == round(with_prefetch["recall_pct"] - without["recall_pct"], 1)
        assert block["sessions"] >= 2
    evidence = result["placements"]["evidence"]
    assert evidence["systems"]["prefetch"]["n_scored"] == 8  # all the evidence is said by then
    assert evidence["systems"]["prefetch"]["served_from_prefetch_pct"] > 0  # the verbatim question at least
    assert result["run"]["questions"] == 8 and result["run"]["seed"] == 22


def test_fetch_layers_script_times_the_served_fetches_from_the_benchmarks_loop(tmp_path: Path) -> None:
    """scripts/bench/fetch_layers.py wraps the replay's question step; it must keep up with its signature."""
    data = tmp_path / "synthetic-locomo.json"
    data.write_text(json.dumps(_synthetic()))
    out = tmp_path / "layers.json"
    script = Path(__file__).resolve().parents[2] / "scripts" / "bench" / "fetch_layers.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--data", str(data), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    assert result["served_fetches"] > 0  # the verbatim question at least
    first = result["median_ms"]["first"]
    assert first["client_round_trip"] >= first["gateway_rpc"] >= first["fetch_context"] > 0
    assert result["trivial_rpc_round_trip_ms_p50"] > 0
