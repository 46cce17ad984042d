"""`acm`: run embedded ACM and talk to any ACM gateway from a terminal.

acm serve                                  embedded ACM on 127.0.0.1:50051 (data folder: DATA_DEFAULT)
acm ingest -c acme -u alice -s s1 "I moved to Lisbon in May" --wait
acm fetch  -c acme -u alice "where do I live?"
acm job    -c acme -u alice <job id>
acm forget -c acme -u alice --level user [--verify "Lisbon"]
acm memories list -c acme -u alice --kind fact     (also get, update, delete, history: the Memory API)
acm export -c acme -u alice > alice.jsonl;  acm import -c acme -u alice2 alice.jsonl
acm ingest-batch -c acme -u alice -s s1 turns.jsonl;  acm compact -c acme -u alice -s s1;  acm agents list …
acm keys create --client acme --database-url postgresql://…   (distributed mode; an admin key)
acm keys create --client acme --role agent --customers c1,c2 [--users u1]   (an agent key)
acm keys rotate-master [--data-dir D | --database-url postgresql://…]   (re-wrap the data keys: docs/privacy.md)
acm bench locomo --data locomo.json --json results/locomo.json   (benchmarks, against embedded ACM)
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import secrets
import shlex
import shutil
import sys
import traceback
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import grpc
from rich.console import Console
from rich.table import Table
from rich.text import Text

from acm.channels import ClientTls
from acm.client import AcmClient
from acm.domain.models import Role
from acm.domain.scope import ScopeError, check_id
from acm.v1 import common_pb2, gateway_pb2
from acm_cli.db_roles import add_parser as add_db_parser
from acm_cli.mcp_command import add_parser as add_mcp_parser
from acm_cli.memory_commands import add_parsers as add_memory_parsers
from acm_cli.reindex import add_parser as add_reindex_parser

if TYPE_CHECKING:
    from acm.bootstrap import Relational

console = Console()
TIER_NAMES = {
    common_pb2.TIER_USER: "user",
    common_pb2.TIER_CUSTOMER: "customer",
    common_pb2.TIER_CLIENT: "client",
}
JOB_NAMES = {
    gateway_pb2.JOB_STATUS_PENDING: "pending",
    gateway_pb2.JOB_STATUS_DONE: "done",
    gateway_pb2.JOB_STATUS_FAILED: "failed",
}


DEFAULT_ADDR = "127.0.0.1:50051"
DEFAULT_HTTP_ADDR = "127.0.0.1:8080"  # `acm serve`'s HTTP/JSON API when ACM_HTTP_ADDR is not set
DEV_KEY_FILE = "dev-api-key"  # in the data folder; acm_cli.embedded writes it
EXIT_USAGE = 2  # the command line or its input is wrong (or `acm serve` cannot start): one line says what to do
EXIT_FAILED = 1  # the call failed: server unreachable, key refused, or a server error
# Server answers that mean the input was wrong: exit 2, like a refusal here.
_INPUT_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.FAILED_PRECONDITION,
}
_HINTS = {
    grpc.StatusCode.UNAVAILABLE: "is ACM running there? Start it with `acm serve`, or pass --addr (ACM_ADDR); a "
    "gateway that serves TLS needs --tls or --ca-file",
    grpc.StatusCode.DEADLINE_EXCEEDED: "the server did not answer in time; retry, or check its log",
    grpc.StatusCode.UNAUTHENTICATED: "pass a key of this server with --api-key (ACM_API_KEY), or --data-dir of "
    "the `acm serve` whose dev key to use",
    grpc.StatusCode.PERMISSION_DENIED: "this key may not do that: use a key with that right",
}


def default_data_dir() -> Path:
    """The data folder when neither --data-dir nor ACM_DATA_DIR names one: the `.acm` folder of the source
    checkout this acm runs from (`make run` keeps ./.acm, and commands run from any other folder find the
    same dev key and database), else ~/.local/share/acm ($XDG_DATA_HOME/acm) for an installed acm. Never
    the current folder."""
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "services" / "acm_cli").is_dir():
        return checkout / ".acm"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "acm"


DATA_DEFAULT = (
    "$ACM_DATA_DIR, else the .acm folder of the checkout acm runs from (an installed acm: ~/.local/share/acm); "
    f"here: {default_data_dir()}"
)


class UsageError(Exception):
    """Wrong input, said in one actionable line (after the command's name); the command exits with EXIT_USAGE."""


class _ParseError(UsageError):
    """argparse's complaint, already prefixed with the (sub)command's name."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _ParseError(f"{self.prog}: {message} (see `{self.prog} --help`)")


def _data_dir(args: argparse.Namespace) -> Path:
    given = getattr(args, "data_dir", None) or os.environ.get("ACM_DATA_DIR")
    return Path(given).expanduser() if given else default_data_dir()


def _scope_id(kind: str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        try:
            return check_id(kind, value)
        except ScopeError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _budget(value: str) -> int:
    try:
        budget = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of tokens") from None
    if not 0 <= budget < 2**31:
        raise argparse.ArgumentTypeError(f"{budget} is out of range: give 1 to 2147483647, or 0 for the server's")
    return budget


def _moment(value: str) -> datetime:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an ISO 8601 date or time: e.g. 2026-05-01, 2026-05-01T09:30 or 2026-05-01T09:30+02:00"
        ) from None


def _stdin_text() -> str:
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"stdin is not UTF-8 (byte {data[exc.start]:#04x} at offset {exc.start}): convert it first, "
            "e.g. `iconv -f latin1 -t utf-8`"
        ) from None


def _api_key(args: argparse.Namespace) -> str:
    if args.api_key:
        secret = str(args.api_key)
        if not (secret.isascii() and secret.isprintable()):
            raise UsageError("the API key (--api-key or ACM_API_KEY) is not an ACM key: it is printable ASCII")
        return secret
    key_file = _data_dir(args) / DEV_KEY_FILE
    if key_file.exists():
        return key_file.read_text().strip()
    raise UsageError(
        f"no API key: pass --api-key or set ACM_API_KEY, or start `acm serve` (it writes {key_file}; "
        "--data-dir or ACM_DATA_DIR to look elsewhere)"
    )


def _scope(args: argparse.Namespace) -> common_pb2.Scope:
    return common_pb2.Scope(
        customer_id=args.customer, user_id=args.user, agent_id=args.agent or "", session_id=args.session or ""
    )


def _client(args: argparse.Namespace) -> AcmClient:
    return AcmClient(args.addr, _api_key(args), tls=_tls(args))


def _tls(args: argparse.Namespace) -> ClientTls | None:
    """TLS to the gateway: --tls (the system's CAs), or --ca-file; --cert-file and --key-file for a gateway
    that requires a client certificate."""
    if not (args.tls or args.ca_file or args.cert_file or args.key_file):
        return None
    if (args.cert_file is None) != (args.key_file is None):
        raise UsageError("--cert-file and --key-file go together (ACM_TLS_CERT_FILE, ACM_TLS_KEY_FILE)")
    for path in (args.ca_file, args.cert_file, args.key_file):
        if path is not None and not path.is_file():
            raise UsageError(f"{path}: no such file (--ca-file, --cert-file, --key-file)")
    return ClientTls(args.ca_file, args.cert_file, args.key_file)


def _acm_command() -> str:
    """How to run this very acm from the current folder: `acm` when PATH finds it, else its path from here
    (`.venv/bin/acm` in the checkout), else its absolute path."""
    exe = Path(sys.executable).parent / "acm"
    if not exe.is_file():
        return f"{shlex.quote(sys.executable)} -m acm_cli"
    on_path = shutil.which("acm")
    if on_path and Path(on_path).resolve() == exe.resolve():
        return "acm"
    try:
        return shlex.quote(str(exe.absolute().relative_to(Path.cwd())))
    except ValueError:
        return shlex.quote(str(exe.absolute()))


def _client_addr(listen_addr: str, port: int) -> str:
    host = listen_addr.rpartition(":")[0].strip("[]")
    if host in ("", "0.0.0.0", "::", "localhost", "127.0.0.1"):
        return f"127.0.0.1:{port}"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def banner(api_key: str, addr: str, data_dir: Path, tls: bool = False) -> list[str]:
    """What `acm serve` prints once it listens: the key and commands that work as printed, from here (with
    ``tls``, also given the CA: --ca-file or ACM_TLS_CA_FILE)."""
    flags = "" if addr == DEFAULT_ADDR else f" --addr {addr}"
    if tls:
        flags += " --tls"
    if data_dir.resolve() != default_data_dir().resolve():
        flags += f" --data-dir {shlex.quote(str(data_dir.resolve()))}"
    acm = _acm_command()
    return [
        f"ACM embedded: gateway acm.v1.Gateway on {addr}, data in {data_dir.resolve()}",
        f"API key for client 'local': {api_key}  (saved in {data_dir.resolve() / DEV_KEY_FILE}; the commands read it)",
        f'try:  {acm} ingest{flags} -c acme -u alice -s s1 "I moved to Lisbon in May" --wait',
        f'      {acm} fetch{flags} -c acme -u alice "where do I live?"',
        "Ctrl-C stops.",
    ]


async def _serve(args: argparse.Namespace) -> None:
    from acm.metrics import serve_prometheus
    from acm.runtime import configure_logging, wait_for_stop_signal
    from acm.settings import load
    from acm.telemetry import configure_metrics, configure_tracing
    from acm.transport import TransportRefused
    from acm_cli.embedded import DataDirInUse, EmbeddedAcm, EmbeddedSettings
    from acm_gateway.app import CannotListen, PortInUse, refuse_if_in_use

    settings = load(EmbeddedSettings).model_copy(update={"data_dir": _data_dir(args)})
    if args.listen:
        settings = settings.model_copy(update={"listen_addr": args.listen})
    http_note = ""
    if "http_addr" in settings.model_fields_set:  # ACM_HTTP_ADDR: that address, or empty for gRPC only
        try:
            if settings.http_addr:
                refuse_if_in_use(settings.http_addr)
        except CannotListen as exc:
            raise UsageError(
                f"{exc.strerror} (the HTTP/JSON API): choose another with ACM_HTTP_ADDR=HOST:PORT, or set "
                "ACM_HTTP_ADDR= to serve gRPC only"
            ) from None
    else:  # the default address when it is free; a taken one is said, not fatal (the API is a convenience here)
        try:
            refuse_if_in_use(DEFAULT_HTTP_ADDR)
            settings = settings.model_copy(update={"http_addr": DEFAULT_HTTP_ADDR})
        except CannotListen:
            http_note = f"HTTP/JSON API: not served, {DEFAULT_HTTP_ADDR} is in use (set ACM_HTTP_ADDR=HOST:PORT)"
    acm = EmbeddedAcm(settings)
    try:
        acm.claim()  # before anything loads or prints: a refusal is the only line
        configure_logging(settings.log_level)
        configure_tracing("acm-embedded")
        serve_prometheus("acm-embedded", settings.metrics_port, addr="127.0.0.1")  # ACM_METRICS_PORT
        configure_metrics("acm-embedded")
        print(f"ACM embedded: loading models and stores in {settings.data_dir.resolve()} …", flush=True)
        async with acm:
            addr = _client_addr(settings.listen_addr, acm.port)
            if acm.http_port:
                scheme = "https" if settings.tls_cert_file is not None else "http"
                http_addr = _client_addr(settings.http_addr, acm.http_port)
                http_note = (
                    f"HTTP/JSON API on {scheme}://{http_addr} (docs/http-api.md); "
                    f"operator console: {scheme}://{http_addr}/console/ (the admin key below)"
                )
            if http_note:
                print(http_note, flush=True)
            lines = banner(acm.api_key, addr, settings.data_dir, tls=settings.tls_cert_file is not None)
            print("\n".join(lines), flush=True)
            await wait_for_stop_signal()
    except DataDirInUse as exc:
        raise UsageError(f"{exc}: stop it, or give this one its own folder with --data-dir (ACM_DATA_DIR)") from None
    except PortInUse as exc:
        # The HTTP port can be taken between the check above and the bind, after the models load (two `acm serve`
        # started at once): name the address that was taken, and its setting.
        if settings.http_addr and str(exc.strerror).startswith(f"{settings.http_addr} "):
            raise UsageError(
                f"{exc.strerror} (the HTTP/JSON API; another `acm serve`?): stop it, or choose another with "
                "ACM_HTTP_ADDR=HOST:PORT, or set ACM_HTTP_ADDR= to serve gRPC only"
            ) from None
        raise UsageError(
            f"cannot listen on {settings.listen_addr}: the port is in use (another `acm serve`?); stop it, or "
            "choose another with --listen 127.0.0.1:PORT (ACM_LISTEN_ADDR)"
        ) from None
    except CannotListen as exc:
        raise UsageError(f"{exc.strerror}; choose another with --listen HOST:PORT (ACM_LISTEN_ADDR)") from None
    except TransportRefused as exc:
        raise UsageError(str(exc)) from None


async def _ingest(args: argparse.Namespace) -> None:
    text = _stdin_text() if args.text == "-" else args.text
    async with _client(args) as client:
        scope = _scope(args)
        response = await client.ingest(scope, text, Role(args.role), occurred_at=args.at, turn_id=args.turn_id or "")
        console.print(f"accepted: job [bold]{response.job_id}[/bold]")
        if args.wait:
            _print_job(await client.wait_job(scope, response.job_id))


def _print_job(job: gateway_pb2.Job) -> None:
    counts = ", ".join(f"{k}={v}" for k, v in sorted(job.counts.items()))
    line = f"job {job.job_id} ({job.kind}): {JOB_NAMES.get(job.status, '?')}"
    line += (f" — {counts}" if counts else "") + (f" — error: {job.error}" if job.error else "")
    console.print(line, markup=False)


async def _job(args: argparse.Namespace) -> None:
    async with _client(args) as client:
        _print_job(await client.get_job(_scope(args), args.job_id))


async def _fetch(args: argparse.Namespace) -> None:
    async with _client(args) as client:
        response = await client.fetch(_scope(args), args.query, args.budget, args.encoding or "")
    table = Table(title=f"{len(response.memories)} memories, {response.total_tokens}/{response.budget_tokens} tokens")
    for column in ("#", "tier", "score", "tokens", "source turns", "text"):
        table.add_column(column, overflow="fold")
    for i, m in enumerate(response.memories, start=1):
        table.add_row(
            str(i),
            TIER_NAMES.get(m.tier, "?"),
            f"{m.score:.4f}",
            str(m.token_count),
            Text(", ".join(t[:12] for t in m.source_turn_ids)),
            Text(m.text),  # stored text, never markup
        )
    console.print(table)
    if response.dropped:
        console.print(f"{response.dropped} more candidates did not fit the budget")


async def _forget(args: argparse.Namespace) -> None:
    async with _client(args) as client:
        scope = _scope(args)
        job_id = await client.forget(scope, args.level)
        console.print(f"forget accepted: job [bold]{job_id}[/bold]")
        if args.wait or args.verify:
            _print_job(await client.wait_job(scope, job_id))
        if args.verify:
            await _verify_forget(client, scope, args)


async def _verify_forget(client: AcmClient, scope: common_pb2.Scope, args: argparse.Namespace) -> None:
    """Fetch no longer returns the texts, and no store reachable from here holds them (acm_cli.residue)."""
    from acm_cli.residue import LAGGING, verify_stores

    fetched = 0
    for text in args.verify:
        response = await client.fetch(scope, text, 4000)
        fetched += sum(text in m.text for m in response.memories)
    found = await verify_stores(args.verify, _data_dir(args), dict(os.environ), args.verify_timeout)
    table = Table(title="what is left of the forgotten text")
    for column in ("where", "hits"):
        table.add_column(column)
    table.add_row("Fetch (this scope)", str(fetched))
    for store, hits in found.items():
        table.add_row(store + (" (kept a while by design: docs/privacy.md)" if store in LAGGING else ""), str(hits))
    console.print(table)
    if fetched or any(hits for store, hits in found.items() if store not in LAGGING):
        console.print("[red]not erased everywhere[/red]")
        raise SystemExit(EXIT_FAILED)
    console.print("erased: none of the stores scanned holds it" + ("" if found else " (no store reachable from here)"))


def _ids(value: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))


def _database_url(args: argparse.Namespace) -> str:
    """--database-url, else ACM_DATABASE_URL, else the data folder's SQLite file; a SQLite file that is not
    there is refused: opening it would make an empty database whose keys no server reads."""
    url = str(args.database_url or f"sqlite:///{(_data_dir(args) / 'gateway.db').absolute()}")
    if url.startswith("sqlite:"):
        path = Path(url.removeprefix("sqlite:///"))
        if not path.is_file():
            raise UsageError(
                f"no ACM database at {path.absolute()}: start `acm serve` once with that data folder, or pass "
                "--data-dir (ACM_DATA_DIR) or --database-url (ACM_DATABASE_URL) of an existing one"
            )
    return url


async def _open_database(url: str) -> Relational:
    from urllib.parse import urlparse

    from acm.bootstrap import ConfigError, open_relational

    try:
        return await open_relational(url, service="gateway")  # the keys are the gateway's
    except ConfigError as exc:
        raise UsageError(f"{exc} (--database-url or ACM_DATABASE_URL)") from None
    except Exception as exc:  # the driver's own error: unreachable host, refused login, not a database file
        parts = urlparse(url)
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()  # no password on screen
        raise UsageError(f"cannot open the database {shown}: {type(exc).__name__}: {exc}") from None


async def _keys_master_key(_: argparse.Namespace) -> None:
    from acm.sealing import new_master_key

    print(new_master_key())


def _gateway_store_options(p: argparse.ArgumentParser, url: str, data_dir: str) -> None:
    """--database-url and --data-dir of the `acm keys` commands (the gateway's store)."""
    p.add_argument(
        "--database-url",
        default=os.environ.get("ACM_DATABASE_URL"),
        help=f"{url} (default ACM_DATABASE_URL, else the data folder's)",
    )
    p.add_argument("--data-dir", type=Path, help=f"data folder of the embedded ACM {data_dir} (default {DATA_DEFAULT})")


async def _keys_rotate_master(args: argparse.Namespace) -> None:
    """Re-wraps every data key under the new master key. Embedded (no --database-url): `acm serve` stopped, the
    data folder's master.key replaced. Distributed: ACM_MASTER_KEY (new) and ACM_MASTER_KEY_PREVIOUS (old), as
    the gateways run with during the rotation."""
    from acm.adapters.data_keys_sql import SqlDataKeyRepo
    from acm.sealing import MasterKeyMissing, Rotation, master_keys, rotate_embedded_master, rotate_master

    def progress(done: int, total: int) -> None:
        console.print(f"re-wrapped {done} of {total} data keys")

    embedded = args.data_dir is not None or not args.database_url
    url = _database_url(
        argparse.Namespace(database_url=None if embedded else args.database_url, data_dir=args.data_dir)
    )
    lock = None
    if embedded:
        from acm_cli.embedded import DataDirInUse, lock_data_dir

        try:  # the running process holds the old master key in memory: it must not run meanwhile
            lock = lock_data_dir(_data_dir(args))
        except DataDirInUse as exc:
            raise UsageError(f"{exc}: stop it first (the rotation replaces its master key)") from None
    else:
        try:
            masters = master_keys(
                os.environ.get("ACM_MASTER_KEY", ""), os.environ.get("ACM_MASTER_KEY_PREVIOUS", "").split(",")
            )
        except ValueError as exc:
            raise UsageError(
                f"{exc}: set the new key as ACM_MASTER_KEY, the old one as ACM_MASTER_KEY_PREVIOUS"
            ) from None
    rel = await _open_database(url)
    try:
        repo = SqlDataKeyRepo.of(rel)
        result: Rotation
        if embedded:
            result = await rotate_embedded_master(_data_dir(args), repo, args.batch, progress)
        else:
            result = await rotate_master(repo, masters, args.batch, progress)
    except MasterKeyMissing as exc:
        console.print(f"[red]{exc}[/red]")
        raise SystemExit(EXIT_FAILED) from None
    finally:
        await rel.close()
        if lock is not None:
            os.close(lock)
    console.print(f"re-wrapped {result.rewrapped} data keys; {result.left} left on another master key")
    if result.left:
        console.print(
            "[red]a gateway still wraps new keys with an old master key: update it, then run this again[/red]"
        )
        raise SystemExit(EXIT_FAILED)
    if not embedded:
        console.print("done: remove ACM_MASTER_KEY_PREVIOUS from the gateways and restart them")


async def _keys_create(args: argparse.Namespace) -> None:
    from acm.auth import create_api_key
    from acm.domain.scope import Grant, KeyRole

    try:
        grant = Grant(KeyRole(args.role), _ids(args.customers), _ids(args.users))
    except ScopeError as exc:
        raise UsageError(f"cannot create the key: {exc}") from None
    rel = await _open_database(_database_url(args))
    try:
        key, secret = await create_api_key(rel.api_keys, args.client, args.name, grant)
    finally:
        await rel.close()
    where = f" for customers {', '.join(grant.customers)}" if grant.customers else ""
    where += f", users {', '.join(grant.users)}" if grant.users else ""
    console.print(f"{grant.role} key {key.key_id} for client {key.client_id}{where}: {secret}")
    console.print("store it now: only its hash is kept")


EPILOG = f"""\
data folder (database, dev key, logs): --data-dir, else $ACM_DATA_DIR, else the .acm folder of the
  checkout acm runs from (an installed acm: ~/.local/share/acm); here: {default_data_dir()}
API key: --api-key, else $ACM_API_KEY, else the dev key `acm serve` keeps in the data folder; it is sent as
  metadata `authorization: Bearer <key>`.
exit codes: 0 done; 2 the command line or its input is wrong, or `acm serve` cannot start (one line says
  what to do); 1 the call failed (server unreachable, key refused, server error)."""


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="acm",
        description="ACM: context lifecycle platform for LLM agents. `acm serve` runs it here; the other commands "
        "talk to any ACM gateway.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser(
        "serve",
        help="run embedded ACM (every service in one process)",
        description=f"Run embedded ACM: every service in one process, gRPC on {DEFAULT_ADDR}, data in the data "
        f"folder: --data-dir, else {DATA_DEFAULT}.",
    )
    serve.add_argument("--data-dir", type=Path, help=f"data folder: database, dev key, logs (default {DATA_DEFAULT})")
    serve.add_argument(
        "--listen", metavar="HOST:PORT", help=f"gRPC address (default {DEFAULT_ADDR}, or ACM_LISTEN_ADDR)"
    )
    serve.set_defaults(run=_serve)

    def remote(sp: argparse.ArgumentParser, scoped: bool = True) -> None:
        sp.add_argument(
            "--addr",
            metavar="HOST:PORT",
            default=os.environ.get("ACM_ADDR", DEFAULT_ADDR),
            help=f"the ACM gateway (default {DEFAULT_ADDR}, or ACM_ADDR)",
        )
        sp.add_argument(
            "--api-key",
            default=os.environ.get("ACM_API_KEY"),
            help="API key (default ACM_API_KEY, else the dev key in the data folder)",
        )
        sp.add_argument(
            "--data-dir",
            type=Path,
            help=f"data folder of the `acm serve` whose dev key to use (default {DATA_DEFAULT})",
        )
        sp.add_argument("--tls", action="store_true", help="connect over TLS (implied by the three options below)")
        for flag, var, what in (
            ("--ca-file", "ACM_TLS_CA_FILE", "CA certificate (PEM) that signed the gateway's (default: the system's)"),
            ("--cert-file", "ACM_TLS_CERT_FILE", "client certificate (PEM), for a gateway that requires one"),
            ("--key-file", "ACM_TLS_KEY_FILE", "the client certificate's key (PEM)"),
        ):
            default = os.environ.get(var)
            sp.add_argument(flag, type=Path, default=Path(default) if default else None, help=f"{what}; or {var}")
        if scoped:
            id_chars = "1-128 letters, digits, . _ @ -"
            sp.add_argument(
                "-c", "--customer", required=True, type=_scope_id("customer_id"), help=f"customer id ({id_chars})"
            )
            sp.add_argument("-u", "--user", required=True, type=_scope_id("user_id"), help="user id, in that customer")
            sp.add_argument(
                "-a", "--agent", type=_scope_id("agent_id"), help="agent id: its schema decides what is kept"
            )
            sp.add_argument("-s", "--session", type=_scope_id("session_id"), help="session id (a conversation)")

    ingest = sub.add_parser("ingest", help="send one turn")
    remote(ingest)
    ingest.add_argument("text", help="the turn's text (UTF-8), or - to read it from stdin")
    ingest.add_argument("--role", default="user", choices=[r.value for r in Role], help="who said it (default user)")
    ingest.add_argument("--at", type=_moment, help="when it happened, ISO 8601 (e.g. 2026-05-01T09:30); default now")
    ingest.add_argument("--turn-id", help="the turn's id, shown as a memory's source turn (default: a new one)")
    ingest.add_argument("--wait", action="store_true", help="wait until ingest has written it")
    ingest.set_defaults(run=_ingest)

    fetch = sub.add_parser("fetch", help="fetch context for a query")
    remote(fetch)
    fetch.add_argument("query", help="the question the context is for")
    fetch.add_argument("--budget", type=_budget, default=0, help="token budget (default 0: the server's)")
    fetch.add_argument(
        "--encoding", choices=["cl100k_base", "o200k_base"], help="tokenizer of the budget (default cl100k_base)"
    )
    fetch.set_defaults(run=_fetch)

    job = sub.add_parser("job", help="show a job")
    remote(job)
    job.add_argument("job_id", help="the id ingest or forget printed")
    job.set_defaults(run=_job)

    forget = sub.add_parser("forget", help="erase a session, user, customer or client")
    remote(forget)
    forget.add_argument(
        "--level",
        default="user",
        choices=["session", "user", "customer", "client"],
        help="what to erase, from the scope given (default user)",
    )
    forget.add_argument("--wait", action="store_true", help="wait until every store has erased it")
    forget.add_argument(
        "--verify",
        action="append",
        metavar="TEXT",
        default=[],
        help="then check TEXT (repeatable: words the forgotten scope said) is gone: Fetch, and every byte of the "
        "stores reachable from here (the data folder; ACM_DATABASE_URL, ACM_GRAPH_URL, ACM_CACHE_URL, ACM_BUS_URL); "
        "exit 1 if found",
    )
    forget.add_argument(
        "--verify-timeout", type=float, default=30.0, help="seconds to wait for the stores to drop it (default 30)"
    )
    forget.set_defaults(run=_forget)
    add_memory_parsers(sub, remote, _moment, _budget)
    add_mcp_parser(sub, remote, _scope_id)

    keys = sub.add_parser("keys", help="manage API keys (talks to the database directly)")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True, metavar="KEYS_COMMAND")
    create = keys_sub.add_parser("create", help="create a key for a client")
    create.add_argument("--client", required=True, type=_scope_id("client_id"), help="the client the key acts for")
    create.add_argument("--name", default="", help="a label for the key (shown in the audit log)")
    create.add_argument(
        "--role",
        choices=["admin", "agent"],
        default="admin",
        help="admin: everything in the client (Forget of customers and the client, agent schemas); "
        "agent: Ingest, Fetch, GetJob, Compact and user/session Forget inside --customers (and --users)",
    )
    create.add_argument("--customers", default="", help="agent keys: the customer ids it acts for, comma-separated")
    create.add_argument("--users", default="", help="agent keys: only these user ids of those customers")
    _gateway_store_options(create, "postgresql://… or sqlite:///… of an existing ACM", "whose database to use")
    create.set_defaults(run=_keys_create)
    master = keys_sub.add_parser(
        "master-key", help="print a new master key for ACM_MASTER_KEY (wraps the bus's data keys; docs/privacy.md)"
    )
    master.set_defaults(run=_keys_master_key)
    rotate = keys_sub.add_parser(
        "rotate-master",
        help="re-wrap every data key under a new master key (resumable; docs/privacy.md, Rotating the master key)",
        description="Embedded: stop `acm serve`; a new master.key is made and every data key re-wrapped by it. "
        "Distributed: run with ACM_MASTER_KEY=<new> ACM_MASTER_KEY_PREVIOUS=<old> (as the gateways run during the "
        "rotation) and --database-url of the gateway's store. Run again after an interruption: it goes on.",
    )
    _gateway_store_options(rotate, "the gateway's store, postgresql://… (distributed)", "whose master key to rotate")
    rotate.add_argument("--batch", type=int, default=500, help="data keys re-wrapped between progress lines")
    rotate.set_defaults(run=_keys_rotate_master)

    bench = sub.add_parser(
        "bench",
        help="run a benchmark (starts its own embedded ACM)",
        description="Benchmarks that drive ACM over gRPC as an agent does, each against an embedded ACM of its own "
        "(a fresh temporary data folder unless --data-dir); results as JSON with --json. `acm bench NAME --help` "
        "for one.",
    )
    _add_bench_parsers(bench)
    add_reindex_parser(sub)
    add_db_parser(sub)
    return p


BENCH_MISSING = (
    "the benchmarks are not installed here (they are not part of the ACM package or its images): in a source "
    "checkout, run `make install` (it installs them from benchmarks/ with the dev extra)"
)


def _add_bench_parsers(bench: argparse.ArgumentParser) -> None:
    """The benchmarks' subcommands, from the acm_benchmarks package (benchmarks/, a dev install only); without
    it `acm bench …` says how to install it."""
    try:
        from acm_benchmarks import add_bench_parsers
    except ModuleNotFoundError as exc:
        if exc.name != "acm_benchmarks":  # the package is there but broken: that is a bug to see
            raise
        bench.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        bench.set_defaults(run=_bench_missing)
        return
    add_bench_parsers(bench)


async def _bench_missing(args: argparse.Namespace) -> None:
    raise UsageError(BENCH_MISSING)


def _not_utf8(argv: list[str]) -> str:
    for i, arg in enumerate(argv, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape")[:40]
            return f"argument {i} is not UTF-8 ({shown!r}): pass text as UTF-8, or `-` and the text on stdin"
    return ""


def _prog(args: argparse.Namespace | None) -> str:
    names = (getattr(args, name, None) for name in ("command", "keys_command", "bench_command"))
    return " ".join(["acm", *(n for n in names if isinstance(n, str))])


def _log_to_file(args: argparse.Namespace) -> None:
    """Libraries' log records (a driver's retries, say) go to <data folder>/logs/cli.log, not the terminal:
    the command's own line says what went wrong. The file is made only if something is logged."""
    import logging

    class LazyFileHandler(logging.FileHandler):
        def _open(self) -> io.TextIOWrapper:
            Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
            return super()._open()

    logging.raiseExceptions = False  # a log file that cannot be written is no reason to print a traceback
    handler = LazyFileHandler(_data_dir(args) / "logs" / "cli.log", delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])


def _rpc_error(exc: grpc.aio.AioRpcError, args: argparse.Namespace) -> tuple[str, int]:
    details = " ".join((exc.details() or "").split())
    hint = _HINTS.get(exc.code(), "")
    if exc.code() is grpc.StatusCode.UNAVAILABLE:
        hint = f"{hint} (tried {args.addr})"
    line = f"{_prog(args)}: {exc.code().name}: {details}" + (f" — {hint}" if hint else "")
    return line, EXIT_USAGE if exc.code() in _INPUT_CODES else EXIT_FAILED


def _internal_error(exc: BaseException, args: argparse.Namespace | None) -> str:
    """Log the traceback under the data folder (never the terminal) and say where, with an id to quote."""
    error_id = secrets.token_hex(4)
    record = f"--- error {error_id} at {datetime.now().astimezone().isoformat()} in `{_prog(args)}`\n"
    record += "".join(traceback.format_exception(exc))
    log_file = _data_dir(args or argparse.Namespace()) / "logs" / "cli-errors.log"
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        with open(os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "a") as out:
            out.write(record)
    except OSError:
        log_file = Path(os.environ.get("TMPDIR", "/tmp")) / f"acm-error-{error_id}.log"
        log_file.write_text(record)
    return f"{_prog(args)}: internal error {error_id} ({type(exc).__name__}); the details are in {log_file}"


def main(argv: list[str] | None = None) -> None:
    """Run one command. Expected failures print one line on stderr, never a traceback (exit codes: EPILOG)."""
    argv = sys.argv[1:] if argv is None else argv
    args: argparse.Namespace | None = None
    try:
        if problem := _not_utf8(argv):
            raise UsageError(problem)
        args = parser().parse_args(argv)
        if args.command not in ("serve", "bench"):  # those two log to the terminal, as servers do
            _log_to_file(args)
        asyncio.run(args.run(args))
    except _ParseError as exc:
        _fail(str(exc), EXIT_USAGE)
    except (UsageError, ValueError) as exc:  # ValueError: a value the command could not use (ScopeError, …)
        _fail(f"{_prog(args)}: {exc}", EXIT_USAGE)
    except grpc.aio.AioRpcError as exc:
        assert args is not None
        _fail(*_rpc_error(exc, args))
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except BrokenPipeError:  # `acm fetch … | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except Exception as exc:
        _fail(_internal_error(exc, args), EXIT_FAILED)


def _fail(line: str, code: int) -> NoReturn:
    print(line, file=sys.stderr, flush=True)
    raise SystemExit(code)


if __name__ == "__main__":
    main()
