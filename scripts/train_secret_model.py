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

from acm.domain.secret_model import (
    CROWD,
    DIM,
    WEIGHTS_FILE,
    SecretModel,
    candidates,
    crowded,
    feature_index,
    features,
    from_json,
)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "libs/acm/domain" / WEIGHTS_FILE


def _generator() -> dict[str, Any]:
    return runpy.run_path(str(ROOT / "tests/data/safety/make_train_secrets.py"))


def _artifacts() -> dict[str, Any]:
    """Whole technical artifacts, many ids and few secrets: hard negatives, and the dev measure of false flags."""
    return runpy.run_path(str(ROOT / "tests/data/safety/make_train_artifacts.py"))


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


def class_weights(y: np.ndarray, family: np.ndarray) -> np.ndarray:
    """Each class half the weight, shared equally by its candidates."""
    pos = y.sum()
    return np.where(y > 0, 0.5 / max(pos, 1), 0.5 / max(len(y) - pos, 1))


def family_weights(y: np.ndarray, family: np.ndarray) -> np.ndarray:
    """Each class half the weight, shared equally by the families that have candidates of it: the artifacts'
    tens of thousands of ids do not drown the chat negatives ("awesome!", prices) a family at a time."""
    out = np.zeros(len(y))
    for label in (0.0, 1.0):
        in_class = y == label
        fams = np.unique(family[in_class])
        for fam in fams:
            mask = in_class & (family == fam)
            out[mask] = 0.5 / len(fams) / mask.sum()
    return out


def fit(
    rows: np.ndarray, cols: np.ndarray, y: np.ndarray, l2: float, steps: int, lr: float, sample: np.ndarray
) -> tuple[np.ndarray, float]:
    n = len(y)
    w = np.zeros(DIM)
    b = 0.0
    m_w, v_w = np.zeros(DIM), np.zeros(DIM)
    m_b = v_b = 0.0
    beta1, beta2, eps = 0.9, 0.999, 1e-8
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


def crowd_threshold(model: SecretModel, seed: int, precision: float, grid: list[float]) -> float:
    """The lowest threshold keeping `precision` on what the model would add to the rules (candidates no rule found)
    inside whole artifacts (CROWD) of generated artifacts of `seed`; 1.0 (silent there) when none does."""
    from acm.domain.pii import PiiRules, find_spans

    rules_only = PiiRules(secret_model=False)
    probs: list[float] = []
    labels: list[bool] = []
    for ex in _artifacts()["generate"](seed):
        text, low = ex["text"], ex["text"].lower()
        cands = list(candidates(text))
        starts = [c.start for c in cands]
        ruled = find_spans(text, rules_only)
        for cand in cands:
            if any(cand.start < e and cand.end > s for s, e, _k in ruled):
                continue
            if len(cands) >= CROWD and crowded(starts, cand):
                probs.append(model.probability(text, low, cand))
                labels.append(any(cand.start < e and cand.end > s for s, e in ex["spans"]))
    p, y = np.asarray(probs), np.asarray(labels, dtype=np.float64)
    return next((t for t in grid if (p >= t).any() and _pr(p, y, t)[0] >= precision), 1.0)


