"""The read path as one port: what a Fetch returns, whoever serves it (acm.read.ReadSide, in the gateway's
process in both modes)."""

from __future__ import annotations

from typing import Protocol

from acm.domain.bundle import ContextBundle
from acm.domain.retrieved import RetrievalQuery


class ContextReader(Protocol):
    async def fetch(self, request: RetrievalQuery) -> ContextBundle:
        """The context for ``request``: its scope (with a session: the session's assembled context), its
        question (``text``; empty: the session's latest turns stand for it), its budget (``budget_tokens``,
        already checked by the caller, in ``encoding``) and its time (``as_of``: the present a time window
        in the question is read against). Raises ContextDoesNotFit when not even a session's pinned state
        fits, ValueError for an invalid query."""
