"""Retrieval strategies as data, and the re-scoring every strategy shares (pure).

A preset says how many candidates each retriever contributes, how the ranked lists are fused and how the
fused score is re-weighted: S = α·similarity + β·recency + γ·frequency (+ a boost for memories inside the
time window a question asks about). Agent schemas pick a preset and may override α, β, γ.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TypeVar

from acm.domain.extract import mentions
from acm.domain.models import Layer


@dataclass(frozen=True, slots=True)
class RetrievalPreset:
    name: str
    keyword_k: int = 50
    vector_k: int = 50
    graph_depth: int = 1
    graph_k: int = 30
    rrf_k: int = 60
    # Weight of each ranked list in the fusion (weighted RRF).
    list_weights: dict[str, float] = field(default_factory=lambda: {"keyword": 1.0, "vector": 1.0, "graph": 0.5})
    alpha_similarity: float = 0.8
    beta_recency: float = 0.1
    gamma_frequency: float = 0.1
    recency_half_life_days: float = 30.0
    time_window_boost: float = 0.3
    # Conversation context: the first `turn_anchors` memories give turn_weight x their score x their
    # session's share of them to the turns just before and after them (spread_to_adjacent_turns); 0 = off.
    turn_anchors: int = 15
    turn_weight: float = 0.3
    # A question said in the conversation is context, not a fact: among the anchors, one with a turn after
    # it ranks through that turn (its answer takes the question's score) and keeps this share of its own.
    question_weight: float = 0.5
    # Facts and long-term memories; SHORT turn previews are the session's working set, not search results.
    layers: tuple[Layer, ...] = (Layer.MID, Layer.LONG)


PRESETS: dict[str, RetrievalPreset] = {
    p.name: p
    for p in (
        RetrievalPreset("balanced"),
        # Multi-hop questions: more candidates and a deeper walk over the entity graph.
        RetrievalPreset("recall", keyword_k=100, vector_k=100, graph_depth=2, graph_k=60),
        # Support / operations agents: the latest state matters most.
        RetrievalPreset("recent", alpha_similarity=0.6, beta_recency=0.3, gamma_frequency=0.1),
        RetrievalPreset(
            "precise",
            keyword_k=30,
            vector_k=30,
            graph_depth=0,
            list_weights={"keyword": 1.0, "vector": 1.0},
            turn_anchors=0,
        ),
    )
}
DEFAULT_PRESET = "balanced"


def preset(
    name: str, alpha: float | None = None, beta: float | None = None, gamma: float | None = None
) -> RetrievalPreset:
    if name not in PRESETS:
        raise ValueError(f"unknown retrieval preset {name!r}; use one of {', '.join(PRESETS)}")
    base = PRESETS[name]
    return replace(
        base,
        alpha_similarity=base.alpha_similarity if alpha is None else alpha,
        beta_recency=base.beta_recency if beta is None else beta,
        gamma_frequency=base.gamma_frequency if gamma is None else gamma,
    )


def weighted_rrf(rankings: dict[str, Sequence[str]], weights: dict[str, float], k: int) -> dict[str, float]:
    """Σ over lists of weight / (k + rank); lists without a weight count 1."""
    scores: dict[str, float] = {}
    for name, ranking in rankings.items():
        w = weights.get(name, 1.0)
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + w / (k + rank)
    return scores


# What stands just before a name that makes it a place or a thing rather than a person: a preposition of
# place ("a trip in Oregon", "at Acme"), "to" or "from" after a word of going ("been to Portugal", "moved
# from Sweden"; "a gift to Anna" is a person's), an article ("the Grand Canyon", "a Nintendo game": people
# take none) or an opening quote (a title: "Becoming Nicole").
_GOING = (
    r"been|go|goes|going|gone|went|trip|trips|travel\w*|move|moved|moving|relocat\w+|flew|fly|flying|flight|"
    r"drive|drove|driving|ride|rode|return\w*|came|come|comes|coming|back|head\w*|way|road|journey\w*|"
    r"arriv\w+|emigrat\w+|commut\w+"
)
_NOT_A_PERSON_BEFORE = re.compile(
    rf"""(?:\b(?:in|at|near|around|across|through|into|inside|outside|via|visit|visits|visited|visiting|the|a|an)"""
    rf"""|\b(?:{_GOING})\s+(?:to|from))\s+$|["“‘]$""",
    re.I,
)
_POSSESSIVE = re.compile(r"^(?:'s|’s)(?!\w)")


def person_names(query: str) -> list[str]:
    """The names of ``query`` that denote people, told by grammar alone (no list of names or places): a
    name is a person unless what precedes it marks a place or a thing (_NOT_A_PERSON_BEFORE) or it is an
    acronym (organisations, groups, countries: "HR", "LGBTQ", "US"); a possessive ("Anna's") is a person's
    whatever precedes it. "Has Anna ever been to Portugal?" names one person, Anna."""
    people: list[str] = []
    for m in mentions(query):
        if m.type != "name" or (m.text.isupper() and len(m.text) > 1):
            continue
        for hit in re.finditer(rf"(?<!\w){re.escape(m.text)}(?!\w)", query):
            before, after = query[: hit.start()], query[hit.end() :]
            if _POSSESSIVE.match(after) or not _NOT_A_PERSON_BEFORE.search(before):
                people.append(m.text)
                break
    return people


