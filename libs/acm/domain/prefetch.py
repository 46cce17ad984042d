"""Prefetch policy (pure): what to keep warm for a session, within its budget, and how a Fetch is served
from it without the full retrieval.

The anticipate service predicts the next Fetch from the session's latest turns, the entities they named
(and, through retrieval's graph expansion, their neighbours), the categories the schema relates to the
current topic, what this agent usually needs next (co-access learned per agent) and open tasks. Each
prediction is a ranked list of memories; they are fused into one pool, best first, trimmed to the
schema's entries and bytes.

A Fetch is served from the pool only when the question is about what the session talks about now (the
pool's topic: the content words of the latest turns it was predicted from) and the pool holds the
question's best keyword matches over the whole history. Then a cheap ranking (BM25 over the pool, plus the
prediction's prior and recency: acm.domain.ranking, beside the full retrieval's) replaces embedding the
question and searching every index; otherwise the full retrieval runs."""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import Stemmer

from acm.domain.retrieval import weighted_rrf

RRF_K = 30

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    """a an the and or but if of at by for with about into to from in on off over under again then once here
    there when where why how all any both each few more most other some such no nor not only own same so than
    too very can will just should now is are was were be been being have has had having do does did doing i me
    my we our you your he him his she her it its they them their what which who whom this that these those am
    would could did does s t d ll m o re ve y""".split()
)


_local = threading.local()  # a Stemmer is not safe to share between threads


def _stemmer() -> Stemmer.Stemmer:
    stemmer: Stemmer.Stemmer | None = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


# How terms and topic_words make words from text; a pool records it, and a reader that makes them another way
# (a replica of the previous release, during an upgrade) does not serve from it. 2: stemmed terms.
TERMS_VERSION = 2


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def terms(text: str) -> list[str]:
    """The words a pool is indexed and ranked by: lowercase content words (stop words dropped), stemmed
    (Snowball English, as the keyword index stems: SQLite FTS5 porter, Postgres english), so "painted" meets
    "painting" and "dogs" meets "dog"."""
    return _stemmer().stemWords(_words(text))


def topic_words(text: str) -> list[str]:
    """The words the topic gate (on_topic) compares: lowercase content words, plurals folded, not stemmed.
    The gate is the conservative side: "painted" in a question and "painting" in the latest turns may be one
    topic or a long-past one, and serving a long-past question from the pool costs recall, while refusing a
    current one costs only the full retrieval's latency."""
    return [w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w for w in _words(text)]


def stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


@dataclass(frozen=True, slots=True)
class PoolEntry:
    text: str
    prior: float  # the anticipated relevance (higher = more likely needed)
    at: float  # when it holds or was said, as a timestamp (newer = more recent)


Postings = dict[str, tuple[list[int], list[int]]]  # term → (entry indices, term frequencies)


@dataclass(frozen=True, slots=True)
class IndexedPool:
    """Everything a Fetch needs to rank a pool, computed once when the pool is built."""

    postings: Postings
    lengths: list[int]
    prior: list[float]  # scaled to [0, 1]
    recency: list[float]  # rank by time, scaled to (0, 1]


def index_pool(entries: Sequence[PoolEntry]) -> IndexedPool:
    postings: Postings = {}
    lengths = []
    for i, e in enumerate(entries):
        words = terms(e.text)
        lengths.append(len(words))
        for t, tf in Counter(words).items():
            docs, tfs = postings.setdefault(t, ([], []))
            docs.append(i)
            tfs.append(tf)
    n = len(entries)
    top = max((e.prior for e in entries), default=0.0)
    prior = [e.prior / top if top > 0 else 0.0 for e in entries]
    recency = [0.0] * n
    for rank, i in enumerate(sorted(range(n), key=lambda i: entries[i].at)):
        recency[i] = (rank + 1) / n
    return IndexedPool(postings, lengths, prior, recency)


_CAPITALISED = re.compile(r"(?<!^)(?<![.?!] )\b[A-Z][a-z]+")


# A question is about what the session talks about now when a third of what it asks (its content words, names
# aside) is in the latest turns, or when a word it shares with them is in few of the pool's entries (a word
# the whole history repeats, "kids" or "support", says little about which part of it a question is about).
TOPIC_SHARE = 1 / 3
SPECIFIC_SHARE = 0.05


def on_topic(
    query: str,
    topic_terms: Collection[str],
    doc_freq: Callable[[str], int] | None = None,
    entries: int = 0,
) -> bool:
    """Whether the question is about what the session talks about now, judged by the words it shares with the
    latest turns the pool was predicted from (``topic_terms``, from topic_words). Names (capitalised words
    inside the question) do not count: a conversation repeats its people's names whatever it is about.
    ``doc_freq`` (in how many of the pool's ``entries`` a term occurs, by the pool's stemmed terms) tells a
    specific shared word from a common one; without it, any shared word will do.

    History: "every content word of the question occurs somewhere in the pool" both served questions about
    long-past turns and refused questions about the turn just said (35 % of the replay's warm Fetches
    served); "any shared word" served 77 %, with recall 94.3 → 94.9 (acm bench prefetch), but also served
    the end of one long session's questions that shared a common word with its last turns (5.5 % of
    coverage's Fetches, at 35-40 % answer coverage against 84 % overall). The share and specificity tests
    (round thresholds, read off logs of both benchmarks on locomo-dev, alike in each of its conversations)
    took the replay's served share from 76.6 to 74.9 % (recall 95.3 → 95.0, no prefetch 95.0) and
    coverage's from 5.5 to 1.8 %, its answer coverage 84.2 → 85.4. Comparing stems here too (as the ranking
    does) served 79.0 % of the replay's Fetches (recall 95.3) but 2.6 % of coverage's, at 43 % answer
    coverage, which fell 86.3 → 85.4; with unstemmed words: 74.9 % (recall 95.2, no prefetch 95.0) and
    1.6 % at 64 % (coverage 86.4)."""
    names = set(topic_words(" ".join(_CAPITALISED.findall(query))))
    asked = [t for t in dict.fromkeys(topic_words(query)) if t not in names]
    shared = [t for t in asked if t in topic_terms]
    if not shared:
        return False
    if doc_freq is None or len(shared) >= TOPIC_SHARE * len(asked):
        return True
    return any(doc_freq(stem(t)) <= SPECIFIC_SHARE * entries for t in shared)


# How many of the keyword channel's best memories for the question the pool must hold: those the full
# retrieval's answer almost always holds too (the best five; from the sixth on far less often), so a pool lacking
# one answers from a poorer subset of the history. Measured in docs/experiments.md ("Issue 22: prefetch at
# non-gold ask points, re-run").
CONFIRM_K = 5


def pool_confirmed(keyword_best: Sequence[str], pooled: Collection[str]) -> bool:
    """Whether the pool holds what the question's words point at in the whole history: every one of
    ``keyword_best`` (the ids the full retrieval's keyword channel ranks first, CONFIRM_K of them, fewer when
    fewer match at all). The topic
    gate judges the question against the latest turns only; a question that shares their words but asks
    about something said long ago is answered worse by the pool (a subset predicted from those turns) than by
    the full retrieval, and its best keyword matches are then outside the pool. Nothing matched: nothing says
    the pool holds the answer, so the full retrieval answers."""
    return bool(keyword_best) and all(memory_id in pooled for memory_id in keyword_best)


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
