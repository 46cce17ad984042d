"""A Retriever that serves Fetch from the session's prefetch pool when it can, else the full retrieval.

The pool (warmed by the anticipate service, acm.prefetch_state) is used only when it is fresh (the write
generations it was built under are still current: any write into a scope it could see, or a Forget,
makes it stale), it belongs to the exact scope and agent asking, the question is about the pool's
topic (acm.domain.prefetch.on_topic), when it names a time window, the window holds the session's
present, and the pool holds the question's best keyword matches over the whole history (pool_confirmed,
asked of the full retrieval's keyword channel: no embedding). The pool carries its own BM25 index (built by
anticipate), and the decoded pool is kept per session while its version stays the same, so a hit costs four
small cache reads, one keyword search, a lookup of the question's words, and a ranking of the entries
sharing one with it merged into the pool's static order, read only until the budget is full."""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from opentelemetry import metrics

from acm.domain.identifiers import identifiers, mentions_identifier
from acm.domain.prefetch import CONFIRM_K, TERMS_VERSION, on_topic, pool_confirmed
from acm.domain.ranking import in_window, rank, static_order, static_scores
from acm.domain.retrieval import exact_first
from acm.domain.retrieved import Ranked, Retrieval, RetrievalQuery, RetrievedMemory
from acm.domain.scope import Scope, Tier
from acm.domain.timeparse import query_window
from acm.domain.tokens import DEFAULT_ENCODING, pack_until_full
from acm.ports.retriever import Retriever
from acm.ports.stores import Cache
from acm.read.pool import PrefetchPool, load_pool, pool_time, read_pool_state
from acm.telemetry import prefetch_counter


@dataclass
class _Decoded:
    version: str
    pool: PrefetchPool
    lengths: tuple[int, ...]
    static: list[float]  # the question-independent part of each entry's score
    order: list[int]  # entries by static score, best first
    tiers: list[Tier]
    tokens: list[int]
    times: list[float]  # when each entry holds (else when it was said), as the full path's window sees it
    newest: float  # the newest of them: the session's present, as far as the pool knows
    topic: frozenset[str]
    ids: frozenset[str]  # the memories it holds
    per_tier: Counter[Tier]
    smallest: int  # the fewest tokens of any entry

    def postings(self, term: str) -> tuple[Sequence[int], Sequence[int]] | None:
        return self.pool.postings.get(term)

    def doc_freq(self, term: str) -> int:
        found = self.pool.postings.get(term)
        return 0 if found is None else len(found[0])