@functools.lru_cache(maxsize=4096)  # by text (pure): an agent loop asks again what it asked before
def semantic_query(query: str) -> str:
    """The query as the vector search sees it: without the names of people.

    Memories are stored as "<speaker>: <sentence>", so a query that names a person is close to every short
    thing that person said, and the name drowns out what is asked. Who is asked about is the keyword and
    entity-graph searches' job; the vector search looks for the what, and a place or a thing is part of the
    what ("Has Anna ever been to Portugal?" is searched as "Has ever been to Portugal?"). A query that is
    nothing but names is kept as it is."""
    stripped = query
    for name in person_names(query):
        stripped = re.sub(rf"\b{re.escape(name)}(?:'s|’s)?(?!\w)", " ", stripped)
    stripped = re.sub(r"\s+", " ", stripped).strip()
    return stripped if re.search(r"\w{3,}", stripped) else query


Turn = tuple[str, datetime]  # (session id, when it was said): the memories of one turn share both


def spread_to_adjacent_turns(
    ranked: Sequence[tuple[str, float]],
    turn_of: Mapping[str, Turn],
    neighbours: Sequence[str],
    anchors: int,
    weight: float,
    questions: Collection[str] = frozenset(),
    question_weight: float = 1.0,
) -> list[tuple[str, float]]:
    """Conversation context as a score. The turns just before and after a well-ranked memory are likely
    the same exchange, and the answer often sits in a reply that shares no word with the question ("How
    do you make time for yourself?" ... "I run every morning"). Each of the first `anchors` memories of
    `ranked` gives weight x its score x the share of those anchors said in its session to the memories of
    the turn before and the turn after it: when a question's best matches gather in one exchange, its
    context is the best bet; when they are scattered over many sessions (everything someone ever did),
    the next match elsewhere is. A memory's score becomes its own (0 if it was not ranked) plus what it
    received; the anchors keep their own (in a run of matching turns they would otherwise lift each other
    above a better match said elsewhere). `neighbours` are those turns' memories
    (MemoryRepo.turn_neighbours); `turn_of` gives each memory's turn. An anchor among `questions` (memories
    that ask something) with a turn after it is context, not a fact: the memories of that turn (its answer)
    score at least the question's score, and the question keeps question_weight x its own. Best first."""
    said: dict[str, list[datetime]] = {}
    for mid in neighbours:
        session, at = turn_of[mid]
        said.setdefault(session, []).append(at)
    top = [(mid, score) for mid, score in ranked[:anchors] if mid in turn_of]
    per_session = Counter(turn_of[mid][0] for mid, _ in top)
    received: dict[Turn, float] = {}
    answered: dict[Turn, float] = {}  # a turn right after an anchoring question: the question's score
    scores = dict(ranked)
    for mid, score in top:
        session, at = turn_of[mid]
        gift = weight * score * per_session[session] / len(top)
        times = said.get(session, [])
        before = max((t for t in times if t < at), default=None)
        after = min((t for t in times if t > at), default=None)
        for t in (before, after):
            if t is not None:
                received[(session, t)] = received.get((session, t), 0.0) + gift
        if mid in questions and after is not None:
            answered[(session, after)] = max(answered.get((session, after), 0.0), score)
            scores[mid] = question_weight * score
    for mid in neighbours:
        scores.setdefault(mid, 0.0)
    givers = {mid for mid, _ in top}
    spread = {}
    for mid, s in scores.items():
        turn = turn_of.get(mid)
        if turn is not None and mid not in givers:
            s += received.get(turn, 0.0)
        spread[mid] = max(s, answered.get(turn, 0.0)) if turn is not None else s
    return sorted(spread.items(), key=lambda kv: -kv[1])


_ASKS = re.compile(r"\?\s*(?:\([^()]*\))?\s*$")  # ends with "?", or "?" and the time written after it


def asks(text: str) -> bool:
    """A memory that is a question ("Mara: What got you into pottery?"), told by its last sentence's mark."""
    return _ASKS.search(text) is not None


K = TypeVar("K", bound=Hashable)


def exact_first(order: Iterable[tuple[K, float]], named: Sequence[K]) -> list[tuple[K, float]]:
    """The entries that name the query's identifiers (``named``, in their order) before the rest, each scored
    above the best of the rest: a query for INC-7 gets INC-7's memories before similar tickets. Used by the full
    retrieval and by the prefetch pool alike."""
    ranked = list(order)
    if not named:
        return ranked
    top = max((score for _, score in ranked), default=0.0)
    lead = [(k, top + 1.0 + (len(named) - n) / len(named)) for n, k in enumerate(named)]
    first = set(named)
    return lead + [(k, score) for k, score in ranked if k not in first]
