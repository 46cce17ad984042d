"""Retrieval: keyword, vector and entity-graph candidates in the reader's scope, fused, re-scored by
the agent's preset (similarity, recency, frequency, time window), spread to the turns around the best
(the reply that names nothing the question does), packed best-first into the budget."""

from __future__ import annotations

import asyncio
import functools
import re
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from acm.domain.extract import mentions
from acm.domain.identifiers import identifiers, mentions_identifier
from acm.domain.models import Memory, MemoryStatus
from acm.domain.ranking import Candidate, rescore
from acm.domain.retrieval import (
    RetrievalPreset,
    asks,
    exact_first,
    preset,
    semantic_query,
    spread_to_adjacent_turns,
    weighted_rrf,
)
from acm.domain.scope import Scope, Tier
from acm.domain.tokens import DEFAULT_ENCODING, TokenCounter, pack
from acm.ports.embedder import Embedder
from acm.ports.owners import SchemaSource
from acm.ports.stores import GraphStore, MemoryRepo, VectorStore

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
MAX_QUERY_NAMES = 24
# The most memories about the query's entities that the similarity search ranks: a bound on the cost of one
# filtered search (a person in a long history is named in thousands of facts), not a tuning knob.
ANCHOR_POOL = 2000
# Memories read that hold a query's identifier as a phrase of the keyword index ("INC-7" → inc, 7, in order),
# newest first; each is then checked to name it whole.
ID_POOL = 200


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
    preset: str


def query_names(query: str) -> list[str]:
    """Strings that may name an entity: extracted mentions first, then each content word (entities are
    matched case-insensitively by name or alias, so "caroline" finds "Caroline")."""
    return list(_query_names(query))


@functools.lru_cache(maxsize=4096)  # by text (pure): an agent loop asks again what it asked before
def _query_names(query: str) -> tuple[str, ...]:
    names = [m.text for m in mentions(query)]
    names += [w for w in _WORD.findall(query) if w[0].isupper() or len(w) > 3]
    return tuple(dict.fromkeys(names))[:MAX_QUERY_NAMES]


