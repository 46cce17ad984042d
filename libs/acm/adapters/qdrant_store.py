"""VectorStore over qdrant-client: a real Qdrant server, or qdrant-client's local mode (tests, tiny installs).

Visibility (acm.domain.scope.visible) and erasure (forgets) are expressed as Qdrant filters, so the store
never returns or deletes a point outside the rule, whatever the caller asks for.
"""

from __future__ import annotations

import asyncio
import math
import warnings
from collections.abc import Sequence

from qdrant_client import AsyncQdrantClient, models
from qdrant_client.http.exceptions import UnexpectedResponse

from acm.adapters import qdrant_terms as qt
from acm.domain.scope import ForgetLevel, Scope
from acm.ports.stores import VectorPoint

DEFAULT_COLLECTION = "acm_memories"
LOCAL_SCHEME = "qdrant-local://"


def _eq(key: str, value: str) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _ids(memory_ids: Sequence[str]) -> list[models.ExtendedPointId]:
    return [str(qt.point_id(m)) for m in memory_ids]


def _condition(c: qt.Condition) -> models.Condition:
    if isinstance(c, qt.Terms):
        return to_filter(c)
    if isinstance(c, qt.HasIds):
        return models.HasIdCondition(has_id=_ids(c.memory_ids))
    return _eq(*c)


def to_filter(terms: qt.Terms) -> models.Filter:
    """The shared filter terms (qdrant_terms) as a qdrant-client filter."""
    return models.Filter(must=[_condition(c) for c in terms.must], should=[_condition(c) for c in terms.should] or None)


class QdrantVectorStore(qt.ScopedSearch):
    """VectorStore over an AsyncQdrantClient (server or local mode); one collection, cosine distance."""

    def __init__(self, client: AsyncQdrantClient, collection: str = DEFAULT_COLLECTION, timeout_s: float = 5.0) -> None:
        self._client = client
        self._collection = collection
        self._timeout_s = timeout_s

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        collection: str = DEFAULT_COLLECTION,
        timeout_s: float = 5.0,
        api_key: str | None = None,
    ) -> QdrantVectorStore:
        """``http(s)://host:6333`` (server), ``qdrant-local:///abs/path`` (local mode on disk) or
        ``qdrant-local://:memory:`` (local mode in memory)."""
        if url.startswith(("http://", "https://")):
            # The client's own timeout is a whole number of seconds; asyncio.timeout does the precise one.
            client = AsyncQdrantClient(url=url, api_key=api_key, timeout=max(1, math.ceil(timeout_s)))
        elif url.startswith(LOCAL_SCHEME):
            rest = url[len(LOCAL_SCHEME) :]
            if rest == ":memory:":
                client = AsyncQdrantClient(location=":memory:")
            elif rest.startswith("/"):
                client = AsyncQdrantClient(path=rest)
            else:
                raise ValueError(f"{url!r}: use qdrant-local:///absolute/path or qdrant-local://:memory:")
        else:
            raise ValueError(f"{url!r}: expected http(s)://host:port or qdrant-local://...")
        return cls(client, collection, timeout_s)

    async def ensure(self, dim: int) -> None:
        async with asyncio.timeout(self._timeout_s):
            if await self._client.collection_exists(self._collection):
                await self._check_dim(dim)
            else:
                try:
                    await self._client.create_collection(
                        self._collection,
                        vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE),
                    )
                except (UnexpectedResponse, ValueError):
                    # Another process created it first (409 from a server, ValueError in local mode).
                    if not await self._client.collection_exists(self._collection):
                        raise
                    await self._check_dim(dim)
            with warnings.catch_warnings():
                # Local mode warns that indexes do nothing there; a server needs them for fast filters.
                warnings.filterwarnings("ignore", message="Payload indexes have no effect")
                for field in qt.INDEXED_FIELDS:
                    schema: models.PayloadSchemaType | models.KeywordIndexParams = (
                        # is_tenant lets a server co-locate one client's points on disk.
                        models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
                        if field == "client_id"
                        else models.PayloadSchemaType.KEYWORD
                    )
                    await self._client.create_payload_index(
                        self._collection, field_name=field, field_schema=schema, wait=True
                    )

    async def _check_dim(self, dim: int) -> None:
        info = await self._client.get_collection(self._collection)
        params = info.config.params.vectors
        size = params.size if isinstance(params, models.VectorParams) else None
        if size != dim:
            raise ValueError(f"collection {self._collection!r} holds {size}-d vectors, not {dim}-d")

    async def upsert(self, points: Sequence[VectorPoint]) -> None:
        if not points:
            return
        structs = [
            models.PointStruct(
                id=str(qt.point_id(p.memory_id)), vector=[float(x) for x in p.vector], payload=qt.point_payload(p)
            )
            for p in points
        ]
        async with asyncio.timeout(self._timeout_s):
            # wait=True: a search right after the upsert must see it.
            await self._client.upsert(self._collection, points=structs, wait=True)

    async def _nearest(self, vector: list[float], visible: qt.Terms, limit: int) -> list[tuple[object, float]]:
        async with asyncio.timeout(self._timeout_s):
            response = await self._client.query_points(
                self._collection, query=vector, query_filter=to_filter(visible), limit=limit, with_payload=False
            )
        return [(p.id, p.score) for p in response.points]

    async def forget(self, scope: Scope, level: ForgetLevel) -> None:
        async with asyncio.timeout(self._timeout_s):
            await self._client.delete(
                self._collection,
                points_selector=models.FilterSelector(filter=to_filter(qt.forgetting(scope, level))),
                wait=True,
            )

    async def delete(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        mine, shared = qt.deletions(scope, tuple(memory_ids))
        async with asyncio.timeout(self._timeout_s):
            for doomed in (mine, shared):
                await self._client.delete(
                    self._collection, points_selector=models.FilterSelector(filter=to_filter(doomed)), wait=True
                )

    async def count(self, model: str | None = None) -> int:
        only = None if model is None else models.Filter(must=[_eq("model", model)])
        async with asyncio.timeout(self._timeout_s):
            result = await self._client.count(self._collection, count_filter=only, exact=True)
        return result.count

    async def models_of(self, memory_ids: Sequence[str]) -> dict[str, str]:
        if not memory_ids:
            return {}
        async with asyncio.timeout(self._timeout_s):
            records = await self._client.retrieve(
                self._collection, ids=_ids(memory_ids), with_payload=["model"], with_vectors=False
            )
        return {qt.memory_id_of(r.id): str((r.payload or {}).get("model", "")) for r in records}

    async def reset(self, dim: int) -> None:
        async with asyncio.timeout(self._timeout_s):
            await self._client.delete_collection(self._collection)
        await self.ensure(dim)

    async def close(self) -> None:
        async with asyncio.timeout(self._timeout_s):
            await self._client.close()
