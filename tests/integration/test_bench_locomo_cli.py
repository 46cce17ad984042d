"""`acm bench locomo` end to end on a tiny synthetic LoCoMo-format file: embedded ACM started, every turn
ingested over gRPC, every question fetched; the JSON has exactly the promised shape, and a question whose
answer is a turn, nearly verbatim, is found by ACM and by both baselines."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SYSTEMS = {"acm", "bm25", "bm25_stem", "vector", "hybrid_sent"}
GROUPS = {"all", "1", "2", "3", "4", "5"}
METRICS = {"recall_1000", "recall_2000", "recall_at_5", "recall_at_10", "fetch_p50_ms", "fetch_p95_ms", "n"}


def _turns(prefix: str, speakers: tuple[str, str], texts: list[str]) -> list[dict[str, Any]]:
    return [{"speaker": speakers[i % 2], "dia_id": f"{prefix}:{i + 1}", "text": t} for i, t in enumerate(texts)]


def _qa(question: str, evidence: list[str], category: int, **answer: object) -> dict[str, Any]:
    return {"question": question, "evidence": evidence, "category": category, **answer}


def _synthetic() -> list[dict[str, Any]]:
    a = ("Nadia", "Omar")
    b = ("Lena", "Raj")
    conv_a: dict[str, Any] = {
        "speaker_a": a[0],
        "speaker_b": a[1],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": _turns(
            "D1",
            a,
            [
                "Hi Omar, how was your week?",
                "Busy! I've been learning the cello since March.",
                "That sounds hard. Do you practise every day?",
                "Almost. I also started rock climbing on weekends.",
                "Climbing and cello, what a combination.",
            ],
        ),
        "session_2_date_time": "7:55 pm on 9 June, 2023",
        "session_2": _turns(
            "D2",
            a,
            [
                "Guess what happened on Saturday!",
                "Tell me everything.",
                "I adopted a purple iguana named Zorblax from the Maplewood reptile shelter.",
                "A purple one? I need to see a picture of that.",
                "Sure, I'll send one tomorrow.",
            ],
        ),
    }
    conv_a["session_2"][3]["blip_caption"] = "a photo of a lizard on a branch"
    conv_b: dict[str, Any] = {
        "speaker_a": b[0],
        "speaker_b": b[1],
        "session_1_date_time": "10:37 am on 27 June, 2023",
        "session_1": _turns(
            "D1",
            b,
            [
                "Raj! Long time no see.",
                "Lena, hi! What have you been up to?",
                "I finally opened my bakery on Harbour Street.",
                "Congratulations, that was your dream for years.",
                "Thanks, the sourdough sells out by noon.",
            ],
        ),
        "session_2_date_time": "4:33 pm on 12 July, 2023",
        "session_2": _turns(
            "D2",
            b,
            [
                "How did the race go?",
                "I ran the city marathon last Sunday in four hours.",
                "Amazing, you trained so hard for it.",
                "You should have seen the cinnamon rolls you baked for me afterwards.",
                "Twelve of them, and you ate them all.",
            ],
        ),
        # A date with no session list, as in the real data.
        "session_3_date_time": "8:56 pm on 20 July, 2023",
    }
    iguana = "I adopted a purple iguana named Zorblax from the Maplewood reptile shelter."
    qa_a = [
        # The only category-3 question: its answer is a turn, verbatim.
        _qa("Which purple iguana did Nadia adopt from the Maplewood reptile shelter?", ["D2:3"], 3, answer=iguana),
        _qa("What instrument is Omar learning?", ["D1:2"], 4, answer="cello"),
        _qa("Which hobbies does Omar have?", ["D1:2; D1:4"], 1, answer="cello, climbing"),
        _qa("When did Nadia adopt the iguana?", ["D:2:3"], 2, answer="June 2023"),
        _qa("What is Omar's cello teacher's dog called?", ["D1:2"], 5, adversarial_answer="Rex"),
        _qa("What colour is the sky?", [], 3, answer="blue"),  # no evidence: skipped
    ]
    qa_b = [
        _qa("Where is Lena's bakery?", ["D1:03"], 4, answer="Harbour Street"),
        _qa("When did Raj run the city marathon?", ["D2:2"], 2, answer="July 2023"),
        _qa("How many cinnamon rolls did Lena bake?", ["D2:4", "D2:5"], 1, answer=12),
    ]
    extra: dict[str, Any] = {"observation": {}, "session_summary": {}, "event_summary": {}}
    return [
        {"sample_id": "syn-a", "conversation": conv_a, "qa": qa_a, **extra},
        {"sample_id": "syn-b", "conversation": conv_b, "qa": qa_b, **extra},
    ]


def test_bench_locomo_runs_end_to_end(tmp_path: Path) -> None:
    data = tmp_path / "synthetic-locomo.json"
    data.write_text(json.dumps(_synthetic()))
    out = tmp_path / "results" / "locomo-syn.json"
    acm = str(Path(sys.executable).parent / "acm")
    proc = subprocess.run(
        [acm, "bench", "locomo", "--data", str(data), "--json", str(out), "--data-dir", str(tmp_path / "acm")],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "syn-a: 10 turns ingested" in proc.stdout and "syn-b: 10 turns ingested" in proc.stdout, proc.stdout
    assert "5/5 questions" in proc.stdout and "3/3 questions" in proc.stdout, proc.stdout

    result = json.loads(out.read_text())
    assert set(result) == {"systems", "lead_over_best_baseline", "by_conversation", "run"}
    assert set(result["systems"]) == SYSTEMS
    for name, groups in result["systems"].items():
        assert set(groups) == GROUPS, name
        for group, row in groups.items():
            assert set(row) == METRICS, (name, group)
        assert groups["all"]["n"] == 8, name  # the question without evidence is skipped
        assert [groups[g]["n"] for g in ("1", "2", "3", "4", "5")] == [2, 2, 1, 2, 1], name
        for metric in METRICS - {"n"}:
            value = groups["all"][metric]
            assert isinstance(value, float) and value >= 0, (name, metric, value)
        assert groups["all"]["fetch_p95_ms"] >= groups["all"]["fetch_p50_ms"], name
        # The verbatim question (category 3) is found, in the bundle and among the first five items.
        assert groups["3"]["recall_1000"] == 100.0, (name, groups["3"])
        assert groups["3"]["recall_at_5"] == 100.0, (name, groups["3"])

    # Per conversation: the same recall@1000 groups; the one verbatim question sits in syn-a.
    assert set(result["by_conversation"]) == {"syn-a", "syn-b"}
    for sample, systems in result["by_conversation"].items():
        assert set(systems) == SYSTEMS, sample
        for name, groups in systems.items():
            assert set(groups) == GROUPS, (sample, name)
            assert groups["3"] == (100.0 if sample == "syn-a" else None), (sample, name, groups)
    assert "syn-a recall@1000: acm " in proc.stdout, proc.stdout
    lead = result["lead_over_best_baseline"]
    assert set(lead) == {"all", "1", "2"} and all(row["baseline"] in SYSTEMS - {"acm"} for row in lead.values())
    assert "ACM − best baseline (recall@1000): " in proc.stdout, proc.stdout

    run = result["run"]
    assert run["data"] == data.name and run["encoding"] == "o200k_base" and run["embedder"]
    assert run["conversations"] == 2 and run["turns"] == 20 and run["questions"] == 8
    assert run["skipped_no_evidence"] == 1
    assert sorted(run["evidence_normalised"]) == ["D1:03", "D1:2; D1:4", "D:2:3"]
    assert run["ingest_ms_per_turn"] > 0 and run["ingest_job_p50_ms"] > 0
    assert set(run["mean_bundle_tokens"]) == SYSTEMS
    for name, tokens in run["mean_bundle_tokens"].items():
        assert 0 < tokens["1000"] <= 1000 and 0 < tokens["2000"] <= 2000, name
    assert run["started_at"] and run["duration_s"] > 0
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out.parent / "locomo.png").stat().st_size > 0

    # scripts/bench/retrieval_channels.py reads the folder the bench ingested: every evidence turn counted,
    # each either in the bundle or missed (in a candidate list or in none).
    channels_out = tmp_path / "results" / "channels.json"
    script = Path(__file__).resolve().parents[2] / "scripts" / "bench" / "retrieval_channels.py"
    proc = subprocess.run(
        [
            sys.executable,
            str(script),
            "--data",
            str(data),
            "--data-dir",
            str(tmp_path / "acm"),
            "--out",
            str(channels_out),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(channels_out.read_text())["by_category"]
    everything = summary["all"]
    assert everything["evidence"] == 10  # the D1:2; D1:4 pair counts as two turns
    assert everything["in_bundle"] + everything.get("missed", 0) == 10
    assert everything.get("missed", 0) == everything.get("missed_in_a_list", 0) + everything.get("missed_in_no_list", 0)
    assert summary["3 open-domain"]["in_bundle"] == 1  # the verbatim question