class QueryVectors:
    """The vectors of the most recently embedded queries, by model and text (LRU, at most ``max_entries``):
    an agent loop asks again what it asked before (a retried Fetch, a freshness probe, the same implied
    query while its session has no new turn), and embedding the query is a Fetch's costliest step. Kept as
    float32, what the embedders compute (1.5 kB a 384-d vector). Used from one event loop: no lock."""

    def __init__(self, max_entries: int = 1024) -> None:
        if max_entries < 0:
            raise ValueError(f"max_entries must be at least 0 (got {max_entries})")
        self.max_entries = max_entries
        self._vectors: OrderedDict[tuple[str, str], array[float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._vectors)

    def get(self, model: str, text: str) -> list[float] | None:
        vector = self._vectors.get((model, text))
        if vector is None:
            return None
        self._vectors.move_to_end((model, text))
        return vector.tolist()

    def put(self, model: str, text: str, vector: Sequence[float]) -> None:
        if self.max_entries == 0:
            return
        self._vectors[(model, text)] = array("f", vector)
        self._vectors.move_to_end((model, text))
        while len(self._vectors) > self.max_entries:
            self._vectors.popitem(last=False)


@dataclass
class Retrieve:
    memories: MemoryRepo
    vectors: VectorStore
    graph: GraphStore
    schemas: SchemaSource  # the architect's (acm.ports.owners)
    embedder: Embedder
    tokens: TokenCounter
    query_vectors: QueryVectors = field(default_factory=QueryVectors)  # repeated queries are not embedded again

    async def strategy(self, scope: Scope) -> RetrievalPreset:
        r = (await self.schemas.latest(scope)).retrieval
        return preset(r.preset, r.alpha_similarity, r.beta_recency, r.gamma_frequency)

    async def __call__(
        self,
        scope: Scope,
        query: str,
        budget: int,
        tiers: tuple[Tier, ...],
        encoding: str = DEFAULT_ENCODING,
        window: tuple[datetime, datetime] | None = None,
    ) -> Bundle:
        p = await self.strategy(scope)
        if query.strip():
            ranked = await self._search(scope, query, budget, tiers, p, window)
        elif scope.session_id:
            # No query: the session's latest turns are the best guess at what matters.
            recent = await self.memories.session_memories(scope, p.keyword_k)
            ranked = [(m, 1.0 / (i + 1)) for i, m in enumerate(recent) if m.tier in tiers]
        else:
            ranked = []
        sizes = [
            m.token_count if encoding == DEFAULT_ENCODING and m.token_count else self.tokens.count(m.text, encoding)
            for m, _ in ranked
        ]
        packed = pack(ranked, sizes, budget)
        items = [Retrieved(m, size, score) for (m, score), size in packed.items]
        return Bundle(items, packed.total_tokens, packed.dropped, p.name)

    async def keyword_ids(self, scope: Scope, query: str, limit: int, tiers: tuple[Tier, ...]) -> list[str]:
        """The keyword channel of _search alone: the ids of the ``limit`` memories that best match the query's
        words, in the preset's layers."""
        p = await self.strategy(scope)
        return await self.memories.keyword_ids(scope, query, limit, tiers, p.layers)

    async def _search(
        self,
        scope: Scope,
        query: str,
        budget: int,
        tiers: tuple[Tier, ...],
        p: RetrievalPreset,
        window: tuple[datetime, datetime] | None,
    ) -> list[tuple[Memory, float]]:
        # A bigger budget needs more candidates to fill it (facts are ~20 tokens each).
        wanted = budget // 15

        async def nearest_to_query() -> tuple[list[float], list[tuple[str, float]]]:
            # Embedding the query is the slowest step: keyword and graph search run while it computes, in a
            # worker thread (ONNX Runtime releases the GIL).
            model, text = self.embedder.name, semantic_query(query)  # only vectors of the query's model are compared
            vector = self.query_vectors.get(model, text)
            if vector is None:
                vector = (await asyncio.to_thread(self.embedder.embed_query, [text]))[0]
                self.query_vectors.put(model, text, vector)
            return vector, await self.vectors.search(scope, vector, max(p.vector_k, wanted), tiers, model=model)

        (vector, nearest), keyword, about, exact = await asyncio.gather(
            nearest_to_query(),
            self.memories.keyword_search(scope, query, max(p.keyword_k, wanted), tiers, p.layers),
            self._about_entities(scope, query, tiers, p),
            self._naming(scope, query, tiers, p),
        )
        # The memories about the entities the query names, ranked by what it asks: "what activities does
        # Melanie do" looks for activities among what Melanie said and what was said about her.
        graph: list[str] = []
        if about:
            anchored = await self.vectors.search(
                scope, vector, max(p.graph_k, wanted), tiers, among=about, model=self.embedder.name
            )
            graph = [memory_id for memory_id, _ in anchored]
        fused = weighted_rrf(
            {
                "keyword": [s.memory.memory_id for s in keyword],
                "vector": [memory_id for memory_id, _ in nearest],
                "graph": graph,
            },
            p.list_weights,
            p.rrf_k,
        )
        known = {s.memory.memory_id: s.memory for s in keyword}
        missing = [mid for mid in fused if mid not in known]
        # The store checks the scope again: a vector or graph hit never bypasses visibility.
        for memory in await self.memories.get(scope, missing):
            known[memory.memory_id] = memory
        candidates = [
            Candidate(
                memory_id=mid,
                fused=score,
                at=m.valid_from or m.created_at,
                said_at=m.created_at,
                mentions=m.mention_count,
                accesses=m.access_count,
            )
            for mid, score in fused.items()
            if (m := known.get(mid)) is not None and m.status is MemoryStatus.ACTIVE  # one lookup a candidate
        ]
        ranked = rescore(candidates, p, window)
        if p.turn_anchors > 0 and ranked:
            anchors = [known[mid] for mid, _ in ranked[: p.turn_anchors]]
            around = await self.memories.turn_neighbours(scope, anchors, p.layers)
            for m in around:
                known.setdefault(m.memory_id, m)
            ranked = spread_to_adjacent_turns(
                ranked,
                {m.memory_id: (m.session_id, m.created_at) for m in (*anchors, *around) if m.session_id},
                [m.memory_id for m in around],
                p.turn_anchors,
                p.turn_weight,
                {m.memory_id for m in anchors if asks(m.text)},
                p.question_weight,
            )
        for memory in exact:
            known.setdefault(memory.memory_id, memory)
        ranked = exact_first(ranked, [m.memory_id for m in exact])
        return [(known[mid], score) for mid, score in ranked]

    async def _naming(self, scope: Scope, query: str, tiers: tuple[Tier, ...], p: RetrievalPreset) -> list[Memory]:
        """The active memories that name the query's identifiers exactly, those naming more of them first,
        then the newest ("INC-7" never returns INC-17 or INC-70 here)."""
        wanted = identifiers(query)
        if not wanted:
            return []
        hits = await self.memories.phrase_search(scope, wanted, ID_POOL, tiers, p.layers)
        lowered = [w.lower() for w in wanted]

        def naming(text: str) -> int:
            low = text.lower()  # a substring test first: the whole-token check only where it can match
            return sum(w in low and mentions_identifier(text, i) for w, i in zip(lowered, wanted, strict=True))

        named = [(naming(m.text), m) for m in hits if m.status is MemoryStatus.ACTIVE]
        named = [(n, m) for n, m in named if n]
        named.sort(key=lambda nm: (-nm[0], -nm[1].created_at.timestamp()))
        return [m for _, m in named]

    async def _about_entities(self, scope: Scope, query: str, tiers: tuple[Tier, ...], p: RetrievalPreset) -> list[str]:
        """Memories about the entities the query names: those the graph links to them (and to their
        neighbours, up to the preset's depth) and those that name them, as speaker or in the text.
        A fact is stored as "<speaker>: <sentence>", so what a person said is found by their name
        (and aliases) too: they are the "I" of it."""
        if p.graph_depth < 0 or p.graph_k <= 0:
            return []
        entities = await self.graph.find_entities(scope, query_names(query), tiers)
        if not entities:
            return []
        names = {n for e in entities if e.type == "name" for n in (e.name, *e.aliases)}
        hits, named = await asyncio.gather(
            self.graph.expand(scope, [e.entity_id for e in entities], p.graph_depth, p.graph_k, tiers),
            self.memories.keyword_ids(scope, " ".join(sorted(names)), ANCHOR_POOL, tiers, p.layers)
            if names
            else asyncio.sleep(0, result=[]),
        )
        ids = [memory_id for memory_id, _hops in hits] + named
        return list(dict.fromkeys(ids))[:ANCHOR_POOL]
