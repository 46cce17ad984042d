"""Embedding across turns: the turns of a micro-batch are handled concurrently (EventBus.subscribe's
concurrency), and each asks for its facts' vectors; EmbedBatches runs those requests as one embedder call (one
ONNX batch, on one worker thread) instead of one call per turn. A request made while a batch runs joins the
next one, so the batch grows with the load and a lone turn waits for nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from acm.ports.embedder import Embedder


class EmbedBatches:
    def __init__(self, embedder: Embedder, max_texts: int = 256) -> None:
        self.embedder = embedder
        self._max_texts = max_texts
        self._waiting: list[tuple[list[str], asyncio.Future[list[list[float]]]]] = []
        self._runner: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.embedder.name

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The vectors of ``texts`` (documents), embedded with whatever other turns asked for meanwhile."""
        if not texts:
            return []
        done: asyncio.Future[list[list[float]]] = asyncio.get_running_loop().create_future()
        self._waiting.append((list(texts), done))
        if self._runner is None or self._runner.done():
            self._runner = asyncio.create_task(self._run(), name="ingest embedding batches")
        return await done

    async def _run(self) -> None:
        while self._waiting:
            await asyncio.sleep(0)  # the other turns of this micro-batch reach their embedding step first
            batch = self._take()
            texts = [t for wanted, _ in batch for t in wanted]
            try:
                vectors = await asyncio.to_thread(self.embedder.embed, texts)
            except Exception as exc:  # each turn's handler sees the error (retried, then dead-lettered)
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
                continue
            at = 0
            for wanted, done in batch:
                if not done.done():  # a cancelled turn (a stopping consumer) no longer waits
                    done.set_result(vectors[at : at + len(wanted)])
                at += len(wanted)

    def _take(self) -> list[tuple[list[str], asyncio.Future[list[list[float]]]]]:
        """Requests from the front, up to max_texts texts (at least one request)."""
        taken, count = 0, 0
        for wanted, _ in self._waiting:
            if taken and count + len(wanted) > self._max_texts:
                break
            taken += 1
            count += len(wanted)
        batch, self._waiting = self._waiting[:taken], self._waiting[taken:]
        return batch
