"""`acm mcp` through the MCP SDK's own client against a running embedded ACM: the five tools over stdio and
over streamable HTTP (each a process of its own, started as a user would), and in process for the checks of
inputs and refusals: a wrong input, a memory the scope cannot see, a refused key, an ACM that is down are
tool errors of one line, never a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_cli.mcp_server import McpConfig, build_server
from tests.support.ports import unused_ports

ACM = str(Path(sys.executable).parent / "acm")
TOOLS = {"remember", "recall", "forget", "list_memories", "get_memory"}


@pytest.fixture(scope="module")
async def acm(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedAcm]:
    data = tmp_path_factory.mktemp("mcp")
    settings = EmbeddedSettings(data_dir=data, listen_addr="127.0.0.1:0", embedder="wordllama", prefetch=False)
    async with EmbeddedAcm(settings) as embedded:
        yield embedded


def _user() -> str:
    return f"u{uuid.uuid4().hex[:8]}"  # a user of its own per test (the module shares one ACM)


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACM_")}
    env["ACM_DATA_DIR"] = str(tmp)  # logs/cli.log lands there, not in the checkout
    return env


def _text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def _ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, _text(result)
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


def _refused(result: CallToolResult, *words: str) -> str:
    text = _text(result)
    assert result.is_error, text
    assert "Traceback" not in text and 'File "' not in text, text
    assert len(text.splitlines()) == 1, text
    for word in words:
        assert word in text, text
    return text


async def _round_trip(client: Client) -> None:
    """Every tool once, as an agent would use them: remember, recall, list, get, forget one, forget the user."""
    listed = {t.name for t in (await client.list_tools()).tools}
    assert listed == TOOLS, listed

    done = _ok(await client.call_tool("remember", {"text": "I moved to Lisbon in May and my cat is called Miso."}))
    assert done["status"] == "done", done
    assert done["counts"].get("facts", 0) >= 1, done
    tool_out = {"text": '{"order": "PO-7731", "status": "shipped"}', "role": "tool", "tool_name": "orders"}
    assert _ok(await client.call_tool("remember", tool_out))["status"] == "done"

    recalled = _ok(await client.call_tool("recall", {"query": "what is my cat called?", "budget_tokens": 400}))
    assert "Miso" in recalled["context"], recalled
    assert 0 < recalled["context_tokens"] <= 400, recalled
    assert any("Miso" in m["text"] for m in recalled["memories"]), recalled

    page = _ok(await client.call_tool("list_memories", {"kind": "fact", "page_size": 50}))
    miso = [m for m in page["memories"] if "Miso" in m["text"]]
    assert len(miso) == 1, page
    got = _ok(await client.call_tool("get_memory", {"memory_id": miso[0]["memory_id"]}))
    assert got["text"] == miso[0]["text"] and got["status"] == "active" and got["role"] == "user", got
    tools = _ok(await client.call_tool("list_memories", {"page_size": 50}))["memories"]
    assert any(m["tool_name"] == "orders" and "PO-7731" in m["text"] for m in tools), tools

    gone = _ok(await client.call_tool("forget", {"memory_id": miso[0]["memory_id"]}))
    assert gone["status"] == "done", gone
    _refused(await client.call_tool("get_memory", {"memory_id": miso[0]["memory_id"]}), "NOT_FOUND")

    assert _ok(await client.call_tool("forget", {"level": "user"}))["status"] == "done"
    after = _ok(await client.call_tool("recall", {"query": "what is my cat called? Lisbon PO-7731"}))
    assert "Miso" not in after["context"] and "PO-7731" not in after["context"], after
    assert _ok(await client.call_tool("list_memories", {}))["memories"] == []


def _args(acm: EmbeddedAcm, user: str, *extra: str) -> list[str]:
    return ["mcp", "--addr", f"127.0.0.1:{acm.port}", "--api-key", acm.api_key, "-c", "acme", "-u", user, *extra]


async def test_stdio_every_tool(acm: EmbeddedAcm, tmp_path: Path) -> None:
    params = StdioServerParameters(command=ACM, args=_args(acm, _user(), "-a", "bot", "-s", "s1"), env=_env(tmp_path))
    async with Client(params, read_timeout_seconds=120) as client:
        assert client.server_info is not None and client.server_info.name == "acm"
        await _round_trip(client)


@pytest.fixture
def http_server(acm: EmbeddedAcm, tmp_path: Path) -> Iterator[str]:
    [port] = unused_ports(1)
    args = [ACM, *_args(acm, _user(), "-s", "s1", "--transport", "http", "--listen", f"127.0.0.1:{port}")]
    err = open(tmp_path / "mcp.err", "wb")
    proc = subprocess.Popen(args, env=_env(tmp_path), stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "mcp.err").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "acm mcp --transport http did not listen"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        err.close()


async def test_streamable_http_every_tool(http_server: str, tmp_path: Path) -> None:
    said = (tmp_path / "mcp.err").read_text()
    assert said.startswith(f"acm mcp: MCP over streamable HTTP on {http_server} for 127.0.0.1:"), said
    async with Client(http_server, read_timeout_seconds=120) as client:
        await _round_trip(client)


def _config(acm: EmbeddedAcm, **changes: Any) -> McpConfig:
    base: dict[str, Any] = {
        "addr": f"127.0.0.1:{acm.port}",
        "api_key": acm.api_key,
        "customer_id": "acme",
        "user_id": _user(),
        "session_id": "s1",
    }
    return McpConfig(**{**base, **changes})


async def test_bad_inputs_are_one_line_tool_errors(acm: EmbeddedAcm) -> None:
    server, tools = build_server(_config(acm))
    async with tools.connected(), Client(server) as client:
        _refused(await client.call_tool("remember", {"text": ""}), "text")
        _refused(await client.call_tool("remember", {"text": "hi", "role": "robot"}), "role")
        _refused(await client.call_tool("remember", {"text": "42", "role": "tool"}), "tool_name")
        _refused(await client.call_tool("remember", {"text": "hi", "tool_name": "x"}), "role 'tool'")
        _refused(await client.call_tool("remember", {"text": "hi", "session_id": "a b/c"}), "session_id")
        _refused(await client.call_tool("recall", {"query": "x", "budget_tokens": -1}), "budget_tokens")
        _refused(await client.call_tool("recall", {"query": ""}), "query")
        _refused(await client.call_tool("forget", {}), "exactly one")
        _refused(await client.call_tool("forget", {"memory_id": "m", "level": "user"}), "exactly one")
        _refused(await client.call_tool("forget", {"level": "customer"}), "level")
        _refused(await client.call_tool("list_memories", {"page_size": 0}), "page_size")
        _refused(await client.call_tool("get_memory", {"memory_id": uuid.uuid4().hex}), "NOT_FOUND")


async def test_scope_isolation(acm: EmbeddedAcm) -> None:
    """Two servers of two users of one key: what one remembers, the other neither recalls nor lists nor gets."""
    alice_server, alice = build_server(_config(acm))
    bob_server, bob = build_server(_config(acm))
    async with alice.connected(), bob.connected(), Client(alice_server) as a, Client(bob_server) as b:
        _ok(await a.call_tool("remember", {"text": "My locker code is Zanzibar-4417.", "session_id": "gym"}))
        mine = _ok(await a.call_tool("list_memories", {}))["memories"]
        assert any("Zanzibar" in m["text"] for m in mine), mine
        assert {m["session_id"] for m in mine} == {"gym"}, mine  # the call's session, not the configured s1
        for session in ("gym", "s1", ""):  # its session, another of hers, none
            recalled = _ok(await a.call_tool("recall", {"query": "locker code", "session_id": session}))
            assert "Zanzibar" in recalled["context"], (session, recalled)
            assert 0 < recalled["context_tokens"] <= recalled["budget_tokens"], recalled
        assert "Zanzibar" not in _ok(await b.call_tool("recall", {"query": "locker code Zanzibar"}))["context"]
        assert _ok(await b.call_tool("list_memories", {}))["memories"] == []
        _refused(await b.call_tool("get_memory", {"memory_id": mine[0]["memory_id"]}), "NOT_FOUND")


async def test_refused_key_and_unreachable_acm(acm: EmbeddedAcm, refused_port: int) -> None:
    server, tools = build_server(_config(acm, api_key="acm_not-a-key"))
    async with tools.connected(), Client(server) as client:
        _refused(await client.call_tool("recall", {"query": "anything"}), "UNAUTHENTICATED", "api-key")
    down = f"127.0.0.1:{refused_port}"
    server, tools = build_server(_config(acm, addr=down, timeout_s=2.0))
    async with tools.connected(), Client(server) as client:
        _refused(await client.call_tool("remember", {"text": "hello"}), "UNAVAILABLE", down, "acm serve")


def test_cli_refuses_without_a_scope_or_the_sdk(tmp_path: Path) -> None:
    done = subprocess.run(
        [ACM, "mcp", "--api-key", "k", "-u", "alice"], env=_env(tmp_path), capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 2, done
    assert done.stderr.decode().strip() == (
        "acm mcp: no customer id: pass --customer or set ACM_CUSTOMER_ID (every tool acts in one scope)"
    )
    env = {**_env(tmp_path), "ACM_CUSTOMER_ID": "acme", "ACM_USER_ID": "alice"}
    done = subprocess.run(
        [ACM, "mcp", "--api-key", "k", "--listen", "nowhere"], env=env, capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 2 and b"--listen 'nowhere'" in done.stderr, done
    without_sdk = "import sys; sys.modules['mcp'] = None; from acm_cli.main import main; main(sys.argv[1:])"
    done = subprocess.run(
        [sys.executable, "-c", without_sdk, "mcp", "--api-key", "k"], env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 2, done
    assert done.stderr.decode().startswith("acm mcp: the MCP SDK is not installed here: install ACM with its mcp extra")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = [ACM, "mcp", "--api-key", "k", "--transport", "http", "--listen", f"127.0.0.1:{port}"]
        done = subprocess.run(args, env=env, capture_output=True, timeout=60, check=False)
    assert done.returncode == 2, done
    assert done.stderr.decode().startswith(f"acm mcp: cannot listen on 127.0.0.1:{port}: "), done
