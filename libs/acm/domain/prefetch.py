"""Prefetch policy (pure): what to keep warm for a session, within its budget, and how a Fetch is served
from it without the full retrieval.

The anticipate service predicts the next Fetch from the session's latest turns, the entities they named
(and, through retrieval's graph expansion, their neighbours), the categories the schema relates to the
current topic, what this agent usually needs next (co-access learned per agent) and open tasks. Each
prediction is a ranked list of memories; they are fused into one pool, best first, trimmed to the
schema's entries and bytes.

A Fetch is served from the pool only when the pool covers the question: enough of the question's content
words occur in it. Then a cheap ranking (BM25 over the pool, plus the prediction's prior and recency)
replaces embedding the question and searching every index; otherwise the full retrieval runs."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from acm.domain.retrieval import weighted_rrf

# Share of the question's content words that must occur in the pool for it to be served from there.
MIN_COVERAGE = 0.75
PRIOR_WEIGHT = 0.35
RECENCY_WEIGHT = 0.15
RRF_K = 30

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    """a an the and or but if of at by for with about into to from in on off over under again then once here
    there when where why how all any both each few more most other some such no nor not only own same so than
    too very can will just should now is are was were be been being have has had having do does did doing i me
    my we our you your he him his she her it its they them their what which who whom this that these those am
    would could did does s t d ll m o re ve y""".split()
)


def terms(text: str) -> list[str]:
    """Lowercase content words (stop words dropped), light plural folding so "dogs" meets "dog"."""
    out = []
    for w in _WORD.findall(text.lower()):
        if w in _STOP:
            continue
        out.append(w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w)
    return out


@dataclass(frozen=True, slots=True)
class PoolEntry:
    text: str
    prior: float  # the anticipated relevance (higher = more likely needed)
    at: float  # when it holds or was said, as a timestamp (newer = more recent)


class PoolIndex:
    """BM25 over a small pool, built once per pool version and kept by the reader."""

    def __init__(self, entries: Sequence[PoolEntry], k1: float = 1.2, b: float = 0.75) -> None:
        self.entries = entries
        self._k1, self._b = k1, b
        docs = [terms(e.text) for e in entries]
        self._lengths = [len(d) for d in docs]
        self._avg = (sum(self._lengths) / len(docs)) if docs else 1.0
        self._postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, d in enumerate(docs):
            for t, tf in Counter(d).items():
                self._postings[t].append((i, tf))
        n = len(docs)
        self._idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self._postings.items()}
        top = max((e.prior for e in entries), default=0.0)
        self._prior = [e.prior / top if top > 0 else 0.0 for e in entries]
        order = sorted(range(n), key=lambda i: entries[i].at)
        self._recency = [0.0] * n
        for rank, i in enumerate(order):
            self._recency[i] = (rank + 1) / n

    def coverage(self, query: str) -> float:
        """Share of the query's distinct content words that occur somewhere in the pool."""
        wanted = set(terms(query))
        if not wanted:
            return 0.0
        return sum(1 for t in wanted if t in self._postings) / len(wanted)

    def rank(self, query: str) -> list[tuple[int, float]]:
        """(entry index, score), best first; every entry is ranked (the prior orders the rest)."""
        lexical = [0.0] * len(self.entries)
        for t in set(terms(query)):
            idf = self._idf.get(t)
            if idf is None:
                continue
            for i, tf in self._postings[t]:
                norm = self._k1 * (1 - self._b + self._b * self._lengths[i] / (self._avg or 1.0))
                lexical[i] += idf * tf * (self._k1 + 1) / (tf + norm)
        top = max(lexical, default=0.0) or 1.0
        scored = [
            (i, lexical[i] / top + PRIOR_WEIGHT * self._prior[i] + RECENCY_WEIGHT * self._recency[i])
            for i in range(len(self.entries))
        ]
        scored.sort(key=lambda s: -s[1])
        return scored


def fuse_predictions(predictions: Mapping[str, Sequence[str]], weights: Mapping[str, float]) -> list[tuple[str, float]]:
    """Memory ids of every prediction, fused by weighted reciprocal rank: (id, prior), best first."""
    fused = weighted_rrf({k: list(v) for k, v in predictions.items()}, dict(weights), RRF_K)
    return sorted(fused.items(), key=lambda kv: -kv[1])


def trim(sizes: Sequence[int], max_entries: int, max_bytes: int) -> list[int]:
    """Indices (in order, best first) that fit the session's budget of entries and bytes."""
    kept: list[int] = []
    total = 0
    for i, size in enumerate(sizes):
        if len(kept) >= max_entries:
            break
        if total + size > max_bytes:
            continue  # a smaller one further down may still fit
        kept.append(i)
        total += size
    return kept


def learn_followers(
    counts: dict[str, dict[str, int]], previous: Iterable[str], current: Iterable[str], cap: int = 1000
) -> dict[str, dict[str, int]]:
    """Co-access per agent: how often categories ``current`` came right after ``previous`` (bounded)."""
    out = {k: dict(v) for k, v in counts.items()}
    for p in set(previous):
        row = out.setdefault(p, {})
        for c in set(current):
            row[c] = min(cap, row.get(c, 0) + 1)
    return out


def likely_next(counts: Mapping[str, Mapping[str, int]], current: Iterable[str], n: int = 3) -> list[str]:
    """The categories that most often followed ``current`` in this agent's history."""
    total: Counter[str] = Counter()
    for c in set(current):
        total.update(counts.get(c, {}))
    return [c for c, _ in total.most_common(n)]
