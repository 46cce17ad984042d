"""Where the evidence that Fetch misses sits: in which of retrieval's candidate lists (keyword, vector, graph),
at what rank, and at what rank after fusion and re-scoring. Tells a fusion problem (the evidence is a
candidate but ranked too low to fit the budget) from a candidate problem (no list found it).

Runs on an embedded ACM data folder that `acm bench locomo --data-dir DIR` has ingested, asks every question
once at 1,000 tokens, and wraps the fusion step at run time to see its input lists (no product code changes).
Prints a table per category; writes results/retrieval_channels.json.

    .venv/bin/acm bench locomo --data ../shared/data/locomo-dev.json --data-dir /var/tmp/acm-locomo
    .venv/bin/python scripts/bench/retrieval_channels.py --data ../shared/data/locomo-dev.json \
        --data-dir /var/tmp/acm-locomo [--out results/retrieval_channels.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from _results import write_results

import acm_benchmarks.locomo as locomo
import acm_retrieve.usecases as retrieve_usecases

BUDGET = 1000
CHANNELS = ("keyword", "vector", "graph")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


class Capture:
    """The last Retrieve call's candidate lists (fusion input) and its final order (re-scoring output)."""

    def __init__(self) -> None:
        self.lists: dict[str, list[str]] = {}
        self.final: list[str] = []
        fuse, rescore = retrieve_usecases.weighted_rrf, retrieve_usecases.rescore

        def fused(rankings: dict[str, Sequence[str]], *args: Any) -> dict[str, float]:
            self.lists = {name: list(ids) for name, ids in rankings.items()}
            return fuse(rankings, *args)

        def rescored(*args: Any) -> list[tuple[str, float]]:
            out = rescore(*args)
            self.final = [memory_id for memory_id, _ in out]
            return out

        retrieve_usecases.weighted_rrf = fused  # type: ignore[assignment]
        retrieve_usecases.rescore = rescored  # type: ignore[assignment]


async def ask_all(data: Path, data_dir: Path, capture: Capture) -> list[dict[str, Any]]:
    from acm.client import AcmClient
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

    rows = []
    settings = EmbeddedSettings(data_dir=data_dir, listen_addr="127.0.0.1:0")
    async with EmbeddedAcm(settings) as acm, AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client:
        for conv in locomo.load_conversations(data):
            if not (data_dir / f"ingested-{conv.sample_id}").exists():
                raise SystemExit(f"{conv.sample_id} is not ingested in {data_dir}: run acm bench locomo first")
            for question in conv.questions:
                response = await client.fetch(locomo._scope(conv.sample_id), question.text, BUDGET, "o200k_base")
                bundle = {t for m in response.memories for t in m.source_turn_ids}
                rows.append(
                    {
                        "category": question.category,
                        "question": question.text,
                        "evidence": list(question.evidence),
                        "in_bundle": [e for e in question.evidence if e in bundle],
                        "lists": capture.lists,
                        "final": capture.final,
                    }
                )
        print(f"asked {len(rows)} questions", file=sys.stderr)
    return rows


def first_rank(ids: Sequence[str], turn: str, turns_of: Mapping[str, Sequence[str]]) -> int | None:
    return next((i for i, m in enumerate(ids, start=1) if turn in turns_of.get(m, ())), None)


def summarise(rows: Sequence[dict[str, Any]], turns_of: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    by_category: dict[str, Counter[str]] = defaultdict(Counter)
    final_ranks: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        name = f"{row['category']} {CATEGORIES.get(row['category'], '?')}"
        for key in (name, "all"):
            c = by_category[key]
            for turn in row["evidence"]:
                c["evidence"] += 1
                if turn in row["in_bundle"]:
                    c["in_bundle"] += 1
                    continue
                c["missed"] += 1
                found = [ch for ch in CHANNELS if first_rank(row["lists"].get(ch, ()), turn, turns_of)]
                c["missed_in_a_list" if found else "missed_in_no_list"] += 1
                for ch in found:
                    c[f"missed_in_{ch}"] += 1
                rank = first_rank(row["final"], turn, turns_of)
                if found and rank is not None:
                    final_ranks[key].append(rank)
    return {
        key: {
            **dict(c),
            "list_depth": max((len(ids) for r in rows for ids in r["lists"].values()), default=0),
            "final_rank_of_missed_candidates_p50": statistics.median(final_ranks[key]) if final_ranks[key] else None,
        }
        for key, c in sorted(by_category.items())
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", type=Path, required=True, help="the LoCoMo-format file the folder was ingested from")
    p.add_argument("--data-dir", type=Path, required=True, help="embedded ACM data ingested by acm bench locomo")
    p.add_argument("--out", type=Path, default=Path("results/retrieval_channels.json"))
    args = p.parse_args()
    rows = asyncio.run(ask_all(args.data, args.data_dir, Capture()))
    db = sqlite3.connect(f"file:{args.data_dir / 'ingest.db'}?mode=ro", uri=True)
    turns_of = {mid: json.loads(turns) for mid, turns in db.execute("SELECT memory_id, source_turn_ids FROM memories")}
    summary = summarise(rows, turns_of)
    header = ("category", "evidence", "in bundle", "missed", "in no list", "in a list", *CHANNELS, "rank p50")
    print(" | ".join(header))
    for key, s in summary.items():
        cells = [key, s.get("evidence", 0), s.get("in_bundle", 0), s.get("missed", 0), s.get("missed_in_no_list", 0)]
        cells += [s.get("missed_in_a_list", 0), *(s.get(f"missed_in_{ch}", 0) for ch in CHANNELS)]
        cells.append(s["final_rank_of_missed_candidates_p50"])
        print(" | ".join(str(c) for c in cells))
    print(f"(lists are at most {summary['all']['list_depth']} deep; 'rank p50': where missed candidates end up)")
    write_results(args.out, {"budget_tokens": BUDGET, "by_category": summary})


if __name__ == "__main__":
    main()