class PrefetchingRetriever:
    """Implements acm.ports.retriever.Retriever around another Retriever."""

    def __init__(
        self,
        inner: Retriever,
        cache: Cache,
        *,
        memo_sessions: int = 4096,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self.inner = inner
        self._cache = cache
        self._memo: OrderedDict[Scope, _Decoded] = OrderedDict()
        self._memo_max = memo_sessions
        # Fetches: "hit", "miss_cold", "miss_stale", "miss_off_topic", ...; pools "decoded" (read and decoded
        # from the cache), "warmed" / "warm_outdated" (PoolReady hints acted on / already superseded).
        self._count = prefetch_counter(meter_provider)

    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        served = await self._from_pool(query)
        if served is not None:
            self._count("hit")
            return served
        return await self.inner.retrieve(query)

    async def keyword_ids(self, query: RetrievalQuery, limit: int) -> list[str]:
        return await self.inner.keyword_ids(query, limit)

    def _miss(self, reason: str) -> None:
        self._count(f"miss_{reason}")

    async def _from_pool(self, request: RetrievalQuery) -> Retrieval | None:
        query = request.text
        if not query.strip() or request.budget_tokens <= 0:
            return None  # no question to predict for; the full path validates the rest
        if request.encoding != DEFAULT_ENCODING:
            self._miss("encoding")  # pooled token counts are in the default encoding
            return None
        scope = request.scope
        if not scope.session_id:
            self._miss("no_session")
            return None
        tiers = request.tiers
        as_of = request.as_of or datetime.now(UTC)
        window = None if request.from_context else query_window(query, as_of)
        # One round trip (four small keys): the pool's version and the write generations.
        version, generations = await read_pool_state(self._cache, scope)
        if not version:
            self._miss("cold")
            return None
        decoded = await self._decoded(scope, version)
        if decoded is None:
            self._miss("cold")
            return None
        pool = decoded.pool
        if list(pool.generations) != generations:
            self._memo.pop(scope, None)  # nothing of a stale pool is kept around
            self._miss("stale")
            return None
        if not on_topic(query, decoded.topic, decoded.doc_freq, len(decoded.lengths)):
            self._miss("off_topic")
            return None
        boost = None
        if window is not None:
            span = (window[0].timestamp(), window[1].timestamp())
            if not span[0] <= decoded.newest < span[1]:
                # About another period than the session's present (the newest the pool holds): the pool was
                # predicted from the latest turns, the full retrieval searches every period.
                self._miss("time_window")
                return None
            # As the full path does, what holds inside the question's window ("this week") ranks higher.
            boost = in_window(decoded.times, span)
        order: Iterable[tuple[int, float]] = rank(
            query, decoded.postings, decoded.lengths, decoded.static, decoded.order, boost=boost
        )
        wanted = identifiers(query)
        if wanted:
            # As the full path does, what names the query's ids exactly comes first; a pool that names none of
            # them was predicted for something else: the full retrieval answers.
            named = [i for i, m in enumerate(pool.memories) if any(mentions_identifier(m.text, w) for w in wanted)]
            if not named:
                self._miss("identifiers")
                return None
            order = exact_first(order, named)
        # Last, as it is the one check that reads a store: the pool must hold each of the question's best
        # keyword matches over the whole history (those the full answer almost always holds), or the full
        # retrieval answers.
        best = await self.inner.keyword_ids(request, CONFIRM_K)
        if not pool_confirmed(best, decoded.ids):
            self._miss("unconfirmed")
            return None
        ranked = (((i, score), decoded.tokens[i]) for i, score in order if decoded.tiers[i] in tiers)
        kept, total = pack_until_full(ranked, request.budget_tokens, decoded.smallest)
        eligible = sum(decoded.per_tier[t] for t in set(tiers))
        items = [Ranked(pool.memories[i], score) for (i, score), _size in kept]
        return Retrieval(items, total, eligible - len(kept), from_prefetch=True)

    def holds(self, scope: Scope) -> bool:
        """A decoded pool of this session is kept here (whatever its version)."""
        return scope in self._memo

    async def warm(self, scope: Scope, version: str) -> Sequence[RetrievedMemory]:
        """Decode the session's pool now (the version a PoolReady hint names), so that the next Fetch does
        not; its memories, or none when that version is no longer the current one."""
        decoded = await self._decoded(scope, version) if version else None  # checks the stored version
        self._count("warmed" if decoded is not None else "warm_outdated")
        return () if decoded is None else decoded.pool.memories

    async def _decoded(self, scope: Scope, version: str) -> _Decoded | None:
        hit = self._memo.get(scope)
        if hit is not None and hit.version == version:
            self._memo.move_to_end(scope)
            return hit
        pool = await load_pool(self._cache, scope)
        self._count("decoded")
        if pool is None or pool.version != version:
            return None  # replaced between the two reads: the next Fetch sees the new one
        if len(pool.lengths) != len(pool.memories) or pool.terms_version != TERMS_VERSION:
            return None  # not built by this version of anticipate
        static = static_scores(pool.prior, pool.recency)
        tiers = [m.tier for m in pool.memories]
        tokens = [m.tokens for m in pool.memories]
        times = [pool_time(m) for m in pool.memories]
        decoded = _Decoded(
            version,
            pool,
            pool.lengths,
            static,
            static_order(static),
            tiers,
            tokens,
            times,
            max(times, default=0.0),
            frozenset(pool.topic_terms),
            frozenset(m.memory_id for m in pool.memories),
            Counter(tiers),
            min(tokens, default=0),
        )
        self._memo[scope] = decoded
        self._memo.move_to_end(scope)
        while len(self._memo) > self._memo_max:
            self._memo.popitem(last=False)
        return decoded
