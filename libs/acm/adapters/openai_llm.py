"""OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp server, Ollama's /v1) over httpx."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from acm.ports.llm import LlmError

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)


class OpenAiCompatibleLlm:
    def __init__(self, base_url: str, model: str, api_key: str = "", timeout_s: float = 20.0) -> None:
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s)

    async def complete_json(self, *, system: str, prompt: str, schema: dict[str, Any], name: str) -> dict[str, Any]:
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            "response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": schema}},
        }
        try:
            reply = await self._http.post("/chat/completions", json=body)
        except httpx.HTTPError as exc:  # timeouts included
            raise LlmError(f"{type(exc).__name__}: {exc}") from exc
        if reply.status_code != 200:
            raise LlmError(f"HTTP {reply.status_code}: {reply.text[:200]}")
        try:
            content = reply.json()["choices"][0]["message"]["content"]
            answer = json.loads(_FENCE.sub("", content.strip()))
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LlmError(f"not a JSON answer: {type(exc).__name__}") from exc
        if not isinstance(answer, dict):
            raise LlmError("the answer is JSON but not an object")
        return answer

    async def close(self) -> None:
        await self._http.aclose()


def llm_from_settings(url: str, model: str, api_key: str = "", timeout_s: float = 20.0) -> OpenAiCompatibleLlm | None:
    """None when no endpoint is configured: callers then use their deterministic path."""
    if not url:
        return None
    if not model:
        raise ValueError("ACM_LLM_MODEL must be set when ACM_LLM_URL is")
    return OpenAiCompatibleLlm(url, model, api_key, timeout_s)
