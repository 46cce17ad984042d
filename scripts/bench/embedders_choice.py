"""Choosing the default embedder (ACM_EMBEDDER) by measurement: bge-small-en-v1.5 fp32, its int8 form and
all-MiniLM-L6-v2, side by side.

Two sources, one file (results/embedders-choice.json):
  - the benchmarks run once per embedder, one at a time, on one code base (`acm bench locomo --embedder E
    --json ...` and `ACM_EMBEDDER=E acm bench coverage --json ...`), read from --runs DIR
    (locomo-<E>.json, coverage-<E>.json): evidence recall@1000 overall and multi-hop, R@10, answer coverage
    against the whole conversation, ingest ms a turn and Fetch p50 / p95 (both as the benchmarks measured them);
  - the embedders' own speed, measured here in one process, interleaved pass by pass so every model sees
    the same machine, one compute thread each (ACM_COMPUTE_THREADS=1): one LoCoMo question embedded alone as
    a query (what a Fetch does) p50 / p95 ms, and turns in batches of 32 as documents (what ingest does),
    ms a text.
  - Fetch latency side by side (--fetch): the LoCoMo conversations ingested into one embedded ACM per
    embedder, in one process, then every question fetched (budget 2,000) from each in turn, alternating
    which goes first: on a shared host the load changes from minute to minute, and the benchmarks' own
    Fetch p95 (each run minutes apart) mostly measures that; here every embedder sees the same moments.
Then the rule: the default is the embedder with the best recall@1000 among those that meet the cost targets
(ingest ≤ 1.5× MiniLM's a turn, Fetch p95 ≤ 50 ms, the side-by-side p95 when measured), multi-hop breaking
ties.

    .venv/bin/python scripts/bench/embedders_choice.py --runs /tmp/bench [--data ../shared/data/locomo-dev.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _results import write_results

from acm.adapters.embedders import build_embedder

CANDIDATES = ("bge-small-en-v1.5", "bge-small-en-v1.5-int8", "all-minilm-l6-v2")
TODAY = "all-minilm-l6-v2"
QUERIES = 200
TURNS = 320
BATCH = 32
TARGETS = {"ingest_ms_per_turn_vs_today": 1.5, "fetch_p95_ms": 50.0}


def locomo_texts(path: Path) -> tuple[list[str], list[str]]:
    data = json.loads(path.read_text())
    questions = [q["question"] for conv in data for q in conv["qa"] if q.get("question")]
    turns = []
    for conv in data:
        c = conv["conversation"]
        for key in sorted(k for k in c if k.startswith("session_") and not k.endswith("date_time")):
            turns += [f"{t['speaker']}: {t['text']}" for t in c[key] if isinstance(t, dict) and t.get("text")]
    return questions[:QUERIES], turns[:TURNS]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def speed(data: Path, passes: int) -> dict[str, dict[str, float]]:
    questions, turns = locomo_texts(data)
    models = {name: build_embedder(name, 1) for name in CANDIDATES}
    for e in models.values():  # warm up: first runs allocate
        e.embed_query(questions[:5])
        e.embed(turns[:BATCH])
    query_ms: dict[str, list[float]] = {n: [] for n in models}
    doc_ms: dict[str, list[float]] = {n: [] for n in models}
    for p in range(passes):
        for name, e in models.items():
            for q in questions:
                t = time.perf_counter()
                e.embed_query([q])
                query_ms[name].append(1000 * (time.perf_counter() - t))
            t = time.perf_counter()
            for i in range(0, len(turns), BATCH):
                e.embed(turns[i : i + BATCH])
            doc_ms[name].append(1000 * (time.perf_counter() - t) / len(turns))
        print(f"pass {p + 1}/{passes} done", file=sys.stderr, flush=True)
    return {
        n: {
            "query_p50_ms": round(statistics.median(query_ms[n]), 2),
            "query_p95_ms": round(pct(query_ms[n], 95), 2),
            "document_ms_batch32": round(statistics.median(doc_ms[n]), 2),
        }
        for n in models
    }


async def fetch_side_by_side(data: Path, names: tuple[str, ...]) -> dict[str, dict[str, float]]:
    from contextlib import AsyncExitStack

    from acm.client import AcmClient
    from acm_benchmarks.locomo import TIMED_BUDGET, IngestStats, _ingest, _scope, load_conversations
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

    conversations = load_conversations(data)
    latencies: dict[str, list[float]] = {n: [] for n in names}
    ingest: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="acm-embedders-") as tmp:
        async with AsyncExitStack() as stack:
            clients = {}
            for name in names:
                settings = EmbeddedSettings(data_dir=Path(tmp) / name, listen_addr="127.0.0.1:0", embedder=name)
                acm = await stack.enter_async_context(EmbeddedAcm(settings))
                client = await stack.enter_async_context(AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60))
                stats = IngestStats()
                for conv in conversations:
                    await _ingest(client, acm, conv, stats)
                ingest[name] = 1000 * stats.wall_s / max(stats.turns, 1)
                clients[name] = client
                print(f"{name}: ingested, {ingest[name]:.1f} ms a turn", file=sys.stderr, flush=True)
            for i, (conv, q) in enumerate((c, q) for c in conversations for q in c.questions):
                order = names if i % 2 == 0 else tuple(reversed(names))
                for name in order:
                    start = time.perf_counter()
                    await clients[name].fetch(_scope(conv.sample_id), q.text, TIMED_BUDGET, "o200k_base")
                    latencies[name].append(1000 * (time.perf_counter() - start))
    return {
        n: {
            "side_by_side_fetch_p50_ms": round(statistics.median(latencies[n]), 2),
            "side_by_side_fetch_p95_ms": round(pct(latencies[n], 95), 2),
            "side_by_side_fetches": len(latencies[n]),
            "side_by_side_ingest_ms_per_turn": round(ingest[n], 2),
        }
        for n in names
    }


def bench_figures(runs: Path, name: str) -> dict[str, Any]:
    locomo = json.loads((runs / f"locomo-{name}.json").read_text())
    coverage = json.loads((runs / f"coverage-{name}.json").read_text())
    acm = locomo["systems"]["acm"]
    cov = coverage["systems"]
    return {
        "recall_1000": acm["all"]["recall_1000"],
        "recall_1000_multi_hop": acm["1"]["recall_1000"],
        "recall_1000_temporal": acm["2"]["recall_1000"],
        "recall_at_10": acm["all"]["recall_at_10"],
        "vector_baseline_recall_1000": locomo["systems"]["vector"]["all"]["recall_1000"],
        "vector_baseline_recall_at_10": locomo["systems"]["vector"]["all"]["recall_at_10"],
        "coverage_pct": cov["acm"]["coverage_pct"],
        "coverage_gap_to_full_points": cov["acm"]["gap_to_full_points"],
        "coverage_fetch_p95_ms": coverage["run"].get("fetch_p95_ms"),
        "ingest_ms_per_turn": locomo["run"]["ingest_ms_per_turn"],
        "fetch_p50_ms": acm["all"]["fetch_p50_ms"],
        "fetch_p95_ms": acm["all"]["fetch_p95_ms"],
        "locomo_started_at": locomo["run"]["started_at"],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=Path, required=True, help="folder of locomo-<E>.json and coverage-<E>.json")
    p.add_argument("--data", type=Path, default=Path("../shared/data/locomo-dev.json"))
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--fetch", action="store_true", help="also measure Fetch latency side by side (minutes)")
    p.add_argument("--json", dest="out", type=Path, default=Path("results/embedders-choice.json"))
    args = p.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    figures = {name: bench_figures(args.runs, name) for name in CANDIDATES}
    speeds = speed(args.data, args.passes)
    fetches = asyncio.run(fetch_side_by_side(args.data, CANDIDATES)) if args.fetch else {}
    today = figures[TODAY]["ingest_ms_per_turn"]
    for name, f in figures.items():
        f.update(speeds[name])
        f.update(fetches.get(name, {}))
        f["ingest_vs_today"] = round(f["ingest_ms_per_turn"] / today, 2)
        p95 = f.get("side_by_side_fetch_p95_ms", f["fetch_p95_ms"])
        f["meets_cost_targets"] = (
            f["ingest_vs_today"] <= TARGETS["ingest_ms_per_turn_vs_today"] and p95 <= TARGETS["fetch_p95_ms"]
        )
    eligible = [n for n in CANDIDATES if figures[n]["meets_cost_targets"]] or list(CANDIDATES)
    chosen = max(eligible, key=lambda n: (figures[n]["recall_1000"], figures[n]["recall_1000_multi_hop"]))
    width = max(len(n) for n in CANDIDATES)
    print(f"{'embedder':{width}}  r@1000  multi  R@10  cover  ingest ms/turn (x)  fetch p50/p95  query p50/p95  doc ms")
    for n in CANDIDATES:
        f = figures[n]
        cov = f["coverage_pct"]
        print(
            f"{n:{width}}  {f['recall_1000']:6.1f}  {f['recall_1000_multi_hop']:5.1f}  {f['recall_at_10']:4.1f}  "
            f"{cov:5.1f}  {f['ingest_ms_per_turn']:7.1f} ({f['ingest_vs_today']:.2f})  "
            f"{f['fetch_p50_ms']:5.1f}/{f['fetch_p95_ms']:5.1f} "
            f"(side by side {f.get('side_by_side_fetch_p95_ms', '-')})  "
            f"{f['query_p50_ms']:5.2f}/{f['query_p95_ms']:5.2f}  "
            f"{f['document_ms_batch32']:5.2f}"
        )
    print(f"default: {chosen}")
    write_results(
        args.out,
        {
            "data": args.data.name,
            "targets": TARGETS,
            "load_average_at_end": os.getloadavg(),
            "cpus": os.cpu_count(),
            "embedders": figures,
            "chosen": chosen,
        },
    )


if __name__ == "__main__":
    main()
