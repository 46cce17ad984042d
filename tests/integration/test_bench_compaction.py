"""`acm bench tokens | retention | coverage` end to end on small runs: each writes the promised JSON shape
(top-level "systems" keyed by system, with the target figures under their names)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from tests.integration.test_bench_locomo_cli import _synthetic

ACM = str(Path(sys.executable).parent / "acm")


def _run(*args: str, timeout: int = 300) -> str:
    proc = subprocess.run([ACM, "bench", *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_bench_tokens_quick(tmp_path: Path) -> None:
    out = tmp_path / "tokens.json"
    stdout = _run("tokens", "--quick", "--json", str(out))
    assert "n=60" in stdout and "n=120" in stdout, stdout
    result = json.loads(out.read_text())
    systems = result["systems"]
    assert set(systems) == {"append_all", "truncation", "acm"}
    for name in systems:
        assert set(systems[name]["cumulative_tokens"]) == {"60", "120"}, name
    # Append-all is quadratic: twice the turns, about four times the tokens; ACM stays in its window.
    append = systems["append_all"]["cumulative_tokens"]
    assert append["120"] > 3 * append["60"]
    acm = systems["acm"]
    assert acm["cumulative_tokens"]["120"] == acm["prompt_tokens"]["120"] + acm["compaction_work_tokens"]["120"]
    assert set(acm["within_1_1_nW"]) == {"60", "120"}
    assert acm["compaction"]["compactions"] > 0 and acm["compaction"]["latency_p95_ms"] is not None
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "tokens.png").stat().st_size > 0


def test_bench_retention_quick(tmp_path: Path) -> None:
    out = tmp_path / "retention.json"
    stdout = _run("retention", "--quick", "--json", str(out))
    assert "session 2/2" in stdout, stdout
    result = json.loads(out.read_text())
    systems = result["systems"]
    assert set(systems) == {"acm", "acm_lossy_drafts", "summary_unverified", "truncation"}
    for name, row in systems.items():
        assert 0 <= row["retention_pct"] <= 100, name
        assert row["current_facts"] == systems["acm"]["current_facts"] > 0, name
    assert systems["acm"]["retention_pct"] >= max(systems[s]["retention_pct"] for s in systems)
    assert systems["acm"]["compaction"]["verification_failure_rate_pct"] is not None
    # Lossy drafts are caught: rejected on the first attempt, and the facts survive anyway.
    lossy = systems["acm_lossy_drafts"]
    assert lossy["compaction"]["first_attempt_rejected_pct"] > 0
    assert lossy["retention_pct"] > systems["summary_unverified"]["retention_pct"]
    assert len(result["sessions"]) == 2


def test_bench_coverage_on_a_tiny_locomo_file(tmp_path: Path) -> None:
    data = tmp_path / "synthetic-locomo.json"
    data.write_text(json.dumps(_synthetic()))
    out = tmp_path / "coverage.json"
    stdout = _run("coverage", "--data", str(data), "--json", str(out), "--data-dir", str(tmp_path / "acm"))
    assert "syn-a: 10 turns in one session" in stdout and "syn-b: 10 turns in one session" in stdout, stdout
    result = json.loads(out.read_text())
    systems = result["systems"]
    assert set(systems) == {"acm", "truncation", "full"}
    # Questions with a gold answer (the adversarial one has none): 5 + 3.
    assert all(systems[s]["n"] == 8 for s in systems)
    for name, row in systems.items():
        assert 0 <= row["coverage_pct"] <= 100 and row["tokens_per_question"] > 0, name
    # The conversations are tiny: everything fits, so ACM's context holds what the whole conversation holds.
    assert systems["full"]["coverage_pct"] >= systems["acm"]["coverage_pct"] > 0
    assert systems["acm"]["tokens_per_question"] <= 2000
    assert [c["verified"] for c in result["run"]["compactions"]] == [True, True]
    assert (tmp_path / "coverage.png").stat().st_size > 10_000  # the plot, beside the JSON

    # Again on what is already ingested, with the per-question misses written out.
    misses = tmp_path / "misses.json"
    args = ["--data-dir", str(tmp_path / "acm"), "--reuse-ingest", "--misses", str(misses)]
    stdout = _run("coverage", "--data", str(data), "--json", str(out), *args)
    assert "already ingested and compacted" in stdout, stdout
    assert json.loads(out.read_text())["systems"]["acm"]["coverage_pct"] == systems["acm"]["coverage_pct"]
    assert all({"question", "answer", "missing", "context"} <= set(m) for m in json.loads(misses.read_text()))
