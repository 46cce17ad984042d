"""Would a second shipped embedder help retrieval? Evidence recall@k of raw LoCoMo turns ranked by MiniLM,
by WordLlama, and by their weighted reciprocal-rank fusion (MiniLM 1.0, WordLlama 0.5, k = 60), per
category. Offline: no ACM, only the two embedders over the turns as the benchmark ingests them.

    .venv/bin/python scripts/bench/embedder_fusion.py --data ../shared/data/locomo-dev.json \
        [--out results/embedder_fusion.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _recall import RecallAtK

from acm.adapters.embedders import MiniLMEmbedder, WordLlamaEmbedder
from acm_benchmarks.locomo import load_conversations

KS = (10, 30)
SYSTEMS = ("minilm", "wordllama", "fused")


def ranks(scores: np.ndarray) -> np.ndarray:
    order = np.argsort(-scores)
    out = np.empty(len(scores))
    out[order] = np.arange(len(scores))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--out", type=Path, default=Path("results/embedder_fusion.json"))
    args = p.parse_args()
    mini, wordllama = MiniLMEmbedder(), WordLlamaEmbedder()
    recall = RecallAtK(KS)
    conversations = load_conversations(args.data)
    for n, conv in enumerate(conversations, 1):
        ids = [t.turn_id for t in conv.turns]
        texts = [f"{t.speaker}: {t.content}" for t in conv.turns]
        questions = [q for q in conv.questions if q.evidence]
        turns_1, turns_2 = np.array(mini.embed(texts)), np.array(wordllama.embed(texts))
        asked = [q.text for q in questions]
        q_1, q_2 = np.array(mini.embed(asked)), np.array(wordllama.embed(asked))
        for i, q in enumerate(questions):
            r_1, r_2 = ranks(turns_1 @ q_1[i]), ranks(turns_2 @ q_2[i])
            orders = {
                "minilm": np.argsort(r_1),
                "wordllama": np.argsort(r_2),
                "fused": np.argsort(-(1 / (60 + r_1) + 0.5 / (60 + r_2))),
            }
            recall.add(q.category, q.evidence, ids, orders)
        print(f"{n}/{len(conversations)} conversations", flush=True)
    result = recall.print_table(SYSTEMS)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"data": args.data.name, "recall_pct": result}, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
