"""The second-stage injection check ingest asks about a turn the rules cleared (acm.domain.injection_meaning)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from acm.domain.injection_meaning import MeaningPieces
from acm.ports.embedder import Embedder


class InjectionMeaning(Protocol):
    embedder: Embedder  # the model the check's weights fit; pieces().read are embedded with it
    other_embedder: Embedder | None  # the multilingual model's, for pieces().other (None: there are none)

    def pieces(self, text: str) -> MeaningPieces:
        """The texts to embed for orders_in, by embedder; a caller may embed several texts' pieces at once
        (ingest: with the facts of the turns in flight)."""

    def orders_in(
        self,
        text: str,
        pieces: MeaningPieces,
        vectors: Sequence[Sequence[float]],
        other_vectors: Sequence[Sequence[float]] = (),
    ) -> tuple[str, ...]:
        """The pieces of ``text`` whose meaning is an order to the agent (over the margin; empty when none is), from
        the vectors of its pieces (as pieces() gave them: ``read`` by ``embedder``, ``other`` by
        ``other_embedder``). Not blocking."""
