"""The read side's one entry point (acm.read.reader.ReadSide, acm.ports.reader.ContextReader): a Fetch in a
session is the session's assembled context; without a session, or in one that holds nothing yet, the memories
retrieved for the question, in the request's budget and encoding."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from acm.adapters.memory_cache import MemoryCache
from acm.adapters.tokenizer import TiktokenCounter
from acm.domain.compaction.engine import Rules, SessionTurn, WorkingMemory
from acm.domain.models import Layer
from acm.domain.retrieved import Ranked, Retrieval, RetrievalQuery, RetrievedMemory
from acm.domain.scope import Scope, Tier
from acm.ports.reader import ContextReader
from acm.read.kept_sessions import KeptSessions
from acm.read.prefetching import PrefetchingRetriever
from acm.read.reader import ReadSide, read_side
from acm.read.session import LoadSession, SessionState
from acm.read.session_context import SessionContext

COUNTER = TiktokenCounter()
AT = datetime(2026, 6, 2, 9, 0, tzinfo=UTC)
MEMORY = RetrievedMemory("m1", Tier.USER, Layer.MID, "fact", "Ana lives in Porto.", ("t0",), 6, AT)


class _Retriever:
    def __init__(self) -> None:
        self.asked: list[RetrievalQuery] = []

    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        self.asked.append(query)
        return Retrieval([Ranked(MEMORY, 0.9)], MEMORY.tokens, 2, from_prefetch=True)

    async def keyword_ids(self, query: RetrievalQuery, limit: int) -> list[str]:
        return []


class _Sessions:
    def __init__(self, turns: list[SessionTurn]) -> None:
        self.state = SessionState(WorkingMemory(), turns, bool(turns), Rules(), False)

    async def __call__(self, scope: Scope) -> tuple[SessionState, None]:
        return self.state, None


def _reader(turns: list[SessionTurn] | None) -> tuple[ContextReader, _Retriever]:
    retriever = _Retriever()
    session = None
    if turns is not None:
        session = SessionContext(cast(Any, retriever), COUNTER, cast(KeptSessions, _Sessions(turns)))
    return ReadSide(retriever, session), retriever


async def test_without_a_session_the_fetch_is_the_retrieved_memories() -> None:
    reader, retriever = _reader([])
    query = RetrievalQuery(Scope("acme", "globex", "u1"), "Where does Ana live?", 300, "o200k_base")
    bundle = await reader.fetch(query)
    assert retriever.asked == [query]
    assert [r.memory.memory_id for r in bundle.memories] == ["m1"]
    assert (bundle.total_tokens, bundle.budget_tokens, bundle.dropped, bundle.encoding) == (6, 300, 2, "o200k_base")
    assert bundle.from_prefetch and not bundle.context


async def test_a_session_holding_nothing_yet_gets_the_memories_only() -> None:
    reader, retriever = _reader([])
    bundle = await reader.fetch(RetrievalQuery(Scope("acme", "globex", "u1", "a", "s1"), "Where does Ana live?", 300))
    assert len(retriever.asked) == 1 and not bundle.context and [r.memory.text for r in bundle.memories]


async def test_a_session_with_turns_gets_its_assembled_context() -> None:
    said = "user: I moved to Porto last week."
    reader, _ = _reader([SessionTurn("t1", "user", said, COUNTER.count(said), AT)])
    bundle = await reader.fetch(RetrievalQuery(Scope("acme", "globex", "u1", "a", "s1"), "Where does Ana live?", 300))
    assert said in bundle.context and "Ana lives in Porto." in bundle.context
    assert bundle.context_tokens <= 300


def test_warm_up_is_wired_only_with_a_pool_and_the_session_owners() -> None:
    cache = MemoryCache()
    load = cast(LoadSession, object())
    assert read_side(_Retriever(), cache, COUNTER, load).warm_up is None  # no pool to warm
    assert read_side(PrefetchingRetriever(_Retriever(), cache), cache, COUNTER, None).warm_up is None
    both = read_side(PrefetchingRetriever(_Retriever(), cache), cache, COUNTER, load)
    assert both.warm_up is not None and both.session is not None
