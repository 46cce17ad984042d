"""`acm ingest-batch`, `acm memories get|list|update|delete|history`, `acm export` / `acm import`, `acm compact`
and `acm agents define|get|list` against a running `acm serve` (a process of its own), as a user types them;
bad input is one line and exit code 2, never a traceback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.integration.test_cli import ACM, Served, _one_line_refusal, _remote, _run, _text, served

__all__ = ["served"]  # the running `acm serve`, a fixture of this module too


def _acm(served: Served, *argv: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return _run([ACM, argv[0], *_remote(served), *argv[1:]], cwd=served.elsewhere, stdin=stdin)


def _ok(done: subprocess.CompletedProcess[bytes]) -> str:
    out, err = _text(done)
    assert done.returncode == 0, (out, err)
    assert "Traceback" not in err, err
    return out


def _sub(served: Served, group: str, command: str, *argv: str) -> subprocess.CompletedProcess[bytes]:
    """`acm memories get …`: the connection options go after the subcommand."""
    return _run([ACM, group, command, *_remote(served), *argv], cwd=served.elsewhere)


def _facts(served: Served, user: str) -> list[dict[str, object]]:
    out = _ok(_sub(served, "memories", "list", "-c", "acme", "-u", user, "--kind", "fact", "--all", "--json"))
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _text_of(memory: dict[str, object]) -> str:
    return str(memory["memory"]["text"])  # type: ignore[index]


def _id_of(memory: dict[str, object]) -> str:
    return str(memory["memory"]["memory_id"])  # type: ignore[index]


def test_batch_list_get_update_history_delete_export_import(served: Served, tmp_path: Path) -> None:
    turns = tmp_path / "turns.jsonl"
    turns.write_text(
        json.dumps({"content": "I moved to Braga in March.", "turn_id": "b1"})
        + "\n\n"
        + json.dumps({"content": "My cat is called Miso.", "role": "user", "occurred_at": "2026-03-02T10:00:00+00:00"})
        + "\n"
    )
    out = _ok(_acm(served, "ingest-batch", "-c", "acme", "-u", "cli-ana", "-s", "s1", str(turns), "--wait"))
    assert "accepted 2 turns" in out and out.count("done") == 2, out

    facts = _facts(served, "cli-ana")
    braga = next(m for m in facts if "Braga" in _text_of(m))
    got = json.loads(_ok(_sub(served, "memories", "get", "-c", "acme", "-u", "cli-ana", _id_of(braga))))
    assert got["memory"]["text"] == _text_of(braga) and got["status"] == "MEMORY_STATUS_ACTIVE"
    table = _ok(_sub(served, "memories", "list", "-c", "acme", "-u", "cli-ana", "--layer", "short"))
    assert "turn" in table and "Braga" in table, table

    corrected = "I moved to Guimaraes in March."
    out = _ok(
        _sub(
            served,
            "memories",
            "update",
            "-c",
            "acme",
            "-u",
            "cli-ana",
            _id_of(braga),
            corrected,
            "--source",
            "t-9",
            "--wait",
        )
    )
    assert "done" in out, out
    assert corrected in {_text_of(m) for m in _facts(served, "cli-ana")}
    history = _ok(_sub(served, "memories", "history", "-c", "acme", "-u", "cli-ana", _id_of(braga)))
    assert "2 versions" in history and "stale" in history and "Guimaraes" in history, history

    exported = tmp_path / "ana.jsonl"
    done = _acm(served, "export", "-c", "acme", "-u", "cli-ana")
    exported.write_bytes(done.stdout)
    lines = [line for line in _ok(done).splitlines() if line.strip()]
    assert len(lines) >= 4 and f"exported {len(lines)} memories" in _text(done)[1]
    for _ in range(2):  # importing again changes nothing
        _ok(_acm(served, "import", "-c", "acme", "-u", "cli-bo", str(exported), "--wait"))
        again = _acm(served, "export", "-c", "acme", "-u", "cli-bo")
        assert len([line for line in _ok(again).splitlines() if line.strip()]) == len(lines)

    miso = next(m for m in _facts(served, "cli-bo") if "Miso" in _text_of(m))
    out = _ok(_sub(served, "memories", "delete", "-c", "acme", "-u", "cli-bo", _id_of(miso), "--wait"))
    assert "done" in out and "deleted=1" in out, out
    line = _one_line_refusal(_sub(served, "memories", "get", "-c", "acme", "-u", "cli-bo", _id_of(miso)))
    assert "NOT_FOUND" in line, line
    # Another user's memory is not found either.
    line = _one_line_refusal(_sub(served, "memories", "get", "-c", "acme", "-u", "cli-bo", _id_of(braga)))
    assert "NOT_FOUND" in line, line


def test_agents_and_compact(served: Served) -> None:
    out = _ok(_sub(served, "agents", "define", "-c", "acme", "-u", "admin", "-a", "cli-bot", "support bot for billing"))
    assert "agent cli-bot v" in out, out
    out = _ok(_sub(served, "agents", "get", "-c", "acme", "-u", "admin", "-a", "cli-bot"))
    assert json.loads(out.split("\n", 1)[1])["agent_id"] == "cli-bot"
    assert "cli-bot" in _ok(_sub(served, "agents", "list", "-c", "acme", "-u", "admin"))
    _ok(
        _acm(
            served, "ingest", "-c", "acme", "-u", "cli-cy", "-a", "cli-bot", "-s", "s1", "Invoice 7 is paid.", "--wait"
        )
    )
    out = _ok(_acm(served, "compact", "-c", "acme", "-u", "cli-cy", "-a", "cli-bot", "-s", "s1"))
    assert "tokens" in out and "verified=" in out, out


@pytest.mark.parametrize(
    ("case", "argv", "content", "words"),
    [
        ("no such file", ["ingest-batch", "-c", "acme", "-u", "x", "{missing}"], None, "cannot read"),
        ("not JSON", ["ingest-batch", "-c", "acme", "-u", "x", "{file}"], b'{"content": "a"}\n{oops\n', "line 2"),
        ("no content", ["ingest-batch", "-c", "acme", "-u", "x", "{file}"], b'{"text": "a"}\n', "content"),
        ("bad role", ["ingest-batch", "-c", "acme", "-u", "x", "{file}"], b'{"content": "a", "role": "bot"}\n', "role"),
        ("not UTF-8", ["import", "-c", "acme", "-u", "x", "{file}"], b"caf\xe9\n", "UTF-8"),
        ("import garbage", ["import", "-c", "acme", "-u", "x", "{file}"], b"{nope\n", "line 1"),
        ("empty import", ["import", "-c", "acme", "-u", "x", "{file}"], b"\n\n", "no lines"),
        (
            "bad overrides",
            ["agents", "define", "-c", "acme", "-u", "x", "-a", "b", "d", "--overrides", "{"],
            None,
            "JSON",
        ),
        ("bad page token", ["memories", "list", "-c", "acme", "-u", "x", "--page-token", "zz"], None, "page_token"),
        ("history needs one", ["memories", "history", "-c", "acme", "-u", "x"], None, "--slot"),
        ("update needs a source", ["memories", "update", "-c", "acme", "-u", "x", "m", "t"], None, "--source"),
    ],
)
def test_bad_input_is_one_line(
    served: Served, tmp_path: Path, case: str, argv: list[str], content: bytes | None, words: str
) -> None:
    path = tmp_path / "input.jsonl"
    if content is not None:
        path.write_bytes(content)
    argv = [a.replace("{file}", str(path)).replace("{missing}", str(tmp_path / "missing.jsonl")) for a in argv]
    depth = 2 if argv[0] in ("memories", "agents") else 1
    command = [ACM, *argv[:depth], *_remote(served), *argv[depth:]]
    line = _one_line_refusal(_run(command, cwd=served.elsewhere))
    assert words in line, line
