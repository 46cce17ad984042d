"""Embedders that run on the CPU from weights a package ships (no hub download at run time)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


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


def build_embedder(name: str) -> WordLlamaEmbedder:
    if name in ("wordllama", "wordllama-256"):
        return WordLlamaEmbedder()
    raise ValueError(f"unknown embedder {name!r}; available: wordllama")
