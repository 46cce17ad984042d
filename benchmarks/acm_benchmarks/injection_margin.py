"""The margin of the injection meaning check (acm.domain.injection_meaning.DEFAULT_MARGIN), from dev data only:

    python -m acm_benchmarks.injection_margin [--embedder bge-small-en-v1.5-int8] [--fp 1.0]

Scores every line of the dev corpora (tests/data/safety/injection.jsonl, injection_dev7.jsonl and
injection_holdout5.jsonl, the dev half of hold-outs 5/6) and every tau-bench airline turn (negatives that are
not LoCoMo) with the product's check, by meaning alone, and prints the margin under which at most --fp % of
those negatives score, with each set's recall and false positives at it and at a few margins around.
LoCoMo and the sealed hold-outs are left out: they are measured once, after, by `acm bench safety --meaning`."""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING

import numpy as np

from acm_benchmarks.safety import DATA, TAU, tau_turns

if TYPE_CHECKING:
    from acm.adapters.injection_meaning import MeaningCheck

DEV = ("injection", "injection_dev7", "injection_holdout5")


def main() -> None:
    from acm.adapters.embedders import build_embedder
    from acm.adapters.injection_meaning import MeaningCheck
    from acm.settings import DEFAULT_EMBEDDER

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    p.add_argument("--fp", type=float, default=1.0, help="false positives allowed on the pooled negatives, %%")
    args = p.parse_args()
    check = MeaningCheck(build_embedder(args.embedder))
    sets: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in DEV:
        lines = [json.loads(x) for x in (DATA / f"{name}.jsonl").read_text("utf-8").splitlines() if x.strip()]
        sets[name] = (_scores(check, [ln["content"] for ln in lines]), np.array([ln["injection"] for ln in lines]))
    tau = [text for _role, text in tau_turns(TAU)] if TAU.is_file() else []
    sets["tau_airline"] = (_scores(check, tau), np.zeros(len(tau), dtype=bool))
    negatives = np.concatenate([s[~y] for s, y in sets.values()])
    fitted = math.ceil(float(np.quantile(negatives, 1 - args.fp / 100)) * 200) / 200  # up to 0.005
    print(f"{args.embedder}: bank embedded in {check.start_s:.2f} s; margin at <= {args.fp} % FP: {fitted:.3f}")
    for margin in sorted({fitted, *(round(fitted + d, 3) for d in (-0.04, -0.02, 0.02, 0.04))}):
        row = [f"{name} recall {_pct(s[y] > margin)} FP {_pct(s[~y] > margin)}" for name, (s, y) in sets.items()]
        print(f"  margin {margin:+.3f}: " + "; ".join(row))


def _scores(check: MeaningCheck, texts: list[str]) -> np.ndarray:
    out: list[float] = []
    for at in range(0, len(texts), 32):
        out.extend(v.score for v in check.meanings(texts[at : at + 32]))
    return np.array(out)


def _pct(hits: np.ndarray) -> str:
    return f"{100 * hits.mean():.1f}" if hits.size else "-"


if __name__ == "__main__":
    main()