def artifact_flags(model: SecretModel, seed: int) -> tuple[int, int, int, int]:
    """(false flags, ids, secrets found, secrets) of `model` alone on generated artifacts of another seed than any
    trained on: whole logs, dumps and records with many ids and few secrets."""
    false = ids = found = secrets = 0
    for ex in _artifacts()["generate"](seed + 1000):
        flagged = list(model.spans(ex["text"]))
        for cand in candidates(ex["text"]):
            label = any(cand.start < e and cand.end > s for s, e in ex["spans"])
            hit = any(cand.start < e and cand.end > s for s, e, _p in flagged)
            secrets += label
            found += label and hit
            ids += not label
            false += hit and not label
    return false, ids, found, secrets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--l2", type=float, default=1e-5)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--precision", type=float, default=0.98, help="dev precision the threshold must keep")
    parser.add_argument("--dropout", type=float, default=0.5, help="share of context features dropped in copies")
    parser.add_argument("--artifacts", type=int, default=0, help="artifacts per family trained on (0: none)")
    parser.add_argument("--weighting", choices=("class", "family"), default="class", help="how candidates share weight")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()

    weigh = family_weights if args.weighting == "family" else class_weights
    examples = _generator()["generate"](args.seed)
    if args.artifacts:
        examples += _artifacts()["generate"](args.seed, args.artifacts)
    data = vectorise(examples, args.dropout, args.seed)
    train = data["split"] == "train"
    print(
        f"{len(examples)} examples, {len(data['y'])} candidates ({int(data['y'].sum())} secrets); "
        f"train {int(train.sum())}, dev {int((~train).sum())}"
    )
    rows, cols, y = _select(data, train)
    w, b = fit(rows, cols, y, args.l2, args.steps, args.lr, weigh(y, data["family"][train]))
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
    by_family: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for fam, prob, label in zip(data["family"][~train], p_dev, d_y, strict=True):
        flagged = prob >= threshold
        by_family[str(fam)][0] += int(label > 0 and flagged)
        by_family[str(fam)][1] += int(label > 0)
        by_family[str(fam)][2] += int(label == 0 and flagged)
        by_family[str(fam)][3] += int(label == 0)
    for fam, (hit, gold, false, ids) in sorted(by_family.items()):
        print(f"  dev {fam}: recall {hit}/{gold}, false positives {false} of {ids}")
    art = [v for f, v in by_family.items() if f.startswith("artifact:")]
    if art:
        hit, gold, false, ids = (sum(col) for col in zip(*art, strict=True))
        rate = 1000 * false / max(ids, 1)
        print(f"dev artifacts: {rate:.2f} false flags per 1,000 ids ({false} of {ids}); secrets found {hit}/{gold}")
    if args.dry_run:
        return
    # The shipped model: the same settings refitted on every family (dev ones included), the dev threshold kept.
    everything = vectorise([{**ex, "split": "train"} for ex in examples], args.dropout, args.seed)
    rows, cols, y = everything["rows"], everything["cols"], everything["y"]
    w, b = fit(rows, cols, y, args.l2, args.steps, args.lr, weigh(y, everything["family"]))
    p_all = 1.0 / (1.0 + np.exp(-_scores(rows, cols, len(y), w, b)))
    ap, ar = _pr(p_all, y, threshold)
    print(f"refitted on all families: precision {ap:.4f} recall {ar:.4f} (training data, an upper bound)")
    nonzero = {int(i): round(float(w[i]), 4) for i in np.flatnonzero(np.abs(w) >= 1e-4)}
    fine = [round(float(t), 4) for t in np.arange(threshold, 0.99995, 0.0001)]
    crowd = crowd_threshold(SecretModel(nonzero, round(b, 4), threshold), args.seed, args.precision, fine)
    print(f"crowd threshold (inside whole artifacts, seed {args.seed}): {crowd}")
    OUT.write_text(
        json.dumps(
            {
                "about": "acm.domain.secret_model weights: scripts/train_secret_model.py "
                f"--seed {args.seed} --l2 {args.l2} --steps {args.steps} --lr {args.lr} --dropout {args.dropout} "
                f"--precision {args.precision} --artifacts {args.artifacts} --weighting {args.weighting}",
                "dim": DIM,
                "bias": round(b, 4),
                "threshold": threshold,
                "crowd_threshold": crowd,
                "dev": {"precision": round(dp, 4), "recall": round(dr, 4)},
                "weights": nonzero,
            },
            separators=(",", ":"),
        )
        + "\n"
    )
    print(f"wrote {OUT} ({len(nonzero)} weights, {OUT.stat().st_size} bytes)")
    shipped_model = from_json(json.loads(OUT.read_text("utf-8")))
    flags, lines = prose_flags(shipped_model)
    print(f"technical prose (installed packages' METADATA): {flags} flags in {lines} lines")
    false, ids, found, secrets = artifact_flags(shipped_model, args.seed)
    print(
        f"artifacts (seed {args.seed + 1000}): {1000 * false / max(ids, 1):.2f} false flags per 1,000 ids "
        f"({false} of {ids}); secrets found by the model alone {found} of {secrets}"
    )


if __name__ == "__main__":
    main()
