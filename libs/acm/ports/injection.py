"""The second-stage injection check ingest asks about a turn the rules cleared (acm.domain.injection_meaning)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from acm.domain.injection_meaning import MeaningVerdict
from acm.ports.embedder import Embedder


class InjectionMeaning(Protocol):
    embedder: Embedder  # the model the check's weights fit; pieces() are embedded with it

    def instruction(self, text: str) -> MeaningVerdict | None:
        """The verdict when ``text`` means an order to the agent (over the margin), else None. Blocking (it
        embeds): call it off the event loop."""

    def orders(self, text: str) -> tuple[str, ...]:
        """The pieces of ``text`` (sentences, acm.domain.injection_meaning.pieces) whose meaning is an order to the
        agent, over the margin; empty when none is. Blocking (it embeds): call it off the event loop."""

    def pieces(self, text: str) -> list[str]:
        """The texts to embed (with ``embedder``) for orders_in; a caller may embed several texts' pieces at once."""

    def orders_in(self, text: str, pieces: Sequence[str], vectors: Sequence[Sequence[float]]) -> tuple[str, ...]:
        """orders(), from the vectors of ``text``'s pieces (as pieces() gave them). Not blocking."""
