"""The payload and the scope filters both Qdrant adapters share, in neither client's classes.

qdrant_store (qdrant-client) and edge_store (qdrant-edge, which must not import qdrant-client: ≈1.7 s) store
the same payload and filter it by the same rules; each turns these terms into its own filter objects, so the
visibility and erasure rules are written once.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from acm.domain.scope import ALL_TIERS, ForgetLevel, Scope, Tier, forget_columns, owner_columns
from acm.ports.stores import VectorPoint

# Fields every read or erase filters on; a keyword index on each lets the engine pick candidates by payload.
INDEXED_FIELDS: tuple[str, ...] = ("client_id", "customer_id", "user_id", "tier", "model")


@dataclass(frozen=True)
class HasIds:
    """Only the points of these memory ids."""

    memory_ids: tuple[str, ...]


@dataclass(frozen=True)
class Terms:
    """A filter: every ``must`` holds and, when there are any, at least one ``should``. A condition is a
    ``(key, value)`` keyword match, a set of ids, or a nested filter."""

    must: tuple[Condition, ...]
    should: tuple[Condition, ...] = ()


Condition = tuple[str, str] | HasIds | Terms


def point_payload(point: VectorPoint) -> dict[str, str | float]:
    """The payload both Qdrant adapters store: the owner's ids as flat keywords ("" where a tier has none)."""
    return {
        "memory_id": point.memory_id,
        **owner_columns(point.owner),
        "layer": point.layer.value,
        "session_id": point.session_id,
        "created_at": point.created_at.timestamp(),
        "model": point.model,
    }


@lru_cache(maxsize=65_536)
def point_id(memory_id: str) -> uuid.UUID:
    """Qdrant ids must be uuids or ints; memory ids are 32-hex uuids (a malformed one raises ValueError).
    Cached: a search among a person's facts names hundreds of ids, the same ones query after query."""
    return uuid.UUID(memory_id)


def memory_id_of(pid: object) -> str:
    """Back from a Qdrant id (str or UUID, depending on the engine) to the canonical 32-hex memory id."""
    return pid.hex if isinstance(pid, uuid.UUID) else uuid.UUID(str(pid)).hex


def visibility(scope: Scope, tiers: tuple[Tier, ...], model: str) -> Terms:
    """acm.domain.scope.visible, among the vectors of ``model``. ``tiers`` must be non-empty: an empty
    ``should`` matches all."""
    if not tiers:
        raise ValueError("a visibility filter needs at least one tier")
    should: list[Condition] = []
    if Tier.CLIENT in tiers:
        should.append(("tier", Tier.CLIENT.value))
    if Tier.CUSTOMER in tiers:
        should.append(Terms(must=(("tier", Tier.CUSTOMER.value), ("customer_id", scope.customer_id))))
    if Tier.USER in tiers:
        should.append(
            Terms(must=(("tier", Tier.USER.value), ("customer_id", scope.customer_id), ("user_id", scope.user_id)))
        )
    return Terms(must=(("client_id", scope.client_id), ("model", model)), should=tuple(should))


def visible_among(scope: Scope, tiers: tuple[Tier, ...], model: str, among: tuple[str, ...] | None) -> Terms:
    """``visibility``, narrowed to the points of ``among`` when given."""
    visible = visibility(scope, tiers, model)
    return visible if among is None else Terms(must=(visible, HasIds(among)))


class ScopedSearch(ABC):
    """VectorStore.search for both adapters: what can find nothing asks neither client, and every search is
    narrowed by ``visible_among``; each adapter runs the nearest-neighbour query its own way."""

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
        visible = visible_among(scope, tiers, model, None if among is None else tuple(among))
        found = await self._nearest([float(x) for x in vector], visible, limit)
        return [(memory_id_of(pid), score) for pid, score in found]

    @abstractmethod
    async def _nearest(self, vector: list[float], visible: Terms, limit: int) -> Iterable[tuple[object, float]]:
        """(point id, cosine similarity) of the ``limit`` nearest points that ``visible`` lets through, best first."""


def forgetting(scope: Scope, level: ForgetLevel) -> Terms:
    """acm.domain.scope.forgets: each level narrows the previous one by one id (forget_columns)."""
    return Terms(must=tuple(forget_columns(scope, level)))


def deletions(scope: Scope, memory_ids: tuple[str, ...]) -> tuple[Terms, Terms]:
    """What deleting ``memory_ids`` for ``scope``'s user may remove: (that user's own points, shared-tier
    points of the scope). Shared-tier points go by id only after a user's Forget erased what that user alone
    said."""
    ids = HasIds(memory_ids)
    mine = Terms(must=(*forgetting(scope, ForgetLevel.USER).must, ("tier", Tier.USER.value), ids))
    shared = Terms(
        must=(("client_id", scope.client_id), ids),
        should=(
            Terms(must=(("tier", Tier.CUSTOMER.value), ("customer_id", scope.customer_id))),
            ("tier", Tier.CLIENT.value),
        ),
    )
    return mine, shared
