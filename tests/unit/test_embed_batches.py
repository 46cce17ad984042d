"""acm_ingest.embedding.EmbedBatches: concurrent turns' texts go to the embedder together, each turn gets its
own vectors back, and a failure reaches every turn of the batch."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from acm_ingest.embedding import EmbedBatches


class Recording:
    """An embedder whose vector of a text is [len(text)]; records each call's texts."""

    name = "recording"
    dim = 1

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self._fail = fail

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        if self._fail:
            raise RuntimeError("model crashed")
        return [[float(len(t))] for t in texts]

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed(texts)


async def test_concurrent_requests_share_one_embedder_call_and_get_their_own_vectors() -> None:
    embedder = Recording()
    batches = EmbedBatches(embedder)

    got = await asyncio.gather(batches.embed(["a", "bb"]), batches.embed(["ccc"]), batches.embed(["dddd", "e"]))

    assert got == [[[1.0], [2.0]], [[3.0]], [[4.0], [1.0]]]
    assert embedder.calls == [["a", "bb", "ccc", "dddd", "e"]]


async def test_a_batch_stops_at_max_texts_and_the_rest_follows() -> None:
    embedder = Recording()
    batches = EmbedBatches(embedder, max_texts=3)

    got = await asyncio.gather(batches.embed(["a", "b"]), batches.embed(["cc", "dd"]), batches.embed(["eee"]))

    assert got == [[[1.0], [1.0]], [[2.0], [2.0]], [[3.0]]]
    assert embedder.calls == [["a", "b"], ["cc", "dd", "eee"]]


async def test_a_failed_call_fails_every_request_in_it_and_the_next_ones_still_run() -> None:
    embedder = Recording(fail=True)
    batches = EmbedBatches(embedder)

    results = await asyncio.gather(batches.embed(["a"]), batches.embed(["b"]), return_exceptions=True)
    assert [str(r) for r in results] == ["model crashed", "model crashed"]

    embedder._fail = False  # the model is back: the same batcher embeds again
    assert await batches.embed(["yy"]) == [[2.0]]
    assert embedder.calls == [["a", "b"], ["yy"]]
