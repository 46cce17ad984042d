"""`acm` as a new user meets it, against a running `acm serve` (a process of its own, started from another
folder): one server per port and per data folder, a banner whose commands work as printed, one line and
exit code 2 for bad input (never a traceback), reflection v1, a request log without content, `keys create`
from another folder, complete help."""

from __future__ import annotations

import argparse
import os
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from acm_cli import main as cli
from acm_gateway.app import GatewayServer, PortInUse
from tests.support.acm_serve import LISTENING

ACM = str(Path(sys.executable).parent / "acm")
SECRET_TURN = "My locker code is 4417 and I moved to Coimbra"
SECRET_QUERY = "which city did I move to, zebra-question"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACM_")}
    env.update(extra)
    return env


def _run(
    args: list[str] | list[str | bytes], cwd: Path, stdin: bytes = b"", **env: str
) -> subprocess.CompletedProcess[bytes]:
    """Run in ``cwd``; the data folder is ACM_DATA_DIR when given, else one under ``cwd``, never the checkout's."""
    env.setdefault("ACM_DATA_DIR", str(cwd / "acm-data"))
    return subprocess.run(args, cwd=cwd, env=_env(**env), input=stdin, capture_output=True, timeout=120, check=False)


def _text(done: subprocess.CompletedProcess[bytes]) -> tuple[str, str]:
    return done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")


@dataclass
class Served:
    addr: str
    data_dir: Path
    elsewhere: Path  # a folder that is neither the checkout nor the data folder
    banner: list[str]
    log: Path  # the server's stderr

    @property
    def port(self) -> int:
        return int(self.addr.rpartition(":")[2])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("cli")
    elsewhere, data_dir = root / "elsewhere", root / "data"
    elsewhere.mkdir()
    log = root / "serve.err"
    with open(log, "wb") as err:
        # Port 0, read back from the banner; no HTTP API: by default `acm serve` takes 127.0.0.1:8080 when free,
        # and another worker's `acm serve` starting at the same time saw it free too (one of them exits).
        proc = subprocess.Popen(
            [ACM, "serve", "--listen", "127.0.0.1:0"],
            cwd=elsewhere,
            env=_env(ACM_DATA_DIR=str(data_dir), ACM_HTTP_ADDR=""),
            stdout=subprocess.PIPE,
            stderr=err,
        )
        banner: list[str] = []
        assert proc.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any("Ctrl-C" in line for line in banner):
            line = proc.stdout.readline().decode()
            if not line:
                break
            banner.append(line.rstrip("\n"))
        assert any("Ctrl-C" in line for line in banner), (banner, log.read_text())
        listening = LISTENING.search("\n".join(banner))
        assert listening, banner
        try:
            yield Served(listening.group(1), data_dir, elsewhere, banner, log)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def _one_line_refusal(done: subprocess.CompletedProcess[bytes]) -> str:
    out, err = _text(done)
    assert done.returncode == 2, (out, err)
    assert "Traceback" not in err and "Traceback" not in out, err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


def test_a_second_server_on_the_same_port_is_refused(served: Served, tmp_path: Path) -> None:
    started = time.monotonic()
    done = _run([ACM, "serve", "--listen", served.addr, "--data-dir", str(tmp_path / "other")], cwd=tmp_path)
    line = _one_line_refusal(done)
    assert "in use" in line and served.addr in line and "--listen" in line, line
    assert time.monotonic() - started < 30  # refused before loading models


def test_a_second_server_on_the_same_data_folder_is_refused(served: Served, tmp_path: Path) -> None:
    done = _run([ACM, "serve", "--listen", "127.0.0.1:0"], cwd=tmp_path, ACM_DATA_DIR=str(served.data_dir))
    line = _one_line_refusal(done)
    assert "in use" in line and str(served.data_dir) in line and "--data-dir" in line, line


@pytest.mark.parametrize("listen", ["nonsense", "127.0.0.1:99999", "nohost.invalid:50051"])
def test_an_address_that_cannot_be_listened_on_is_one_line(listen: str, tmp_path: Path) -> None:
    line = _one_line_refusal(_run([ACM, "serve", "--listen", listen, "--data-dir", str(tmp_path)], cwd=tmp_path))
    assert listen in line and "--listen" in line, line


