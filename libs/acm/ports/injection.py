"""The second-stage injection check ingest asks about a turn the rules cleared (acm.domain.injection_meaning)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from acm.ports.embedder import Embedder


class InjectionMeaning(Protocol):
    embedder: Embedder  # the model the check's weights fit; pieces() are embedded with it

    def pieces(self, text: str) -> list[str]:
        """The texts to embed (with ``embedder``) for orders_in; a caller may embed several texts' pieces at once
        (ingest: with the facts of the turns in flight)."""

    def orders_in(self, text: str, pieces: Sequence[str], vectors: Sequence[Sequence[float]]) -> tuple[str, ...]:
        """The pieces of ``text`` whose meaning is an order to the agent (over the margin; empty when none is), from
        the vectors of its pieces (as pieces() gave them). Not blocking."""
