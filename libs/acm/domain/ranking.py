"""The two rankers of a Fetch, side by side (pure): the full retrieval's and the prefetch pool's.

The full retrieval fuses the keyword, vector and graph lists (weighted RRF) and re-scores the fused list by the
agent's preset: S = α·similarity + β·recency + γ·frequency (+ a time-window boost). The pool has no vector
search: it ranks its entries by BM25 of the question plus a static part (the anticipated prior and recency)
(+ its own window boost). Each states its own parameters; neither is derived from the other's, so retuning
one does not silently move the other (acm bench prefetch measures the pool against the full retrieval)."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from acm.domain.prefetch import PoolEntry, index_pool, terms
from acm.domain.retrieval import RetrievalPreset


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = 60) -> list[tuple[str, float]]:
    """RRF (Cormack et al. 2009): score(d) = Σ 1 / (k + rank(d)); best first, ties by first appearance."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])


# --- The full retrieval: fused lists re-scored by the agent's preset (acm.domain.retrieval.PRESETS). ---


@dataclass(frozen=True, slots=True)
class Candidate:
    memory_id: str
    fused: float
    at: datetime  # when the fact holds (valid_from) or was said
    mentions: int = 1
    accesses: int = 0
    said_at: datetime | None = None  # when it was said, for recency (default: at)


def rescore(
    candidates: Sequence[Candidate],
    p: RetrievalPreset,
    window: tuple[datetime, datetime] | None = None,
) -> list[tuple[str, float]]:
    """Best first. Recency is of when a memory was said (a fact about last May, said today, is news), relative
    to the newest candidate, not the wall clock, so an old conversation is not penalised as a whole; the
    time window goes by when the fact holds; frequency is log-scaled against the most frequent."""
    if not candidates:
        return []
    top = max(c.fused for c in candidates) or 1.0
    newest = max(c.said_at or c.at for c in candidates)
    most = max(math.log1p(c.mentions + c.accesses) for c in candidates) or 1.0
    scored = []
    for c in candidates:
        age_days = max((newest - (c.said_at or c.at)).total_seconds(), 0.0) / 86400
        recency = 0.5 ** (age_days / p.recency_half_life_days)
        frequency = math.log1p(c.mentions + c.accesses) / most
        s = p.alpha_similarity * (c.fused / top) + p.beta_recency * recency + p.gamma_frequency * frequency
        if window is not None and window[0] <= c.at < window[1]:
            s += p.time_window_boost
        scored.append((c.memory_id, s))
    scored.sort(key=lambda kv: -kv[1])
    return scored


# --- The prefetch pool: BM25 over the pool + a static part, computed once per pool. ---

# The static part: the prediction's fused prior (what anticipate expects the next Fetch to need) counts more
# than recency (the pool is already the session's recent part); together at most 0.5, so a question's best
# word match (lexical part 1) outranks any entry that matches none.
PRIOR_WEIGHT = 0.35
RECENCY_WEIGHT = 0.15
# What an entry inside the question's time window ("last week") gains: about a third of the best word match,
# enough to lift an in-window match over an equally matching one outside it, not over a clearly better match.
# Stated here on its own (it was once derived from the full retrieval's preset, 0.3 / 0.8, the value kept).
WINDOW_BOOST = 0.375


def static_scores(prior: Sequence[float], recency: Sequence[float]) -> list[float]:
    """The part of each entry's score that does not depend on the question (computed once per pool)."""
    return [PRIOR_WEIGHT * p + RECENCY_WEIGHT * r for p, r in zip(prior, recency, strict=True)]


def static_order(static: Sequence[float]) -> list[int]:
    """Entry indices by static score, best first (ties by index): the ranking of a question that matches no
    word, computed once per pool."""
    return sorted(range(len(static)), key=lambda i: -static[i])


def in_window(times: Sequence[float], window: tuple[float, float]) -> dict[int, float]:
    """The time-window boost of the entries that hold (or were said) inside the question's window
    (timestamps, end exclusive), as the full retrieval boosts them (acm.domain.retrieval.rescore)."""
    start, end = window
    return {i: WINDOW_BOOST for i, t in enumerate(times) if start <= t < end}


def rank(
    query: str,
    postings_of: Callable[[str], tuple[Sequence[int], Sequence[int]] | None],
    lengths: Sequence[int],
    static: Sequence[float],
    order: Sequence[int] | None = None,
    k1: float = 1.2,
    b: float = 0.75,
    boost: Mapping[int, float] | None = None,
) -> Iterator[tuple[int, float]]:
    """(entry index, score) of every entry, best first (ties by index), lazily: BM25 of the query (scaled to
    [0, 1]) + the entry's static score (prior + recency, see static_scores) + its ``boost`` (in_window).
    Only the query's own words are looked up, and the entries that match none and have no boost keep their
    static order (``order``, from static_order), so a caller that stops after the first few pays for the
    matching entries, not for sorting the pool."""
    n = len(lengths)
    avg = (sum(lengths) / n) if n else 1.0
    lexical: dict[int, float] = {}
    for t in set(terms(query)):
        found = postings_of(t)
        if found is None:
            continue
        docs, tfs = found
        idf = math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
        for i, tf in zip(docs, tfs, strict=True):
            norm = k1 * (1 - b + b * lengths[i] / (avg or 1.0))
            lexical[i] = lexical.get(i, 0.0) + idf * tf * (k1 + 1) / (tf + norm)
    top = max(lexical.values(), default=0.0) or 1.0
    # A word or the window only adds to a score: those entries are ranked afresh and merged into the static
    # order.
    extra = {i: v / top for i, v in lexical.items()}
    for i, v in (boost or {}).items():
        extra[i] = extra.get(i, 0.0) + v
    matched = sorted(((-(static[i] + v), i) for i, v in extra.items()))
    rest = ((-static[i], i) for i in (order if order is not None else static_order(static)) if i not in extra)
    for negative, i in heapq.merge(matched, rest):
        yield i, -negative


class PoolIndex:
    """An in-memory pool index (tests and callers that hold the entries themselves)."""

    def __init__(self, entries: Sequence[PoolEntry]) -> None:
        self.entries = entries
        self.indexed = index_pool(entries)
        self.static = static_scores(self.indexed.prior, self.indexed.recency)
        self.order = static_order(self.static)

    def _postings(self, term: str) -> tuple[Sequence[int], Sequence[int]] | None:
        return self.indexed.postings.get(term)

    def rank(self, query: str) -> list[tuple[int, float]]:
        return list(rank(query, self._postings, self.indexed.lengths, self.static, self.order))
