"""Prefetch: the pool is served only fresh, in its exact scope and for a question on its topic; writes
and Forget make it stale; signals for unknown sessions are dropped and counted. The wrapper is checked
against both real caches (in-process and Redis), then end to end in embedded ACM over gRPC."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from acm import topics
from acm.adapters.grpc_retriever import GrpcRetriever
from acm.adapters.memory_cache import MemoryCache
from acm.adapters.redis_cache import RedisCache
from acm.client import AcmClient
from acm.domain.errors import Unavailable
from acm.domain.models import Layer, MemoryStatus
from acm.domain.prefetch import TERMS_VERSION, terms, topic_words
from acm.domain.ranking import WINDOW_BOOST
from acm.domain.retrieved import Ranked, Retrieval, RetrievalQuery, RetrievedMemory
from acm.domain.scope import ALL_TIERS, ForgetLevel, Scope, Tier
from acm.envelopes import envelope, key_hash
from acm.ports.stores import Cache
from acm.prefetch_state import bump_generations, forget_prefetch, read_generations
from acm.read.pool import build_pool, load_pool, pool_key, store_pool
from acm.read.prefetching import PrefetchingRetriever
from acm.telemetry import PREFETCH_OUTCOMES, counts_by
from acm.v1 import common_pb2, retrieve_pb2_grpc
from acm_anticipate.usecases import DropHotState
from acm_benchmarks.locomo import wait_until_indexed
from acm_cli.embedded import DEV_CLIENT, EmbeddedAcm, EmbeddedSettings
from acm_retrieve.api import RetrieveApi, RetrieveServicer
from tests.support.events import signed

FULL = "full retrieval"


class FullRetrieval:
    """Stands for the full retrieval behind the wrapper: answers with one marker memory, counts calls; its
    keyword channel ranks ``history`` (default: the pool's memories) by the question's words they share."""

    def __init__(self, history: Sequence[RetrievedMemory] | None = None) -> None:
        self.calls = 0
        self.history = POOL if history is None else history

    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        self.calls += 1
        return Retrieval([Ranked(_memory(FULL, FULL), 1.0)], 12, 0)

    async def keyword_ids(self, query: RetrievalQuery, limit: int) -> list[str]:
        asked = set(terms(query.text))
        shared = [(len(asked & set(terms(m.text))), m.memory_id) for m in self.history if m.tier in query.tiers]
        return [mid for n, mid in sorted(shared, key=lambda s: -s[0]) if n][:limit]


class Outcomes:
    """The prefetch outcomes a PrefetchingRetriever counted, read as an exporter would (acm.prefetch.outcomes)."""

    def __init__(self) -> None:
        self.reader = InMemoryMetricReader()
        self.provider = MeterProvider(metric_readers=[self.reader])

    def __getitem__(self, outcome: str) -> int:
        return counts_by(self.reader, PREFETCH_OUTCOMES, "outcome").get(outcome, 0)


def _prefetching(full: FullRetrieval, cache: Cache) -> tuple[PrefetchingRetriever, Outcomes]:
    outcomes = Outcomes()
    return PrefetchingRetriever(full, cache, meter_provider=outcomes.provider), outcomes


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.infra)])
async def cache(request: pytest.FixtureRequest) -> AsyncIterator[Cache]:
    c: Cache
    c = await RedisCache.open(request.getfixturevalue("redis_url")) if request.param == "redis" else MemoryCache()
    yield c
    await c.close()


def _memory(mid: str, text: str, tier: Tier = Tier.USER, said: datetime | None = None) -> RetrievedMemory:
    return RetrievedMemory(mid, tier, Layer.MID, "fact", text, (f"t-{mid}",), 12, said)


POOL = [
    _memory("m1", "alice: I adopted a puppy called Biscuit last week."),
    _memory("m2", "alice: My sister Jane lives in Porto."),
    _memory("m3", "acme: The office wifi password rotates every Monday.", Tier.CUSTOMER),
]


async def _warm(
    cache: Cache, scope: Scope, terms_version: int | None = None, memories: list[RetrievedMemory] = POOL
) -> None:
    ranked = [(m, 1.0 / (i + 1)) for i, m in enumerate(memories)]
    # As if the session had just talked about these: the pool's topic.
    topic = topic_words("Alice adopted a puppy; her sister moved to Porto; the office wifi password rotates.")
    pool = build_pool(ranked, await read_generations(cache, scope), topic)
    if terms_version is not None:
        pool = replace(pool, terms_version=terms_version)
    await store_pool(cache, scope, pool, 60)


def _request(
    scope: Scope, query: str, budget: int = 1000, tiers: tuple[Tier, ...] = ALL_TIERS, as_of: datetime | None = None
) -> RetrievalQuery:
    return RetrievalQuery(scope, query, budget, tiers=tiers, as_of=as_of)


def _scope(client: str, user: str = "alice", session: str = "s1", agent: str = "bot", customer: str = "acme") -> Scope:
    return Scope(client, customer, user, agent, session)


async def test_a_fresh_covering_pool_serves_the_fetch(cache: Cache) -> None:
    scope = _scope(f"c{uuid.uuid4().hex[:10]}")
    full = FullRetrieval()
    retriever, outcomes = _prefetching(full, cache)
    await _warm(cache, scope)

    served = await retriever.retrieve(_request(scope, "What is Alice's puppy called?"))
    assert served.from_prefetch and full.calls == 0
    assert served.items[0].memory.memory_id == "m1"
    assert served.total_tokens <= 1000
    tight = await retriever.retrieve(_request(scope, "puppy Biscuit", budget=12))
    assert [r.memory.memory_id for r in tight.items] == ["m1"]  # the budget holds on a hit too
    customer_only = await retriever.retrieve(_request(scope, "wifi password puppy", tiers=(Tier.CUSTOMER,)))
    assert [r.memory.memory_id for r in customer_only.items] == ["m3"]

    off_topic = await retriever.retrieve(_request(scope, "Which quantum computer does Bob own?"))
    assert not off_topic.from_prefetch and off_topic.items[0].memory.memory_id == FULL
    assert outcomes["miss_off_topic"] == 1
    assert outcomes["hit"] == 3


async def test_a_question_whose_best_keyword_matches_the_pool_lacks_goes_to_the_full_retrieval(cache: Cache) -> None:
    scope = _scope(f"c{uuid.uuid4().hex[:10]}")
    # What was said long ago about a puppy, which the pool (predicted from the latest turns) lacks.
    past = [
        _memory(f"old{i}", f"jane: Our old puppy {what}.") for i, what in enumerate(("chewed shoes", "ran off", "won"))
    ]
    full = FullRetrieval([*POOL, *past])
    retriever, outcomes = _prefetching(full, cache)
    await _warm(cache, scope)

    # On the pool's topic ("puppy"), but of the memories its words point at, the second best is outside the pool.
    long_ago = await retriever.retrieve(_request(scope, "What did the puppy do?"))
    assert not long_ago.from_prefetch and long_ago.items[0].memory.memory_id == FULL
    assert outcomes["miss_unconfirmed"] == 1
    # The pool holds what the words point at: served.
    sister = await retriever.retrieve(_request(scope, "Where does Alice's sister live?"))
    assert sister.from_prefetch and sister.items[0].memory.memory_id == "m2"
    # Words that match nothing in the tiers asked: no sign the pool holds the answer.
    nothing = await retriever.retrieve(_request(scope, "Did the puppy bark?", tiers=(Tier.CUSTOMER,)))
    assert not nothing.from_prefetch and full.calls == 2
    assert outcomes["miss_unconfirmed"] == 2 and outcomes["hit"] == 1


async def test_a_pool_lacking_the_fifth_best_keyword_match_goes_to_the_full_retrieval(cache: Cache) -> None:
    scope = _scope(f"c{uuid.uuid4().hex[:10]}")
    doings = ("chewed my shoes", "naps", "loves the park")
    latest = [*POOL, *(_memory(f"b{i}", f"alice: Biscuit the puppy {what}.") for i, what in enumerate(doings))]
    # Said long ago, outside the pool: the keyword channel's fifth best for the question below.
    full = FullRetrieval([*latest, _memory("old", "jane: Our old puppy won a prize.")])
    retriever, outcomes = _prefetching(full, cache)
    await _warm(cache, scope, memories=latest)
    assert (await full.keyword_ids(_request(scope, "What did the puppy Biscuit chew?"), 5))[4] == "old"

    # The pool holds the best four (the best two were once enough), not the fifth: the full retrieval answers.
    answer = await retriever.retrieve(_request(scope, "What did the puppy Biscuit chew?"))
    assert not answer.from_prefetch and full.calls == 1
    assert outcomes["miss_unconfirmed"] == 1 and outcomes["hit"] == 0


async def test_a_question_about_the_sessions_present_is_served_and_one_about_another_period_is_not(
    cache: Cache,
) -> None:
    scope = _scope(f"c{uuid.uuid4().hex[:10]}")
    now = datetime(2026, 3, 20, 12, tzinfo=UTC)
    said = {"m1": now - timedelta(days=200), "m2": now - timedelta(days=2), "m3": now - timedelta(days=1)}
    full = FullRetrieval()
    retriever, outcomes = _prefetching(full, cache)
    await _warm(cache, scope, memories=[replace(m, created_at=said[m.memory_id]) for m in POOL])

    async def ask(question: str) -> Retrieval:
        return await retriever.retrieve(_request(scope, question, as_of=now))

    plain = await ask("What did the puppy and Alice's sister do?")
    # This month holds the newest memory of the pool (the session's present): served, and what was said
    # inside it (m2, two days ago) gains the window's boost, as in the full retrieval; m1 does not.
    this_month = await ask("What did the puppy and Alice's sister do this month?")
    assert plain.from_prefetch and this_month.from_prefetch
    before = {r.memory.memory_id: r.score for r in plain.items}
    after = {r.memory.memory_id: r.score for r in this_month.items}
    assert after["m2"] == pytest.approx(before["m2"] + WINDOW_BOOST)
    assert after["m1"] == pytest.approx(before["m1"])
    # Another period than the present: the pool was predicted from the latest turns; the full retrieval.
    elsewhere = await ask("What did the puppy and Alice's sister do in August 2025?")
    assert not elsewhere.from_prefetch and full.calls == 1
    assert outcomes["miss_time_window"] == 1


async def test_a_pool_indexed_another_way_is_not_served(cache: Cache) -> None:
    # A pool from another release of anticipate (during a rolling upgrade) whose words were made another way
    # would rank a question's words against terms it does not share: cold, not served.
    scope = _scope(f"c{uuid.uuid4().hex[:10]}")
    full = FullRetrieval()
    retriever, outcomes = _prefetching(full, cache)
    await _warm(cache, scope, terms_version=TERMS_VERSION - 1)
    answer = await retriever.retrieve(_request(scope, "What is Alice's puppy called?"))
    assert not answer.from_prefetch and full.calls == 1
    assert outcomes["miss_cold"] == 1


async def test_a_pool_of_another_format_is_a_miss_not_an_error(cache: Cache) -> None:
    # A pool stored by another release of anticipate, in a format this reader does not know: cold.
    scope = _scope(f"c{uuid.uuid4().hex[:10]}")
    full = FullRetrieval()
    retriever, outcomes = _prefetching(full, cache)
    await _warm(cache, scope)
    pool = await load_pool(cache, scope)
    assert pool is not None
    await cache.set(scope, pool_key(scope), b'{"v":99,"version":"' + pool.version.encode() + b'"}', 60)
    assert await load_pool(cache, scope) is None
    answer = await retriever.retrieve(_request(scope, "What is Alice's puppy called?"))
    assert not answer.from_prefetch and full.calls == 1
    assert outcomes["miss_cold"] == 1


async def test_the_pool_is_keyed_by_the_full_scope(cache: Cache) -> None:
    client = f"c{uuid.uuid4().hex[:10]}"
    scope = _scope(client)
    full = FullRetrieval()
    retriever, _ = _prefetching(full, cache)
    await _warm(cache, scope)
    others = [
        _scope(client, session="s2"),
        _scope(client, user="bob"),
        _scope(client, agent="other-bot"),
        _scope(client, customer="globex"),
        _scope(f"c{uuid.uuid4().hex[:10]}"),
    ]
    for other in others:
        answer = await retriever.retrieve(_request(other, "puppy Biscuit"))
        assert not answer.from_prefetch and answer.items[0].memory.memory_id == FULL, other
    assert full.calls == len(others)


async def test_a_write_into_a_scope_the_pool_sees_makes_it_stale(cache: Cache) -> None:
    client = f"c{uuid.uuid4().hex[:10]}"
    scope = _scope(client)
    retriever, outcomes = _prefetching(FullRetrieval(), cache)
    question = _request(scope, "puppy Biscuit")

    # Written by another customer's user: not visible to this pool, which stays fresh.
    await _warm(cache, scope)
    await bump_generations(cache, _scope(client, user="zed", customer="globex"), {Tier.USER, Tier.CUSTOMER})
    assert (await retriever.retrieve(question)).from_prefetch

    # The same user, another session (a user-tier fact): stale.
    await bump_generations(cache, _scope(client, session="s9"), {Tier.USER})
    assert not (await retriever.retrieve(question)).from_prefetch
    # Another user of the same customer writes at the customer tier: stale.
    await _warm(cache, scope)
    await bump_generations(cache, _scope(client, user="bob"), {Tier.CUSTOMER})
    assert not (await retriever.retrieve(question)).from_prefetch
    # A client-tier write by anyone of the client: stale.
    await _warm(cache, scope)
    await bump_generations(cache, _scope(client, user="carl", customer="initech"), {Tier.CLIENT})
    assert not (await retriever.retrieve(question)).from_prefetch
    assert outcomes["miss_stale"] == 3


@pytest.mark.parametrize("level", list(ForgetLevel))
async def test_forget_removes_the_pool(cache: Cache, level: ForgetLevel) -> None:
    scope = _scope(f"c{uuid.uuid4().hex[:10]}")
    retriever, _ = _prefetching(FullRetrieval(), cache)
    await _warm(cache, scope)
    assert (await retriever.retrieve(_request(scope, "puppy Biscuit"))).from_prefetch
    await forget_prefetch(cache, scope)  # what ingest does once the memories are erased
    assert not (await retriever.retrieve(_request(scope, "puppy Biscuit"))).from_prefetch
    await DropHotState(cache)(scope, level)  # what anticipate does on the same Forget
    assert await load_pool(cache, scope) is None


# ---------------------------------------------------------------------------------------------------
# End to end, embedded


@pytest.fixture
def outcomes() -> Outcomes:
    return Outcomes()


@pytest.fixture
async def acm(tmp_path: Path, outcomes: Outcomes) -> AsyncIterator[EmbeddedAcm]:
    settings = EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")
    async with EmbeddedAcm(settings, meter_provider=outcomes.provider) as running:
        yield running


SCOPE_PB = common_pb2.Scope(customer_id="acme", user_id="alice", agent_id="bot", session_id="s1")
SCOPE = Scope(DEV_CLIENT, "acme", "alice", "bot", "s1")


async def _say(client: AcmClient, text: str, scope: common_pb2.Scope = SCOPE_PB) -> None:
    job = await client.wait_job(scope, (await client.ingest(scope, text)).job_id, timeout_s=60)
    assert job.error == ""


async def test_the_keyword_channel_answers_over_grpc_with_a_service_token(acm: EmbeddedAcm) -> None:
    # What a distributed gateway asks retrieve before serving from the pool (GrpcRetriever.keyword_ids).
    secret = "a-secret-for-the-internal-api"
    assert isinstance(acm.full_retriever, RetrieveApi)
    server = grpc.aio.server()
    retrieve_pb2_grpc.add_RetrieveServicer_to_server(RetrieveServicer(acm.full_retriever, secret), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client:
            for text in ("My sister Jane adopted a puppy called Biscuit.", "I live in Paris with my partner Sam."):
                await _say(client, text)
        await wait_until_indexed(acm)
        query = _request(SCOPE, "What is the puppy called?")
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            remote = await GrpcRetriever(channel, 10.0, secret).keyword_ids(query, 5)
            assert remote == await acm.full_retriever.keyword_ids(query, 5)
            named = await acm.stores["ingest"].memories.get(SCOPE, remote)
            assert remote and all("puppy" in m.text.lower() for m in named)
            with pytest.raises(Unavailable, match="UNAUTHENTICATED"):
                await GrpcRetriever(channel, 10.0, "not-the-secret").keyword_ids(query, 5)
    finally:
        await server.stop(None)


async def test_fetch_is_served_from_prefetch_and_never_stale(acm: EmbeddedAcm) -> None:
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client:
        for text in (
            "I live in Paris with my partner Sam.",
            "My sister Jane adopted a puppy called Biscuit.",
            "Sam and I are planning a trip to Kyoto in April.",
        ):
            await _say(client, text)
        await wait_until_indexed(acm)  # anticipate has warmed the session
        warm = await client.fetch(SCOPE_PB, "Where do I live?", budget_tokens=500)
        assert warm.from_prefetch
        assert any("Paris" in m.text for m in warm.memories)

        # A newer value: once its job is done, no Fetch may answer with the superseded one.
        await _say(client, "I live in Berlin now.")
        fresh = await client.fetch(SCOPE_PB, "Where do I live?", budget_tokens=500)
        assert any("Berlin" in m.text for m in fresh.memories)
        stored = await acm.stores["ingest"].memories.get(SCOPE, [m.memory_id for m in fresh.memories])
        assert all(m.status is MemoryStatus.ACTIVE for m in stored)
        # Nor once anticipate rebuilt the pool from the session, whose stored facts include the stale one.
        await wait_until_indexed(acm)
        pool = await load_pool(acm.cache, SCOPE)
        assert pool is not None and not any("Paris" in m.text for m in pool.memories)
        rebuilt = await client.fetch(SCOPE_PB, "Where do I live?", budget_tokens=500)
        assert not any("Paris" in m.text for m in rebuilt.memories)

        # Forget the session: once its job is done, nothing of it comes back, from the pool or otherwise.
        forget = await client.forget(SCOPE_PB, "session")
        await client.wait_job(SCOPE_PB, forget, timeout_s=60)
        gone = await client.fetch(SCOPE_PB, "Where do I live? Biscuit Kyoto", budget_tokens=500)
        assert not gone.from_prefetch and not gone.memories


async def test_the_gateway_is_warmed_before_the_fetch_that_follows_a_write(
    acm: EmbeddedAcm, outcomes: Outcomes
) -> None:
    assert isinstance(acm.retriever, PrefetchingRetriever)
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client:
        await _say(client, "I live in Paris with my partner Sam.")
        await wait_until_indexed(acm)
        assert outcomes["warmed"] == 0  # a session this gateway never served is not warmed
        await client.fetch(SCOPE_PB, "Where do I live?", budget_tokens=500)
        await _say(client, "My sister Jane adopted a puppy called Biscuit.")
        await wait_until_indexed(acm)  # every group, this gateway's warm-up included, is at the end
        assert outcomes["warmed"] >= 1
        decoded = outcomes["decoded"]
        answer = await client.fetch(SCOPE_PB, "Who adopted a puppy?", budget_tokens=500)
        assert answer.from_prefetch and any("Biscuit" in m.text for m in answer.memories)
        assert outcomes["decoded"] == decoded  # the hint had the pool decoded before the Fetch


async def test_signals_warm_known_sessions_and_unknown_ones_are_dropped_and_counted(acm: EmbeddedAcm) -> None:
    key = await acm.stores["gateway"].api_keys.by_hash(key_hash(acm.api_key))
    assert key is not None
    counters = acm.anticipate.signals
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client:
        await _say(client, "My sister Jane adopted a puppy called Biscuit.")
        await wait_until_indexed(acm)

    async def signal(scope: Scope) -> None:
        handled = counters.accepted + counters.dropped_unknown_session
        env = envelope(scope)
        env.prefetch_signal.query = "Biscuit"
        env.prefetch_signal.entity_names.append("Jane")
        await acm.bus.publish(topics.PREFETCH_SIGNALS, scope.session_key, signed(env, key))
        for _ in range(1500):  # up to 30 s for anticipate to handle it
            if counters.accepted + counters.dropped_unknown_session > handled:
                return
            await asyncio.sleep(0.02)
        pytest.fail("anticipate did not handle the prefetch signal")

    await signal(SCOPE)
    assert (counters.accepted, counters.dropped_unknown_session) == (1, 0)
    await signal(Scope(DEV_CLIENT, "acme", "alice", "bot", "never-seen"))
    assert counters.dropped_unknown_session == 1
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client:
        forget = await client.forget(SCOPE_PB, "session")
        await client.wait_job(SCOPE_PB, forget, timeout_s=60)
    await wait_until_indexed(acm)
    await signal(SCOPE)  # forgotten: dropped too
    assert (counters.accepted, counters.dropped_unknown_session) == (1, 2)


async def _pool_current(acm: EmbeddedAcm) -> None:
    """Until anticipate stored a pool built at the scope's current write generations."""
    for _ in range(200):
        pool = await load_pool(acm.cache, SCOPE)
        if pool is not None and list(pool.generations) == await read_generations(acm.cache, SCOPE):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("anticipate never built a current pool")


async def test_a_pool_already_built_at_the_current_generations_is_not_rebuilt(acm: EmbeddedAcm) -> None:
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client:
        await _say(client, "I live in Paris with my partner Sam.")
        await _pool_current(acm)
        warm = acm.anticipate.warm
        before = warm.coalesced
        # Nothing was written since the last pool: the same event again (a backlog) costs no retrieval.
        await warm(SCOPE, ("fact",))
        assert warm.coalesced == before + 1
        # A write bumps the generations: the next warm-up rebuilds.
        await _say(client, "Sam and I are planning a trip to Kyoto in April.")
        await _pool_current(acm)
        rebuilt = warm.coalesced
        await warm(SCOPE, ("fact",))  # the pool the write's own event built is current again
        assert warm.coalesced == rebuilt + 1
        served = await client.fetch(SCOPE_PB, "Kyoto trip with Sam?", budget_tokens=500)
        assert served.from_prefetch and any("Kyoto" in m.text for m in served.memories)
