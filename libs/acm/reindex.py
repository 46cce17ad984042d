"""Re-index: rebuild the vector index from the stored memories with the configured embedder.

Vectors carry their model (VectorPoint.model) and a search compares only vectors of its query's model, so
changing ACM_EMBEDDER leaves the old vectors unseen until this runs (`acm reindex`). It pages through every
memory by id (MemoryRepo.scan), skips turn previews (never indexed) and memories whose point already carries
the model — which makes it resumable: run it again after an interruption and it goes on where it stopped —
embeds the rest as ingest does (a reply after the question it answers, acm.domain.facts.in_context) and
upserts them. A model of another dimension resets the collection first (the reset happens once: on a
re-run the dimension already matches).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from acm.domain.facts import in_context, replied_sentence
from acm.domain.models import Layer, Memory, in_own_session, stable_id
from acm.domain.scope import Scope, Tier
from acm.ports.embedder import Embedder
from acm.ports.stores import MemoryRepo, VectorPoint, VectorStore


@dataclass
class Progress:
    model: str
    expected: int  # points in the index when the re-index started (its size, roughly what is to do)
    scanned: int = 0  # memories read
    embedded: int = 0  # vectors computed and written
    kept: int = 0  # already carried the model (a previous, interrupted run)
    reset: bool = False  # the collection was recreated for another dimension
    started: float = field(default_factory=time.perf_counter)

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - self.started

    def line(self) -> str:
        rate = self.embedded / self.elapsed_s if self.elapsed_s > 0 else 0.0
        done = self.embedded + self.kept
        share = f" of ~{self.expected} ({100 * min(done / self.expected, 1):.0f} %)" if self.expected else ""
        return (
            f"reindex {self.model}: {done}{share} indexed ({self.embedded} embedded, {self.kept} already), "
            f"{self.scanned} memories read, {rate:.0f}/s, {self.elapsed_s:.0f} s"
        )


def is_turn_preview(m: Memory) -> bool:
    """A turn's SHORT preview (or flagged episode): stored for the session, never in the vector index."""
    return bool(m.source_turn_ids) and m.memory_id == stable_id(m.owner.client_id, "turn", m.source_turn_ids[0])


async def _contexts(memories: MemoryRepo, facts: Sequence[Memory]) -> dict[str, str]:
    """memory_id → the question its turn answered (the previous turn's last sentence, asked by someone else),
    as ingest computed it; found for user-tier facts of a session (their writer's own turns)."""
    by_owner: dict[tuple[str, str, str], list[Memory]] = {}
    for m in facts:
        if m.session_id and m.owner.tier is Tier.USER:
            by_owner.setdefault((m.owner.client_id, m.owner.customer_id, m.owner.user_id), []).append(m)
    asked: dict[str, str] = {}
    for (client, customer, user), anchors in by_owner.items():
        scope = Scope(client, customer, user)
        neighbours = await memories.turn_neighbours(scope, anchors, (Layer.SHORT,))
        turns = sorted((n for n in neighbours if is_turn_preview(n)), key=lambda n: n.created_at)
        for m in anchors:
            if not in_own_session(scope, m):
                continue
            before = [t for t in turns if t.session_id == m.session_id and t.created_at < m.created_at]
            if before:
                speaker = m.text.partition(": ")[0]
                asked[m.memory_id] = replied_sentence(before[-1].text, speaker)
    return asked


async def reindex(
    memories: MemoryRepo,
    vectors: VectorStore,
    embedder: Embedder,
    *,
    batch: int = 256,
    report: Callable[[Progress], None] | None = None,
) -> Progress:
    """Make the vector index hold, for every stored memory that is not a turn preview, its vector by
    ``embedder``, tagged with its model. Returns the final progress."""
    model = embedder.name
    try:
        await vectors.ensure(embedder.dim)
        other_dimension = False
    except ValueError:  # another dimension: the old vectors cannot stay in this collection
        other_dimension = True
    progress = Progress(model=model, expected=await vectors.count(), reset=other_dimension)
    if other_dimension:
        await vectors.reset(embedder.dim)
    after = ""
    while page := await memories.scan(after, batch):
        after = page[-1].memory_id
        progress.scanned += len(page)
        facts = [m for m in page if not is_turn_preview(m)]
        have = await vectors.models_of([m.memory_id for m in facts])
        todo = [m for m in facts if have.get(m.memory_id) != model]
        progress.kept += len(facts) - len(todo)
        if todo:
            asked = await _contexts(memories, todo)
            texts = [in_context(m.text, asked.get(m.memory_id, "")) for m in todo]
            embedded = await asyncio.to_thread(embedder.embed, texts)
            await vectors.upsert(
                [
                    VectorPoint(m.memory_id, v, m.owner, m.layer, m.created_at, m.session_id, model)
                    for m, v in zip(todo, embedded, strict=True)
                ]
            )
            progress.embedded += len(todo)
        if report is not None:
            report(progress)
    return progress


async def other_models(vectors: VectorStore, model: str) -> int:
    """Points in the index that are not ``model``'s: searches ignore them until `acm reindex` runs."""
    return await vectors.count() - await vectors.count(model)


async def warn_other_models(vectors: VectorStore, model: str, log: logging.Logger) -> int:
    """At start-up: say so when the index holds vectors that the configured embedder's searches ignore."""
    stale = await other_models(vectors, model)
    if stale:
        log.warning(
            "the vector index holds %d vectors of another embedding model than %s (ACM_EMBEDDER); searches ignore "
            "them until `acm reindex` rebuilds the index",
            stale,
            model,
        )
    return stale
