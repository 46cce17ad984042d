"""The query-vector cache of retrieval: a hit is the vector the embedder gave, keyed by model and text, and
the cache never holds more than its bound (the least recently used goes)."""

from __future__ import annotations

import pytest

from acm_retrieve.usecases import QueryVectors

# float32 values, as the embedders give them: the cache keeps float32 and returns them exactly.
VECTOR = [0.5, -0.25, 0.125, 1.0 / 3.0]


def as_f32(values: list[float]) -> list[float]:
    import numpy as np

    return np.asarray(values, dtype=np.float32).tolist()


def test_a_hit_returns_the_same_vector() -> None:
    cache = QueryVectors(max_entries=4)
    vector = as_f32(VECTOR)
    assert cache.get("m", "where do I work?") is None
    cache.put("m", "where do I work?", vector)
    assert cache.get("m", "where do I work?") == vector


def test_the_model_is_part_of_the_key() -> None:
    cache = QueryVectors(max_entries=4)
    cache.put("bge", "q", as_f32(VECTOR))
    assert cache.get("minilm", "q") is None


def test_the_size_is_bounded_and_the_least_recently_used_goes() -> None:
    cache = QueryVectors(max_entries=2)
    for text in ("a", "b"):
        cache.put("m", text, as_f32(VECTOR))
    assert cache.get("m", "a") is not None  # "a" is now more recent than "b"
    cache.put("m", "c", as_f32(VECTOR))
    assert len(cache) == 2
    assert cache.get("m", "b") is None
    assert cache.get("m", "a") is not None and cache.get("m", "c") is not None


def test_zero_entries_caches_nothing_and_a_negative_bound_is_refused() -> None:
    cache = QueryVectors(max_entries=0)
    cache.put("m", "q", as_f32(VECTOR))
    assert len(cache) == 0 and cache.get("m", "q") is None
    with pytest.raises(ValueError, match="max_entries"):
        QueryVectors(max_entries=-1)
