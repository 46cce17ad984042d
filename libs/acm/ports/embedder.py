"""Embedding port: text → unit-length vectors (cosine similarity is a dot product).

Documents (memories) and queries may be embedded differently: bge models prefix a query with an instruction,
symmetric models (all-MiniLM-L6-v2) embed both the same way. ``name`` is recorded with every vector, so a
search only ever compares vectors of one model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    @property
    def name(self) -> str:
        """The model's name, as ACM_EMBEDDER spells it; stored with every vector it made."""

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of documents (what is stored and searched)."""

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of search queries, comparable with embed()'s."""
