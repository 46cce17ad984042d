"""A LangGraph `BaseStore` whose items are ACM memories, so that a graph's long-term memory is ACM's: scoped to
one customer and user, searchable by meaning, erased by ACM's Forget, and shown to any other agent of that user
through Fetch.

The mapping (docs/integrations.md):
- an item is one turn, said by the assistant with tool_name ``langgraph-store``, whose text is the JSON
  ``{"namespace": [...], "key": ..., "value": {...}, "created_at": ...}``; its turn id is derived from the
  namespace and key (a put of the same key rewrites the same memory), its session from the namespace;
- get, list_namespaces and a search without a query read the store's turns (ListMemories filtered on that tool
  name); a search with a query is ACM's Fetch, ranked by ACM, mapped back to items through the memories'
  source turns; a delete (or a put over an existing key) erases the turn and every memory ingest drew from it.
- values pass through ACM's ingest as any turn does: PII in them is redacted before it is stored.
Reads in one batch see the store as it was before the batch's writes, as LangGraph's InMemoryStore does.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from acm.channels import ClientTls, open_channel
from acm.client import AcmClient
from acm.domain.models import Role
from acm.v1 import common_pb2, gateway_pb2, memories_pb2
from acm_cli.memories import MemoryCalls

log = logging.getLogger(__name__)
TOOL_NAME = "langgraph-store"  # marks the store's turns: ListMemories filters on it
_ITEM_KINDS = ("turn", "flagged_episode")  # the turn's own memory (flagged when the injection guard fired)
_PAGE = 500  # ListMemories' largest page


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()


def turn_id(namespace: tuple[str, ...], key: str) -> str:
    return "lg-" + _digest(list(namespace), key)[:32]


def session_id(namespace: tuple[str, ...]) -> str:
    return "lg-" + _digest(list(namespace))[:24]


@dataclass
class _Stored:
    item: Item | None = None  # None: memories drawn from a turn whose own memory is gone or unreadable
    memory_ids: list[str] = field(default_factory=list)  # the turn's memory and every memory drawn from it


def _parse(memory: common_pb2.Memory, updated_at: datetime) -> Item | None:
    _, _, body = memory.text.partition(": ")  # ingest keeps a turn as "<speaker>: <text>"
    try:
        envelope = json.loads(body)
        namespace = tuple(str(label) for label in envelope["namespace"])
        created = datetime.fromisoformat(envelope["created_at"])
        return Item(
            value=dict(envelope["value"]),
            key=str(envelope["key"]),
            namespace=namespace,
            created_at=created,
            updated_at=updated_at,
        )
    except (ValueError, KeyError, TypeError) as exc:
        # Redaction can break a value's JSON (a phone number outside quotes): the item is unreadable, not lost.
        log.warning("memory %s of the LangGraph store is not an item (%s)", memory.memory_id, exc)
        return None


def matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))


def _compare(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(value, op, operand) for op, operand in wanted.items())
        # A nested object matches when each of its given fields does (JSONB containment, as LangGraph's stores).
        return isinstance(value, dict) and all(_compare(value.get(k), v) for k, v in wanted.items())
    return bool(value == wanted)


def _at(value: dict[str, Any], path: str) -> Any:
    """A filter key's value: "a.b" is field b of field a."""
    found: Any = value
    for part in path.split("."):
        if not isinstance(found, dict):
            return None
        found = found.get(part)
    return found


def _operator(value: Any, op: str, operand: Any) -> bool:
    try:
        match op:
            case "$eq":
                return bool(value == operand)
            case "$ne":
                return bool(value != operand)
            case "$gt":
                return bool(value > operand)
            case "$gte":
                return bool(value >= operand)
            case "$lt":
                return bool(value < operand)
            case "$lte":
                return bool(value <= operand)
    except TypeError:
        return False  # e.g. a string compared with a number: no match, as a filter would say
    raise ValueError(f"unsupported filter operator {op!r}: use $eq, $ne, $gt, $gte, $lt or $lte")


def _passes(item: Item, where: dict[str, Any] | None) -> bool:
    return all(_compare(_at(item.value, k), v) for k, v in (where or {}).items())


