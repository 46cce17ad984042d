"""acm_langgraph.AcmStore against a running embedded ACM: LangGraph's store operations (put, get, overwrite,
delete, search by meaning and by filter, list_namespaces with conditions and depth) kept as ACM memories, one
user's items invisible to another, a delete that leaves nothing in ACM, the sync API from a worker thread,
and the store inside a compiled LangGraph graph."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import MatchCondition

from acm.channels import open_channel
from acm.v1 import common_pb2, memories_pb2
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_cli.memories import MemoryCalls
from acm_langgraph import TOOL_NAME, AcmStore
from acm_langgraph.store import matches


@pytest.fixture(scope="module")
async def acm(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedAcm]:
    data = tmp_path_factory.mktemp("langgraph")
    settings = EmbeddedSettings(data_dir=data, listen_addr="127.0.0.1:0", embedder="wordllama", prefetch=False)
    async with EmbeddedAcm(settings) as embedded:
        yield embedded


@pytest.fixture
async def store(acm: EmbeddedAcm) -> AsyncIterator[AcmStore]:
    user = f"u{uuid.uuid4().hex[:8]}"  # a user of its own per test (the module shares one ACM)
    async with AcmStore.connect(f"127.0.0.1:{acm.port}", acm.api_key, "acme", user) as s:
        yield s


async def _all_memories(acm: EmbeddedAcm, user: str) -> list[memories_pb2.StoredMemory]:
    channel = open_channel(f"127.0.0.1:{acm.port}", None)
    try:
        scope = common_pb2.Scope(customer_id="acme", user_id=user)
        request = memories_pb2.ListMemoriesRequest(scope=scope, include_stale=True, page_size=500)
        return list((await MemoryCalls(channel, acm.api_key).list_memories(request)).memories)
    finally:
        await channel.close()


async def test_put_get_overwrite_delete(acm: EmbeddedAcm, store: AcmStore) -> None:
    ns = ("memories", "profile")
    value = {"food": "ramen", "spicy": True, "rating": 4.5, "tags": ["noodles", "soup"], "nested": {"a": 1}}
    await store.aput(ns, "likes", value)
    got = await store.aget(ns, "likes")
    assert got is not None and got.value == value and got.key == "likes" and got.namespace == ns
    assert got.created_at <= got.updated_at
    assert await store.aget(ns, "other") is None
    assert await store.aget(("memories",), "likes") is None  # the namespace is part of the key

    await store.aput(ns, "likes", {"food": "sushi"})
    again = await store.aget(ns, "likes")
    assert again is not None and again.value == {"food": "sushi"}
    assert again.created_at == got.created_at  # an overwrite keeps when the item was made
    memories = await _all_memories(acm, store.user_id)
    assert not any("ramen" in m.memory.text for m in memories), [m.memory.text for m in memories]
    assert all(m.memory.tool_name == TOOL_NAME for m in memories)

    await store.adelete(ns, "likes")
    assert await store.aget(ns, "likes") is None
    assert await _all_memories(acm, store.user_id) == []  # the turn and everything drawn from it


async def test_search_by_meaning_filter_and_pages(store: AcmStore) -> None:
    ns = ("notes", "alice")
    await store.aput(ns, "n1", {"text": "Alice is allergic to peanuts", "priority": 3, "meta": {"source": "chat"}})
    await store.aput(
        ns, "n2", {"text": "Alice prefers window seats on flights", "priority": 1, "meta": {"source": "crm"}}
    )
    await store.aput(("notes", "bob"), "n3", {"text": "Bob is allergic to shellfish", "priority": 2})

    found = await store.asearch(("notes",), query="which food allergy?", limit=5)
    keys = [i.key for i in found]
    assert keys and set(keys) <= {"n1", "n2", "n3"}, keys
    assert keys[0] in {"n1", "n3"}, keys  # the allergy notes rank above the seat preference
    assert all(i.score is not None for i in found)
    assert [i.key for i in await store.asearch(("notes", "alice"), query="allergic to peanuts")][:1] == ["n1"]

    everything = await store.asearch(("notes",), limit=10)
    assert {i.key for i in everything} == {"n1", "n2", "n3"} and all(i.score is None for i in everything)
    assert {i.key for i in await store.asearch(("notes",), filter={"priority": {"$gte": 2}})} == {"n1", "n3"}
    assert [i.key for i in await store.asearch(("notes", "alice"), filter={"priority": 1})] == ["n2"]
    assert [i.key for i in await store.asearch(("notes",), filter={"meta.source": "crm"})] == ["n2"]
    assert [i.key for i in await store.asearch(("notes",), filter={"meta": {"source": "chat"}})] == ["n1"]
    first = await store.asearch(("notes",), limit=2)
    rest = await store.asearch(("notes",), limit=2, offset=2)
    assert len(first) == 2 and len(rest) == 1 and {i.key for i in first + rest} == {"n1", "n2", "n3"}
    with pytest.raises(ValueError, match=r"\$regex"):
        await store.asearch(("notes",), filter={"priority": {"$regex": "1"}})


async def test_list_namespaces(store: AcmStore) -> None:
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("z", "b", "c")]:
        await store.aput(ns, "k", {"v": 1})
    assert await store.alist_namespaces() == [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("z", "b", "c")]
    assert await store.alist_namespaces(prefix=("a", "b")) == [("a", "b", "c"), ("a", "b", "d")]
    assert await store.alist_namespaces(suffix=("c",)) == [("a", "b", "c"), ("z", "b", "c")]
    assert await store.alist_namespaces(prefix=("*", "b")) == [("a", "b", "c"), ("a", "b", "d"), ("z", "b", "c")]
    assert await store.alist_namespaces(max_depth=1) == [("a",), ("z",)]
    assert await store.alist_namespaces(limit=1, offset=1) == [("a", "b", "d")]
    assert matches(("a",), MatchCondition("prefix", ("a", "b"))) is False


async def test_users_do_not_see_each_other(acm: EmbeddedAcm, store: AcmStore) -> None:
    await store.aput(("memories",), "secret", {"text": "the vault code is Tangerine-88"})
    async with AcmStore.connect(f"127.0.0.1:{acm.port}", acm.api_key, "acme", "someone-else") as other:
        assert await other.aget(("memories",), "secret") is None
        assert await other.asearch(("memories",), query="vault code Tangerine") == []
        assert await other.alist_namespaces() == []


async def test_sync_api_from_a_worker_thread(store: AcmStore) -> None:
    def work() -> Any:
        store.put(("sync",), "k", {"n": 7})
        return store.get(("sync",), "k")

    item = await asyncio.to_thread(work)
    assert item is not None and item.value == {"n": 7}
    with pytest.raises(RuntimeError, match="aget"):
        store.get(("sync",), "k")  # in the store's own loop the sync call would block it


class State(TypedDict):
    message: str
    recalled: list[str]


async def test_inside_a_langgraph_graph(store: AcmStore) -> None:
    """A graph's node writes to the store and a later run's node searches it: LangGraph hands the node our store."""

    async def remember(state: State, runtime: Runtime[None]) -> dict[str, Any]:
        assert runtime.store is not None
        await runtime.store.aput(("chat", "memories"), uuid.uuid4().hex, {"text": state["message"]})
        return {}

    async def recall(state: State, runtime: Runtime[None]) -> dict[str, Any]:
        assert runtime.store is not None
        hits = await runtime.store.asearch(("chat",), query=state["message"], limit=3)
        return {"recalled": [h.value["text"] for h in hits]}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=store)
    await graph.ainvoke({"message": "My favourite hiking trail is the Rota Vicentina", "recalled": []})
    out = await graph.ainvoke({"message": "which hiking trail do I like?", "recalled": []})
    assert any("Rota Vicentina" in text for text in out["recalled"]), out
