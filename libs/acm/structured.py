"""Ask an LLM for a structured answer: validate against the model's JSON schema, retry, or give up loudly.

Callers fall back to their deterministic path when StructuredAnswerFailed is raised; the reasons say what
went wrong so the fallback is logged and counted, never silent."""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from acm.ports.llm import Llm, LlmError

M = TypeVar("M", bound=BaseModel)


class StructuredAnswerFailed(Exception):
    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


async def ask_structured(llm: Llm, model: type[M], *, system: str, prompt: str, attempts: int = 2) -> M:
    """The first answer that validates against ``model``; each failure is fed back on the next try."""
    schema = model.model_json_schema()
    reasons: list[str] = []
    ask = prompt
    for attempt in range(1, max(1, attempts) + 1):
        try:
            raw = await llm.complete_json(system=system, prompt=ask, schema=schema, name=model.__name__)
            return model.model_validate(raw)
        except LlmError as exc:
            reasons.append(f"attempt {attempt}: endpoint: {exc}")
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(root)"
            reasons.append(f"attempt {attempt}: invalid answer at {where}: {first['msg']}")
            ask = (
                f"{prompt}\n\nYour previous answer was invalid ({where}: {first['msg']}). "
                f"Answer with one JSON object matching this schema exactly:\n{json.dumps(schema)}"
            )
    raise StructuredAnswerFailed(reasons)
