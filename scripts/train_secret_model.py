"""Train the learned secret detector (acm.domain.secret_model) and write its weights into the package.

Seeded and deterministic: the examples come from tests/data/safety/make_train_secrets.py (families split into
train and dev), the model is L2-regularised logistic regression fitted with full-batch Adam in numpy, and the
threshold is the lowest on the dev split (families never trained on) that keeps dev precision >= --precision.

    .venv/bin/python scripts/train_secret_model.py            # writes libs/acm/domain/secret_model.json
    .venv/bin/python scripts/train_secret_model.py --dry-run  # figures only
"""

from __future__ import annotations

import argparse
import json
import random
import runpy
from collections import defaultdict
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from acm.domain.secret_model import DIM, WEIGHTS_FILE, SecretModel, candidates, feature_index, features, from_json

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "libs/acm/domain" / WEIGHTS_FILE


def _generator() -> dict[str, Any]:
    return runpy.run_path(str(ROOT / "tests/data/safety/make_train_secrets.py"))


# Features of the token itself; the rest (its words, cue, punctuation) are context, dropped in augmented copies.
_SHAPE_PREFIXES = ("bias", "len:", "cls:", "run:", "ent:", "shape:", "dfrac:", "hex", "yearlike", "lead0")


def vectorise(examples: list[dict[str, Any]], dropout: float = 0.0, seed: int = 18) -> dict[str, Any]:
    """Sparse rows (row index, column index) of every candidate, its label, split and family. With `dropout`, each
    training candidate also appears once more with that share of its context features dropped, so that a phrasing
    never seen (its words unknown) still leaves the shape and the remaining words enough weight."""
    rng = np.random.default_rng(seed)
    rows: list[int] = []
    cols: list[int] = []
    labels: list[int] = []
    splits: list[str] = []
    families: list[str] = []
    for ex in examples:
        text = ex["text"]
        low = text.lower()
        for cand in candidates(text):
            label = any(cand.start < e and cand.end > s for s, e in ex["spans"])
            names = features(text, low, cand)
            copies = [names]
            if dropout and ex["split"] == "train":
                keep = rng.random(len(names)) >= dropout
                copies.append([f for f, k in zip(names, keep, strict=True) if k or f.startswith(_SHAPE_PREFIXES)])
            for copy in copies:
                row = len(labels)
                for idx in {feature_index(f) for f in copy}:
                    rows.append(row)
                    cols.append(idx)
                labels.append(int(label))
                splits.append(ex["split"])
                families.append(ex["family"])
    return {
        "rows": np.asarray(rows, dtype=np.int64),
        "cols": np.asarray(cols, dtype=np.int64),
        "y": np.asarray(labels, dtype=np.float64),
        "split": np.asarray(splits),
        "family": np.asarray(families),
    }


def _select(data: dict[str, Any], mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keep_rows = np.flatnonzero(mask)
    remap = -np.ones(len(mask), dtype=np.int64)
    remap[keep_rows] = np.arange(len(keep_rows))
    entry = mask[data["rows"]]
    return remap[data["rows"][entry]], data["cols"][entry], data["y"][keep_rows]


def _scores(rows: np.ndarray, cols: np.ndarray, n: int, w: np.ndarray, b: float) -> np.ndarray:
    return np.bincount(rows, weights=w[cols], minlength=n) + b


def fit(
    rows: np.ndarray, cols: np.ndarray, y: np.ndarray, l2: float, steps: int, lr: float
) -> tuple[np.ndarray, float]:
    n = len(y)
    w = np.zeros(DIM)
    b = 0.0
    m_w, v_w = np.zeros(DIM), np.zeros(DIM)
    m_b = v_b = 0.0
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    # Balance the classes: as many negatives as positives by weight.
    pos = y.sum()
    sample = np.where(y > 0, 0.5 / max(pos, 1), 0.5 / max(n - pos, 1))
    for t in range(1, steps + 1):
        p = 1.0 / (1.0 + np.exp(-_scores(rows, cols, n, w, b)))
        r = (p - y) * sample
        g_w = np.bincount(cols, weights=r[rows], minlength=DIM) + l2 * w
        g_b = float(r.sum())
        m_w = beta1 * m_w + (1 - beta1) * g_w
        v_w = beta2 * v_w + (1 - beta2) * g_w * g_w
        m_b = beta1 * m_b + (1 - beta1) * g_b
        v_b = beta2 * v_b + (1 - beta2) * g_b * g_b
        w -= lr * (m_w / (1 - beta1**t)) / (np.sqrt(v_w / (1 - beta2**t)) + eps)
        b -= lr * (m_b / (1 - beta1**t)) / (np.sqrt(v_b / (1 - beta2**t)) + eps)
        if t % 100 == 0:
            loss = -float(np.sum(sample * (y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))))
            print(f"  step {t}: loss {loss:.4f}", flush=True)
    return w, b


