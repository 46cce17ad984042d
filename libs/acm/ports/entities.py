"""Ingest's entity registry: what entity resolution reads and learns (acm_ingest.usecases). The entity graph
itself belongs to retrieve; ingest keeps here only the entities, their names and aliases, in its own store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from acm.domain.models import Entity
from acm.domain.scope import ALL_TIERS, ForgetLevel, Scope, Tier


class EntityRegistry(Protocol):
    async def find(self, scope: Scope, names: Sequence[str], tiers: tuple[Tier, ...] = ALL_TIERS) -> list[Entity]:
        """Visible entities whose name or an alias equals one of ``names`` (case-insensitive), narrowest tier
        first, then by name and id."""

    async def upsert(self, entities: Sequence[Entity]) -> None:
        """Writes each entity (name, type, owner); its aliases are added to those it had (never dropped: two
        turns learning two aliases at once keep both). An id owned by another client is left alone."""

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        """Erases the entities the level owns (a session owns none); returns how many."""
