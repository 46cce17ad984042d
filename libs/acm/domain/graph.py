"""What one change adds to the entity graph: ingest resolves entities (in its own registry) and says what it
learned on acm.memories.v1; retrieve, the graph's only reader and writer, applies it (acm_retrieve.projection)."""

from __future__ import annotations

from dataclasses import dataclass, field

from acm.domain.models import Entity, Relation
from acm.domain.scope import Owner


@dataclass(frozen=True, slots=True)
class Mentions:
    """A memory (owned by ``owner``, written in ``session_id``) mentions these entities."""

    owner: Owner
    memory_id: str
    entity_ids: tuple[str, ...]
    session_id: str = ""


@dataclass
class GraphChanges:
    """Entities first (a mention or relation needs both its ends in the graph), then mentions and relations."""

    entities: list[Entity] = field(default_factory=list)
    mentions: list[Mentions] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.entities or self.mentions or self.relations)
