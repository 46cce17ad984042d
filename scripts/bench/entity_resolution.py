"""Entity-resolution benchmark: resolve_mention over the hand-written cases in tests/data/entity_resolution.jsonl.

Each case is a mention (with its type and owner) and the candidates the store would offer; ``expected`` is the
entity it denotes, or null when the right answer is a new entity (no candidate is it, or more than one could
be). Reported:

- merge precision: of the merges made (a candidate returned), the share that picked the expected entity;
  a wrong merge mixes two things' facts, so this is the number to keep high;
- merge recall: of the cases where a merge is expected, the share resolved to the expected entity;
- accuracy: cases whose answer (entity or null) is the expected one;
- false merges: merges made where none (or another entity) was expected;
- per category, and the mean time per call.

The table goes to stdout and everything (with each miss) to results/entity_resolution.json.

    .venv/bin/python scripts/bench/entity_resolution.py [--data tests/data/entity_resolution.jsonl]
                                                        [--out results/entity_resolution.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acm.domain.entities import Candidate, Resolution, resolve_mention

ROOT = Path(__file__).resolve().parents[2]


def load(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def candidates_of(case: dict[str, Any]) -> list[Candidate]:
    return [
        Candidate(
            entity_id=c["entity_id"],
            name=c["name"],
            type=c["type"],
            aliases=frozenset(c.get("aliases", ())),
            owner_key=c.get("owner_key", ""),
        )
        for c in case["candidates"]
    ]


def run_case(case: dict[str, Any]) -> Resolution:
    return resolve_mention(case["mention"], case["type"], candidates_of(case), owner_key=case.get("owner_key"))


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def score(rows: list[tuple[dict[str, Any], Resolution]]) -> dict[str, Any]:
    made = sum(1 for _, r in rows if r.entity_id is not None)
    expected = sum(1 for c, _ in rows if c["expected"] is not None)
    correct_merges = sum(1 for c, r in rows if r.entity_id is not None and r.entity_id == c["expected"])
    correct = sum(1 for c, r in rows if r.entity_id == c["expected"])
    return {
        "cases": len(rows),
        "merges_expected": expected,
        "merges_made": made,
        "correct_merges": correct_merges,
        "false_merges": made - correct_merges,
        "missed_merges": expected - correct_merges,
        "merge_precision": _ratio(correct_merges, made),
        "merge_recall": _ratio(correct_merges, expected),
        "accuracy": _ratio(correct, len(rows)),
    }


def _fmt(x: float | None) -> str:
    return "  -  " if x is None else f"{x:.3f}"


def table(overall: dict[str, Any], per_category: dict[str, dict[str, Any]]) -> str:
    head = (
        f"{'category':<20} {'n':>4} {'exp':>4} {'made':>4} {'false':>5} {'miss':>4} "
        f"{'prec':>6} {'recall':>6} {'acc':>6}"
    )
    lines = [head, "-" * len(head)]
    for name, s in [*sorted(per_category.items()), ("ALL", overall)]:
        if name == "ALL":
            lines.append("-" * len(head))
        lines.append(
            f"{name:<20} {s['cases']:>4} {s['merges_expected']:>4} {s['merges_made']:>4} {s['false_merges']:>5} "
            f"{s['missed_merges']:>4} {_fmt(s['merge_precision']):>6} {_fmt(s['merge_recall']):>6} "
            f"{_fmt(s['accuracy']):>6}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=ROOT / "tests/data/entity_resolution.jsonl")
    parser.add_argument("--out", type=Path, default=ROOT / "results/entity_resolution.json")
    parser.add_argument("--repeats", type=int, default=20, help="timing passes over the whole set")
    args = parser.parse_args(argv)

    cases = load(args.data)
    rows = [(case, run_case(case)) for case in cases]

    started = time.perf_counter()
    for _ in range(args.repeats):
        for case in cases:
            run_case(case)
    per_call_us = (time.perf_counter() - started) / max(1, args.repeats * len(cases)) * 1e6

    by_category: dict[str, list[tuple[dict[str, Any], Resolution]]] = defaultdict(list)
    for case, res in rows:
        by_category[case.get("category", "uncategorised")].append((case, res))
    overall = score(rows)
    per_category = {name: score(group) for name, group in by_category.items()}
    misses = [
        {
            "category": case.get("category", ""),
            "mention": case["mention"],
            "type": case["type"],
            "expected": case["expected"],
            "got": res.entity_id,
            "reason": res.reason,
            "note": case.get("note", ""),
        }
        for case, res in rows
        if res.entity_id != case["expected"]
    ]

    print(table(overall, per_category))
    print(f"\nmean time per resolve_mention call: {per_call_us:.1f} µs ({len(cases)} cases x {args.repeats})")
    if misses:
        print("\nmisses:")
        for m in misses:
            where = f"[{m['category']}] {m['mention']!r} ({m['type']})"
            print(f"  {where}: expected {m['expected']}, got {m['got']} ({m['reason']})")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "data": str(args.data.relative_to(ROOT) if args.data.is_relative_to(ROOT) else args.data),
        "python": platform.python_version(),
        "mean_us_per_call": round(per_call_us, 2),
        "overall": overall,
        "per_category": dict(sorted(per_category.items())),
        "misses": misses,
    }
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
