"""examples/agent_loop.py against a running embedded ACM: every model call is preceded by a Fetch, every turn
(user, tool call, tool output, answer) is ingested, and the last session, a new conversation, is answered from
what ACM recalls of the first; with an empty memory (another user) the same model cannot answer. Also the
script as a user runs it, starting its own embedded ACM."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType

import pytest

from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_loop", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["agent_loop"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
async def acm(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedAcm]:
    data = tmp_path_factory.mktemp("agent-loop")
    settings = EmbeddedSettings(data_dir=data, listen_addr="127.0.0.1:0", embedder="wordllama", prefetch=False)
    async with EmbeddedAcm(settings) as embedded:
        yield embedded


async def test_the_loop_remembers_across_sessions(acm: EmbeddedAcm) -> None:
    loop = _example()
    out = await loop.run(f"127.0.0.1:{acm.port}", acm.api_key, user="dana")
    assert out.fetches == out.model_calls == 4  # one Fetch before each model call (the tool step calls twice)
    assert out.ingested == 3 + 3 + 2  # 3 user turns, 3 answers, 1 tool call and its output
    assert "tool[lookup_order]" in "\n".join(out.lines)
    assert out.answers[1] == "Your order PO-4410 has shipped with DHL; it should arrive on 4 December."
    assert out.answers[-1] == "DHL has order PO-4410, and the restaurant must leave out peanuts.", out.lines


async def test_without_the_memory_the_model_does_not_know(acm: EmbeddedAcm) -> None:
    loop = _example()
    model = loop.ScriptedModel([step for _, steps in loop.SESSIONS for step in steps])
    last = loop.SESSIONS[-1][1][0]
    assert model("", last.user, None).text.startswith("I don't know (DHL, peanuts")  # the script can fail


def test_the_script_runs_offline_with_its_own_acm() -> None:
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    stdout = done.stdout.decode()
    assert "assistant: DHL has order PO-4410, and the restaurant must leave out peanuts." in stdout, stdout
    assert "(4 model calls, 4 fetches, 8 turns ingested)" in stdout, stdout