def test_gateway_server_refuses_a_taken_port() -> None:
    """The distributed gateway builds the same server: SO_REUSEPORT is off, so no silent sharing."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(PortInUse):
            GatewayServer(f"127.0.0.1:{taken.getsockname()[1]}")


def test_the_banner_commands_work_as_printed_from_another_folder(served: Served) -> None:
    commands = [line.split("try:", 1)[-1].strip() for line in served.banner if "--wait" in line or " fetch" in line]
    assert len(commands) == 2, served.banner
    assert all(c.startswith(ACM) for c in commands), commands  # not a bare `acm` that PATH does not hold
    ingest, fetch = (shlex.split(c) for c in commands)
    done = _run(ingest, cwd=served.elsewhere)
    assert done.returncode == 0 and "done" in _text(done)[0], _text(done)
    done = _run(fetch, cwd=served.elsewhere)
    assert done.returncode == 0 and "Lisbon" in _text(done)[0], _text(done)


def test_the_banner_says_acm_relative_to_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """From the checkout (where `make run` runs), with acm not on PATH: `.venv/bin/acm`, as the README says."""
    checkout = Path(cli.__file__).resolve().parents[2]
    monkeypatch.chdir(checkout)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    command = cli._acm_command()
    if Path(ACM).is_relative_to(checkout):
        assert command == str(Path(ACM).relative_to(checkout)), command
    assert _run([*shlex.split(command), "--help"], cwd=checkout).returncode == 0


def _remote(served: Served) -> list[str]:
    return ["--addr", served.addr, "--data-dir", str(served.data_dir)]


BAD_INPUT: dict[str, tuple[list[str | bytes], bytes]] = {
    "budget 2^31": (["fetch", "-c", "acme", "-u", "alice", "q", "--budget", str(2**31)], b""),
    "negative budget": (["fetch", "-c", "acme", "-u", "alice", "q", "--budget", "-5"], b""),
    "budget above the server's maximum": (["fetch", "-c", "acme", "-u", "alice", "q", "--budget", "200000"], b""),
    "at yesterday": (["ingest", "-c", "acme", "-u", "alice", "hi", "--at", "yesterday"], b""),
    "at month 13": (["ingest", "-c", "acme", "-u", "alice", "hi", "--at", "2026-13-40"], b""),
    "argument not UTF-8": (["ingest", "-c", "acme", "-u", "alice", b"caf\xe9 \xff"], b""),
    "stdin not UTF-8": (["ingest", "-c", "acme", "-u", "alice", "-"], b"caf\xe9 \xff\xfe"),
    "bad customer id": (["fetch", "-c", "acme corp!", "-u", "alice", "q"], b""),
    "missing arguments": (["fetch", "-c", "acme"], b""),
    "unknown command": (["fecth", "-c", "acme"], b""),
    "unknown job": (["job", "-c", "acme", "-u", "alice", "no-such-job"], b""),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_gets_one_line_and_exit_code_2(served: Served, case: str) -> None:
    argv, stdin = BAD_INPUT[case]
    command = argv[:1] + (_remote(served) if argv[0] in ("fetch", "ingest", "job") else []) + argv[1:]
    line = _one_line_refusal(_run([ACM, *command], cwd=served.elsewhere, stdin=stdin))
    assert line.startswith("acm"), line


@pytest.mark.parametrize(
    ("case", "argv"),
    [
        ("bad client id", ["--client", "acme corp!"]),
        ("mysql url", ["--client", "acme", "--database-url", "mysql://db/acm"]),
        ("unreachable postgres", ["--client", "acme", "--database-url", "postgresql://u:pw@127.0.0.1:1/acm"]),
    ],
)
def test_keys_create_rejects_bad_input_in_one_line(served: Served, case: str, argv: list[str]) -> None:
    line = _one_line_refusal(_run([ACM, "keys", "create", *argv], cwd=served.elsewhere))
    assert "pw" not in line, line  # no password on screen


def test_keys_create_refuses_a_database_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    line = _one_line_refusal(_run([ACM, "keys", "create", "--client", "acme"], cwd=tmp_path, ACM_DATA_DIR=str(missing)))
    assert "no ACM database" in line and "acm serve" in line, line
    assert not missing.exists()  # nothing made on the way


def test_keys_create_from_another_folder_makes_a_key_the_server_accepts(served: Served) -> None:
    done = _run(
        [ACM, "keys", "create", "--client", "acme-ops"], cwd=served.elsewhere, ACM_DATA_DIR=str(served.data_dir)
    )
    out, err = _text(done)
    assert done.returncode == 0, (out, err)
    secret = next(word for word in out.split() if word.startswith("acm_"))
    done = _run(
        [ACM, "fetch", "--addr", served.addr, "--api-key", secret, "-c", "acme", "-u", "alice", "anything"],
        cwd=served.elsewhere,
    )
    assert done.returncode == 0, _text(done)


def test_a_wrong_key_is_one_line(served: Served) -> None:
    done = _run(
        [ACM, "fetch", "--addr", served.addr, "--api-key", "acm_nope_nope", "-c", "acme", "-u", "alice", "q"],
        cwd=served.elsewhere,
    )
    out, err = _text(done)
    assert done.returncode == 1 and "UNAUTHENTICATED" in err and len(err.strip().splitlines()) == 1, (out, err)


def test_no_server_is_one_actionable_line(tmp_path: Path, refused_port: int) -> None:
    addr = f"127.0.0.1:{refused_port}"
    done = _run([ACM, "fetch", "--addr", addr, "--api-key", "acm_x_y", "-c", "acme", "-u", "alice", "q"], cwd=tmp_path)
    out, err = _text(done)
    assert done.returncode == 1 and "UNAVAILABLE" in err and "acm serve" in err and addr in err, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def _reflect(channel: grpc.Channel, method: str, request: reflection_pb2.ServerReflectionRequest) -> object:
    call = channel.stream_stream(
        method,
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    return next(iter(call(iter([request]), timeout=10)))


def test_reflection_v1_and_v1alpha_list_the_gateway(served: Served) -> None:
    with grpc.insecure_channel(served.addr) as channel:
        for version in ("v1", "v1alpha"):
            reply = _reflect(
                channel,
                f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
                reflection_pb2.ServerReflectionRequest(list_services=""),
            )
            names = {s.name for s in reply.list_services_response.service}  # type: ignore[attr-defined]
            assert {"acm.v1.Gateway", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} <= names
        # v1 describes itself, as grpcurl asks before using it
        reply = _reflect(
            channel,
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            reflection_pb2.ServerReflectionRequest(file_containing_symbol="grpc.reflection.v1.ServerReflection"),
        )
        assert reply.file_descriptor_response.file_descriptor_proto  # type: ignore[attr-defined]
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        reply = next(
            iter(
                stub.ServerReflectionInfo(
                    iter([reflection_pb2.ServerReflectionRequest(file_containing_symbol="acm.v1.Gateway")])
                )
            )
        )
        assert reply.file_descriptor_response.file_descriptor_proto


def test_each_request_is_logged_without_content(served: Served) -> None:
    remote = [*_remote(served), "-c", "acme", "-u", "alice"]
    assert _run([ACM, "ingest", *remote, "-s", "s-log", SECRET_TURN, "--wait"], cwd=served.elsewhere).returncode == 0
    assert _run([ACM, "fetch", *remote, SECRET_QUERY], cwd=served.elsewhere).returncode == 0
    time.sleep(0.5)
    log = served.log.read_text()
    lines = [line for line in log.splitlines() if "acm.requests" in line]
    ingest = [line for line in lines if "/acm.v1.Gateway/Ingest" in line and "session=s-log" in line]
    assert ingest and "customer=acme user=alice" in ingest[0] and " OK " in ingest[0], lines
    assert ingest[0].rstrip().endswith(" ms"), ingest[0]
    assert any("/acm.v1.Gateway/Fetch" in line and " OK " in line for line in lines), lines
    for secret in ("4417", "Coimbra", "zebra-question", (served.data_dir / "dev-api-key").read_text().strip()):
        assert secret not in log


def test_an_internal_error_is_one_line_with_an_id_and_the_traceback_in_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def broken(args: argparse.Namespace) -> None:
        raise RuntimeError("a bug, not the user's fault")

    monkeypatch.setattr(cli, "_job", broken)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["job", "--data-dir", str(tmp_path), "--api-key", "acm_x_y", "-c", "acme", "-u", "alice", "j1"])
    err = capsys.readouterr().err
    assert exit_.value.code == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    error_id = err.split("internal error ", 1)[1].split()[0]
    logged = (tmp_path / "logs" / "cli-errors.log").read_text()
    assert error_id in logged and "Traceback" in logged and "a bug, not the user's fault" in logged


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_every_option_has_help_and_benchmarks_have_one_line_descriptions() -> None:
    for parser in _parsers(cli.parser()):
        for action in parser._actions:
            if not isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                assert action.help, f"{parser.prog} {action.option_strings or action.dest}: no help"
        if parser.prog.startswith("acm bench "):
            assert parser.description and "\n" not in parser.description, parser.prog
            assert "acm_cli" not in parser.description and "module" not in parser.description, parser.prog
