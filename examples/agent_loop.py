"""An agent loop on ACM that runs offline: a scripted model stands in for the LLM, so the loop itself is what
you read. Before each model call the agent fetches its context from ACM; every user turn, tool call and tool
output goes back to ACM. The last session is a new conversation: the model answers from what ACM recalls of
the earlier ones, and says it does not know when the context lacks it.

    python examples/agent_loop.py                       # starts an embedded ACM of its own in a temporary folder
    python examples/agent_loop.py --addr 127.0.0.1:50051 --api-key "$ACM_API_KEY"   # a running ACM

Swap ScriptedModel for a real model: it receives the same context string a prompt would.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acm.client import AcmClient
from acm.domain.models import Role
from acm.v1 import common_pb2, gateway_pb2


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    text: str


@dataclass(frozen=True)
class Step:
    """What the scripted model does for one user message: optionally call a tool, then answer. The answer is
    given only when every word of `needs` is in the context ACM fetched (or in the tool's output); otherwise the
    model admits it does not know, as a model without the memory would."""

    user: str
    answer: str
    needs: tuple[str, ...] = ()
    tool: ToolCall | None = None


@dataclass
class ScriptedModel:
    steps: list[Step]
    calls: list[str] = field(default_factory=list)  # the context each call saw, in order

    def __call__(self, context: str, user: str, tool_output: str | None) -> ToolCall | Answer:
        self.calls.append(context)
        step = next(s for s in self.steps if s.user == user)
        if step.tool is not None and tool_output is None:
            return step.tool
        seen = context + "\n" + (tool_output or "")
        missing = [word for word in step.needs if word.lower() not in seen.lower()]
        return Answer(step.answer if not missing else f"I don't know ({', '.join(missing)} not in my context).")


def lookup_order(order_id: str) -> dict[str, str]:
    """A tool with a fixed answer (an order system, offline)."""
    return {"order_id": order_id, "status": "shipped", "carrier": "DHL", "eta": "2026-12-04"}


TOOLS: dict[str, Callable[..., dict[str, str]]] = {"lookup_order": lookup_order}

SESSIONS: list[tuple[str, list[Step]]] = [
    (
        "monday",
        [
            Step("Hi, I'm Dana. I moved to Porto in March and I'm allergic to peanuts.", "Nice to meet you, Dana!"),
            Step(
                "Can you check my order PO-4410?",
                "Your order PO-4410 has shipped with DHL; it should arrive on 4 December.",
                needs=("DHL",),
                tool=ToolCall("lookup_order", {"order_id": "PO-4410"}),
            ),
        ],
    ),
    (
        "friday",  # a new conversation: nothing of monday's is in the prompt unless ACM brings it back
        [
            Step(
                "Which carrier has my order PO-4410, and what must the restaurant leave out of my meal?",
                "DHL has order PO-4410, and the restaurant must leave out peanuts.",
                needs=("DHL", "peanuts"),
            ),
        ],
    ),
]


@dataclass
class Transcript:
    lines: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    fetches: int = 0
    model_calls: int = 0
    ingested: int = 0


async def run(addr: str, api_key: str, customer: str = "acme", user: str = "dana", budget: int = 600) -> Transcript:
    """The loop: remember the user's turn, then fetch → model → (tool → remember call and output →) answer."""
    out = Transcript()
    model = ScriptedModel([step for _, steps in SESSIONS for step in steps])
    async with AcmClient(addr, api_key) as acm:

        async def remember(scope: common_pb2.Scope, text: str, role: Role, tool_name: str = "") -> None:
            accepted = await acm.ingest(scope, text, role, tool_name=tool_name)
            # Waiting keeps the example deterministic (the next Fetch sees this turn); an agent in a hurry
            # does not wait: ACM ingests in the background and the session's recent turns follow.
            job = await acm.wait_job(scope, accepted.job_id, timeout_s=60)
            if job.status != gateway_pb2.JOB_STATUS_DONE:
                raise RuntimeError(f"ACM could not ingest a turn: {job.error}")
            out.ingested += 1

        for session, steps in SESSIONS:
            scope = common_pb2.Scope(customer_id=customer, user_id=user, agent_id="concierge", session_id=session)
            out.lines.append(f"--- session {session}")
            for step in steps:
                out.lines.append(f"user: {step.user}")
                await remember(scope, step.user, Role.USER)
                tool_output: str | None = None
                while True:
                    fetched = await acm.fetch(scope, step.user, budget_tokens=budget)
                    out.fetches += 1
                    action = model(fetched.context, step.user, tool_output)
                    out.model_calls += 1
                    if isinstance(action, Answer):
                        out.lines.append(f"assistant: {action.text}")
                        out.answers.append(action.text)
                        await remember(scope, action.text, Role.ASSISTANT)
                        break
                    call = f"{action.name}({json.dumps(action.arguments)})"
                    out.lines.append(f"assistant → tool: {call}")
                    await remember(scope, f"calling {call}", Role.ASSISTANT)
                    tool_output = json.dumps(TOOLS[action.name](**action.arguments))
                    out.lines.append(f"tool[{action.name}]: {tool_output}")
                    await remember(scope, tool_output, Role.TOOL, tool_name=action.name)
    return out


async def _main(args: argparse.Namespace) -> None:
    if args.addr:
        transcript = await run(args.addr, args.api_key)
    else:
        from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

        with tempfile.TemporaryDirectory() as data:
            settings = EmbeddedSettings(data_dir=Path(data), listen_addr="127.0.0.1:0", embedder="wordllama")
            async with EmbeddedAcm(settings) as embedded:
                transcript = await run(f"127.0.0.1:{embedded.port}", embedded.api_key)
    print("\n".join(transcript.lines))
    print(f"({transcript.model_calls} model calls, {transcript.fetches} fetches, {transcript.ingested} turns ingested)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--addr", help="a running ACM gateway (default: start an embedded one)")
    parser.add_argument("--api-key", help="its API key (with --addr)")
    asyncio.run(_main(parser.parse_args()))
