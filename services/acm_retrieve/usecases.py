"""Retrieval: keyword and vector candidates in the reader's scope, fused by RRF, packed in a budget."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from acm.domain.models import Memory
from acm.domain.ranking import reciprocal_rank_fusion
from acm.domain.scope import Scope, Tier
from acm.domain.tokens import DEFAULT_ENCODING, TokenCounter, pack
from acm.ports.embedder import Embedder
from acm.ports.stores import MemoryRepo, VectorStore


@dataclass(frozen=True, slots=True)
class Retrieved:
    memory: Memory
    tokens: int
    score: float


@dataclass(frozen=True, slots=True)
class Bundle:
    items: list[Retrieved]
    total_tokens: int
    dropped: int


@dataclass
class Retrieve:
    memories: MemoryRepo
    vectors: VectorStore
    embedder: Embedder
    tokens: TokenCounter
    candidates: int

    async def __call__(
        self, scope: Scope, query: str, budget: int, tiers: tuple[Tier, ...], encoding: str = DEFAULT_ENCODING
    ) -> Bundle:
        if query.strip():
            vector = (await asyncio.to_thread(self.embedder.embed, [query]))[0]
            keyword, nearest = await asyncio.gather(
                self.memories.keyword_search(scope, query, self.candidates, tiers),
                self.vectors.search(scope, vector, self.candidates, tiers),
            )
            fused = reciprocal_rank_fusion(
                [[s.memory.memory_id for s in keyword], [memory_id for memory_id, _ in nearest]]
            )
            known = {s.memory.memory_id: s.memory for s in keyword}
            missing = [mid for mid, _ in fused if mid not in known]
            # The store checks the scope again: a vector hit never bypasses visibility.
            for memory in await self.memories.get(scope, missing):
                known[memory.memory_id] = memory
            ranked = [(known[mid], score) for mid, score in fused if mid in known and _active(known[mid])]
        elif scope.session_id:
            # No query: the session's latest turns are the best guess at what matters.
            recent = await self.memories.session_memories(scope, self.candidates)
            ranked = [(m, 1.0 / (i + 1)) for i, m in enumerate(recent) if m.tier in tiers]
        else:
            ranked = []
        sizes = [
            m.token_count if encoding == DEFAULT_ENCODING and m.token_count else self.tokens.count(m.text, encoding)
            for m, _ in ranked
        ]
        packed = pack(ranked, sizes, budget)
        items = [Retrieved(m, size, score) for (m, score), size in packed.items]
        return Bundle(items, packed.total_tokens, packed.dropped)


def _active(memory: Memory) -> bool:
    return memory.status.value == "active"