def _pr(p: np.ndarray, y: np.ndarray, threshold: float) -> tuple[float, float]:
    flagged = p >= threshold
    tp = float((flagged & (y > 0)).sum())
    precision = tp / max(float(flagged.sum()), 1.0)
    recall = tp / max(float(y.sum()), 1.0)
    return precision, recall


def prose_flags(model: SecretModel, lines: int = 20000, seed: int = 1) -> tuple[int, int]:
    """(flags, lines) on technical prose with no secrets in it: the METADATA (descriptions, changelogs) of the
    installed Python packages, a negative set written by others that neither the generator nor the rules saw."""
    texts: list[str] = []
    for dist in sorted(metadata.distributions(), key=lambda d: str(d.metadata["Name"]).lower()):
        texts += [ln.strip() for ln in (dist.read_text("METADATA") or "").splitlines() if 20 <= len(ln.strip()) <= 400]
    random.Random(seed).shuffle(texts)
    texts = texts[:lines]
    return sum(1 for text in texts for _ in model.spans(text)), len(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--l2", type=float, default=1e-5)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--precision", type=float, default=0.98, help="dev precision the threshold must keep")
    parser.add_argument("--dropout", type=float, default=0.5, help="share of context features dropped in copies")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()

    examples = _generator()["generate"](args.seed)
    data = vectorise(examples, args.dropout, args.seed)
    train = data["split"] == "train"
    print(
        f"{len(examples)} examples, {len(data['y'])} candidates ({int(data['y'].sum())} secrets); "
        f"train {int(train.sum())}, dev {int((~train).sum())}"
    )
    rows, cols, y = _select(data, train)
    w, b = fit(rows, cols, y, args.l2, args.steps, args.lr)
    d_rows, d_cols, d_y = _select(data, ~train)
    p_dev = 1.0 / (1.0 + np.exp(-_scores(d_rows, d_cols, len(d_y), w, b)))
    p_train = 1.0 / (1.0 + np.exp(-_scores(rows, cols, len(y), w, b)))
    grid = [round(float(t), 3) for t in (*np.arange(0.30, 0.99, 0.01), *np.arange(0.99, 0.9995, 0.001))]
    threshold = next((t for t in grid if _pr(p_dev, d_y, t)[0] >= args.precision), grid[-1])
    for t in (0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995):
        print(f"  dev at {t}: precision {_pr(p_dev, d_y, t)[0]:.4f} recall {_pr(p_dev, d_y, t)[1]:.4f}")
    dp, dr = _pr(p_dev, d_y, threshold)
    tp_, tr_ = _pr(p_train, y, threshold)
    print(f"threshold {threshold}: dev precision {dp:.4f} recall {dr:.4f}; train precision {tp_:.4f} recall {tr_:.4f}")
    by_family: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for fam, prob, label in zip(data["family"][~train], p_dev, d_y, strict=True):
        flagged = prob >= threshold
        by_family[str(fam)][0] += int(label > 0 and flagged)
        by_family[str(fam)][1] += int(label > 0)
        by_family[str(fam)][2] += int(label == 0 and flagged)
    for fam, (hit, gold, false) in sorted(by_family.items()):
        print(f"  dev {fam}: recall {hit}/{gold}, false positives {false}")
    if args.dry_run:
        return
    # The shipped model: the same settings refitted on every family (dev ones included), the dev threshold kept.
    everything = vectorise([{**ex, "split": "train"} for ex in examples], args.dropout, args.seed)
    rows, cols, y = everything["rows"], everything["cols"], everything["y"]
    w, b = fit(rows, cols, y, args.l2, args.steps, args.lr)
    p_all = 1.0 / (1.0 + np.exp(-_scores(rows, cols, len(y), w, b)))
    ap, ar = _pr(p_all, y, threshold)
    print(f"refitted on all families: precision {ap:.4f} recall {ar:.4f} (training data, an upper bound)")
    nonzero = {int(i): round(float(w[i]), 4) for i in np.flatnonzero(np.abs(w) >= 1e-4)}
    OUT.write_text(
        json.dumps(
            {
                "about": "acm.domain.secret_model weights: scripts/train_secret_model.py "
                f"--seed {args.seed} --l2 {args.l2} --steps {args.steps} --lr {args.lr} --dropout {args.dropout} "
                f"--precision {args.precision}",
                "dim": DIM,
                "bias": round(b, 4),
                "threshold": threshold,
                "dev": {"precision": round(dp, 4), "recall": round(dr, 4)},
                "weights": nonzero,
            },
            separators=(",", ":"),
        )
        + "\n"
    )
    print(f"wrote {OUT} ({len(nonzero)} weights, {OUT.stat().st_size} bytes)")
    flags, lines = prose_flags(from_json(json.loads(OUT.read_text("utf-8"))))
    print(f"technical prose (installed packages' METADATA): {flags} flags in {lines} lines")


if __name__ == "__main__":
    main()
