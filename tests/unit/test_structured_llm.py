"""The OpenAI-compatible adapter over real HTTP, and schema-validated answers with retry."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from acm.adapters.openai_llm import OpenAiCompatibleLlm, llm_from_settings
from acm.structured import StructuredAnswerFailed, ask_structured
from tests.support.fake_llm import fake_llm


class Answer(BaseModel):
    facts: list[str]
    confidence: float


async def test_valid_answer_is_parsed_and_schema_sent() -> None:
    with fake_llm() as server:
        server.answers.append({"facts": ["Ann lives in Oslo"], "confidence": 0.9})
        llm = OpenAiCompatibleLlm(server.url, "m1", api_key="k")
        got = await ask_structured(llm, Answer, system="s", prompt="p")
        await llm.close()
    assert got.facts == ["Ann lives in Oslo"]
    sent = server.requests[0]
    assert sent["model"] == "m1"
    assert sent["response_format"]["json_schema"]["schema"]["required"] == ["facts", "confidence"]


async def test_malformed_answer_is_retried_with_the_reason() -> None:
    with fake_llm() as server:
        server.answers += ['```json\n{"facts": "not a list"}\n```', {"facts": [], "confidence": 0.1}]
        llm = OpenAiCompatibleLlm(server.url, "m1")
        got = await ask_structured(llm, Answer, system="s", prompt="p", attempts=2)
        await llm.close()
    assert got.facts == []
    assert "previous answer was invalid" in server.requests[1]["messages"][1]["content"]


async def test_gives_up_loudly_after_the_attempts() -> None:
    with fake_llm() as server:
        server.answers += ["no json here", 503]
        llm = OpenAiCompatibleLlm(server.url, "m1")
        with pytest.raises(StructuredAnswerFailed) as failed:
            await ask_structured(llm, Answer, system="s", prompt="p", attempts=2)
        await llm.close()
    assert len(failed.value.reasons) == 2
    assert "not a JSON answer" in failed.value.reasons[0]
    assert "HTTP 503" in failed.value.reasons[1]


async def test_unreachable_endpoint_is_an_llm_error() -> None:
    llm = OpenAiCompatibleLlm("http://127.0.0.1:9/v1", "m1", timeout_s=0.5)
    with pytest.raises(StructuredAnswerFailed, match="endpoint"):
        await ask_structured(llm, Answer, system="s", prompt="p", attempts=1)
    await llm.close()


def test_no_url_means_no_llm_and_url_needs_a_model() -> None:
    assert llm_from_settings("", "") is None
    with pytest.raises(ValueError, match="ACM_LLM_MODEL"):
        llm_from_settings("http://x/v1", "")
