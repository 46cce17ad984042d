"""VectorStore over qdrant-client: a real Qdrant server, or qdrant-client's local mode (tests, tiny installs).

Visibility (acm.domain.scope.visible) and erasure (forgets) are expressed as Qdrant filters, so the store
never returns or deletes a point outside the rule, whatever the caller asks for.
"""

from __future__ import annotations

import asyncio
import math
import uuid
import warnings
from collections.abc import Sequence

from qdrant_client import AsyncQdrantClient, models
from qdrant_client.http.exceptions import UnexpectedResponse

from acm.domain.scope import ALL_TIERS, ForgetLevel, Scope, Tier
from acm.ports.stores import VectorPoint

DEFAULT_COLLECTION = "acm_memories"
LOCAL_SCHEME = "qdrant-local://"
# Fields every read or erase filters on; a keyword index on each keeps filtered search cheap on a server.
INDEXED_FIELDS: tuple[str, ...] = ("client_id", "customer_id", "user_id", "tier", "model")


def point_payload(point: VectorPoint) -> dict[str, str | float]:
    """The payload both Qdrant adapters store: the owner's ids as flat keywords ("" where a tier has none)."""
    owner = point.owner
    return {
        "memory_id": point.memory_id,
        "client_id": owner.client_id,
        "customer_id": owner.customer_id,
        "user_id": owner.user_id,
        "tier": owner.tier.value,
        "layer": point.layer.value,
        "session_id": point.session_id,
        "created_at": point.created_at.timestamp(),
        "model": point.model,
    }


def point_id(memory_id: str) -> uuid.UUID:
    """Qdrant ids must be uuids or ints; memory ids are 32-hex uuids (a malformed one raises ValueError)."""
    return uuid.UUID(memory_id)


def memory_id_of(pid: object) -> str:
    """Back from a Qdrant id (str or UUID, depending on the engine) to the canonical 32-hex memory id."""
    return pid.hex if isinstance(pid, uuid.UUID) else uuid.UUID(str(pid)).hex


def _eq(key: str, value: str) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def visibility_filter(scope: Scope, tiers: tuple[Tier, ...], model: str) -> models.Filter:
    """acm.domain.scope.visible, among the vectors of ``model``, as a filter. ``tiers`` must be non-empty: an
    empty ``should`` matches all."""
    if not tiers:
        raise ValueError("visibility_filter needs at least one tier")
    should: list[models.Condition] = []
    if Tier.CLIENT in tiers:
        should.append(_eq("tier", Tier.CLIENT.value))
    if Tier.CUSTOMER in tiers:
        should.append(models.Filter(must=[_eq("tier", Tier.CUSTOMER.value), _eq("customer_id", scope.customer_id)]))
    if Tier.USER in tiers:
        should.append(
            models.Filter(
                must=[
                    _eq("tier", Tier.USER.value),
                    _eq("customer_id", scope.customer_id),
                    _eq("user_id", scope.user_id),
                ]
            )
        )
    return models.Filter(must=[_eq("client_id", scope.client_id), _eq("model", model)], should=should)


def forget_filter(scope: Scope, level: ForgetLevel) -> models.Filter:
    """acm.domain.scope.forgets as a filter: each level narrows the previous one by one id."""
    must: list[models.Condition] = [_eq("client_id", scope.client_id)]
    if level is not ForgetLevel.CLIENT:
        must.append(_eq("customer_id", scope.customer_id))
    if level in (ForgetLevel.USER, ForgetLevel.SESSION):
        must.append(_eq("user_id", scope.user_id))
    if level is ForgetLevel.SESSION:
        must.append(_eq("session_id", scope.session_id))
    return models.Filter(must=must)


class QdrantVectorStore:
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
                for field in INDEXED_FIELDS:
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
                id=str(point_id(p.memory_id)), vector=[float(x) for x in p.vector], payload=point_payload(p)
            )
            for p in points
        ]
        async with asyncio.timeout(self._timeout_s):
            # wait=True: a search right after the upsert must see it.
            await self._client.upsert(self._collection, points=structs, wait=True)

    async def search(
        self,
        scope: Scope,
        vector: Sequence[float],
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
        among: Sequence[str] | None = None,
        *,
        model: str,
    ) -> list[tuple[str, float]]:
        if not tiers or limit <= 0 or (among is not None and not among):
            return []
        visible = visibility_filter(scope, tiers, model)
        if among is not None:
            ids: list[models.ExtendedPointId] = [point_id(m) for m in among]
            visible = models.Filter(must=[visible, models.HasIdCondition(has_id=ids)])
        async with asyncio.timeout(self._timeout_s):
            response = await self._client.query_points(
                self._collection,
                query=[float(x) for x in vector],
                query_filter=visible,
                limit=limit,
                with_payload=False,
            )
        return [(memory_id_of(p.id), p.score) for p in response.points]

    async def forget(self, scope: Scope, level: ForgetLevel) -> None:
        async with asyncio.timeout(self._timeout_s):
            await self._client.delete(
                self._collection,
                points_selector=models.FilterSelector(filter=forget_filter(scope, level)),
                wait=True,
            )

    async def delete(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        own = list(forget_filter(scope, ForgetLevel.USER).must or [])
        ids = models.HasIdCondition(has_id=[str(point_id(m)) for m in memory_ids])
        mine = models.Filter(must=[*own, _eq("tier", "user"), ids])
        # Shared-tier points go by id only after a user's Forget erased what that user alone said.
        shared = models.Filter(
            must=[_eq("client_id", scope.client_id), ids],
            should=[
                models.Filter(must=[_eq("tier", "customer"), _eq("customer_id", scope.customer_id)]),
                _eq("tier", "client"),
            ],
        )
        async with asyncio.timeout(self._timeout_s):
            for doomed in (mine, shared):
                await self._client.delete(
                    self._collection, points_selector=models.FilterSelector(filter=doomed), wait=True
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
                self._collection, ids=[str(point_id(m)) for m in memory_ids], with_payload=["model"], with_vectors=False
            )
        return {memory_id_of(r.id): str((r.payload or {}).get("model", "")) for r in records}

    async def reset(self, dim: int) -> None:
        async with asyncio.timeout(self._timeout_s):
            await self._client.delete_collection(self._collection)
        await self.ensure(dim)

    async def close(self) -> None:
        async with asyncio.timeout(self._timeout_s):
            await self._client.close()
