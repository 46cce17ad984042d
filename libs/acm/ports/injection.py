"""The second-stage injection check ingest asks about a turn the rules cleared (acm.domain.injection_meaning)."""

from __future__ import annotations

from typing import Protocol

from acm.domain.injection_meaning import MeaningVerdict


class InjectionMeaning(Protocol):
    def instruction(self, text: str) -> MeaningVerdict | None:
        """The verdict when ``text`` means an order to the agent (over the margin), else None. Blocking (it
        embeds): call it off the event loop."""

    def orders(self, text: str) -> tuple[str, ...]:
        """The pieces of ``text`` (sentences, acm.domain.injection_meaning.pieces) whose meaning is an order to the
        agent, over the margin; empty when none is. Blocking (it embeds): call it off the event loop."""