class AcmStore(BaseStore):
    """LangGraph's store over ACM's public API, in one customer and user (and agent). Use the async methods
    inside the event loop the store was made in; the sync ones from other threads (LangGraph's sync graphs)."""

    supports_ttl = False

    def __init__(
        self,
        client: AcmClient,
        memories: MemoryCalls,
        customer_id: str,
        user_id: str,
        agent_id: str = "langgraph",
        wait_s: float = 30.0,
        search_budget_tokens: int = 4000,
    ) -> None:
        self.client = client
        self.memories = memories
        self.customer_id, self.user_id, self.agent_id = customer_id, user_id, agent_id
        self.wait_s = wait_s
        self.search_budget_tokens = search_budget_tokens
        self._loop = asyncio.get_running_loop()  # gRPC's channels are bound to it

    @classmethod
    @asynccontextmanager
    async def connect(
        cls,
        addr: str,
        api_key: str,
        customer_id: str,
        user_id: str,
        agent_id: str = "langgraph",
        tls: ClientTls | None = None,
        timeout_s: float = 10.0,
    ) -> AsyncIterator[AcmStore]:
        channel = open_channel(addr, tls)
        async with AcmClient(addr, api_key, timeout_s=timeout_s, tls=tls) as client:
            try:
                yield cls(client, MemoryCalls(channel, api_key, timeout_s), customer_id, user_id, agent_id)
            finally:
                await channel.close()

    def _scope(self, session: str = "") -> common_pb2.Scope:
        return common_pb2.Scope(
            customer_id=self.customer_id, user_id=self.user_id, agent_id=self.agent_id, session_id=session
        )

    # -- reads --------------------------------------------------------------------------------------------

    async def _scan(self) -> dict[str, _Stored]:
        """Every memory of the store, by source turn id."""
        found: dict[str, _Stored] = {}
        token = ""
        while True:
            request = memories_pb2.ListMemoriesRequest(
                scope=self._scope(),
                tool_name=TOOL_NAME,
                role=common_pb2.ROLE_ASSISTANT,
                page_size=_PAGE,
                page_token=token,
            )
            page = await self.memories.list_memories(request)
            for stored in page.memories:
                m = stored.memory
                for source in m.source_turn_ids:
                    entry = found.setdefault(source, _Stored())
                    entry.memory_ids.append(m.memory_id)
                    if m.kind in _ITEM_KINDS and entry.item is None:
                        updated = stored.updated_at.ToDatetime(tzinfo=UTC) if stored.updated_at.seconds else None
                        entry.item = _parse(m, updated or m.created_at.ToDatetime(tzinfo=UTC))
            token = page.next_page_token
            if not token:
                return found

    async def _search(self, op: SearchOp, stored: dict[str, _Stored]) -> list[SearchItem]:
        prefix = MatchCondition("prefix", op.namespace_prefix)
        if op.query:
            fetched = await self.client.fetch(self._scope(), op.query, self.search_budget_tokens)
            ranked: dict[str, tuple[Item, float]] = {}
            for m in fetched.memories:
                if m.tool_name != TOOL_NAME:
                    continue
                for source in m.source_turn_ids:
                    entry = stored.get(source)
                    if entry is not None and entry.item is not None and source not in ranked:
                        ranked[source] = (entry.item, m.score)
            hits = list(ranked.values())
        else:
            items = [s.item for s in stored.values() if s.item is not None]
            hits = [(item, 0.0) for item in sorted(items, key=lambda i: i.updated_at, reverse=True)]
        kept = [(i, s) for i, s in hits if matches(i.namespace, prefix) and _passes(i, op.filter)]
        return [
            SearchItem(i.namespace, i.key, i.value, i.created_at, i.updated_at, score if op.query else None)
            for i, score in kept[op.offset : op.offset + op.limit]
        ]

    @staticmethod
    def _namespaces(op: ListNamespacesOp, stored: dict[str, _Stored]) -> list[tuple[str, ...]]:
        names = {s.item.namespace for s in stored.values() if s.item is not None}
        if op.match_conditions:
            names = {n for n in names if all(matches(n, c) for c in op.match_conditions)}
        if op.max_depth is not None:
            names = {n[: op.max_depth] for n in names}
        return sorted(names)[op.offset : op.offset + op.limit]

    # -- writes -------------------------------------------------------------------------------------------

    async def _settle(self, scope: common_pb2.Scope, job_id: str, what: str) -> None:
        job = await self.client.wait_job(scope, job_id, timeout_s=self.wait_s)
        if job.status != gateway_pb2.JOB_STATUS_DONE:
            raise RuntimeError(f"ACM could not {what}: {job.error or 'job failed'}")

    async def _erase(self, entry: _Stored) -> None:
        scope = self._scope()
        for memory_id in entry.memory_ids:
            accepted = await self.memories.delete(scope, memory_id)
            await self._settle(scope, accepted.job_id, f"delete memory {memory_id}")

    async def _put(self, op: PutOp, stored: dict[str, _Stored]) -> None:
        tid = turn_id(op.namespace, op.key)
        previous = stored.get(tid)
        if previous is not None:
            await self._erase(previous)  # also what ingest drew from the old value
        if op.value is None:
            return
        created = previous.item.created_at if previous is not None and previous.item is not None else None
        envelope = {
            "namespace": list(op.namespace),
            "key": op.key,
            "value": op.value,
            "created_at": (created or datetime.now(UTC)).isoformat(),
        }
        scope = self._scope(session_id(op.namespace))
        text = json.dumps(envelope, ensure_ascii=False, default=str)
        accepted = await self.client.ingest(scope, text, Role.ASSISTANT, turn_id=tid, tool_name=TOOL_NAME)
        await self._settle(scope, accepted.job_id, f"store {op.namespace}/{op.key}")

    # -- BaseStore ----------------------------------------------------------------------------------------

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        stored = await self._scan() if ops else {}
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                entry = stored.get(turn_id(op.namespace, op.key))
                results.append(entry.item if entry is not None else None)
            elif isinstance(op, SearchOp):
                results.append(await self._search(op, stored))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._namespaces(op, stored))
            elif isinstance(op, PutOp):
                puts[(op.namespace, op.key)] = op  # the last write of a key wins
                results.append(None)
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        for put in puts.values():
            await self._put(put, stored)
        return results

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            raise RuntimeError("AcmStore's sync methods block: inside its event loop use aget, aput, asearch, …")
        return asyncio.run_coroutine_threadsafe(self.abatch(list(ops)), self._loop).result()
