"""An optional language model behind an OpenAI-compatible endpoint.

ACM works without one (deterministic rules everywhere); when configured, ingest may use it to extract
facts, compact to write summaries and architect to draft schemas. Answers are always validated by the
caller against a JSON schema (see acm.structured), never trusted as they come."""

from __future__ import annotations

from typing import Any, Protocol


class LlmError(Exception):
    """The endpoint failed or answered something that is not a JSON object."""


class Llm(Protocol):
    model: str

    async def complete_json(self, *, system: str, prompt: str, schema: dict[str, Any], name: str) -> dict[str, Any]:
        """Ask for one JSON object following ``schema``. Raises LlmError (timeouts included)."""
