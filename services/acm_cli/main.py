"""`acm`: run embedded ACM and talk to any ACM gateway from a terminal.

acm serve                                  embedded ACM on 127.0.0.1:50051 (data in ./.acm)
acm ingest -c acme -u alice -s s1 "I moved to Lisbon in May" --wait
acm fetch  -c acme -u alice "where do I live?"
acm job    -c acme -u alice <job id>
acm forget -c acme -u alice --level user
acm keys create --client acme --database-url postgresql://…   (distributed mode)
acm bench locomo --data locomo.json --json results/locomo.json   (benchmarks, against embedded ACM)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from datetime import datetime
from pathlib import Path

import grpc
from rich.console import Console
from rich.table import Table

from acm.client import AcmClient
from acm.domain.models import Role
from acm.v1 import common_pb2, gateway_pb2
from acm_cli.bench import add_bench_parsers

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


def _api_key(args: argparse.Namespace) -> str:
    if args.api_key:
        return str(args.api_key)
    key_file = Path(args.data_dir) / "dev-api-key"
    if key_file.exists():
        return key_file.read_text().strip()
    raise SystemExit(f"no API key: set ACM_API_KEY, pass --api-key, or run `acm serve` (it writes {key_file})")


def _scope(args: argparse.Namespace) -> common_pb2.Scope:
    return common_pb2.Scope(
        customer_id=args.customer, user_id=args.user, agent_id=args.agent or "", session_id=args.session or ""
    )


def _client(args: argparse.Namespace) -> AcmClient:
    return AcmClient(args.addr, _api_key(args))


async def _serve(args: argparse.Namespace) -> None:
    from acm.runtime import configure_logging, wait_for_stop_signal
    from acm.settings import load
    from acm.telemetry import configure_metrics, configure_tracing
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

    settings = load(EmbeddedSettings)
    overrides = {k: v for k, v in (("data_dir", args.serve_data_dir), ("listen_addr", args.listen)) if v}
    settings = settings.model_copy(update=overrides)
    configure_logging(settings.log_level)
    configure_tracing("acm-embedded")
    configure_metrics("acm-embedded")
    console.print(f"[bold]ACM embedded[/bold]: loading models and stores in {settings.data_dir.resolve()} …")
    async with EmbeddedAcm(settings) as acm:
        console.print(f"gateway (acm.v1.Gateway) on [bold]127.0.0.1:{acm.port}[/bold]")
        console.print(f"API key for client 'local': {acm.api_key}  (saved in {settings.data_dir}/dev-api-key)")
        console.print('try:  acm ingest -c acme -u alice -s s1 "I moved to Lisbon in May" --wait')
        console.print('      acm fetch  -c acme -u alice "where do I live?"')
        console.print("Ctrl-C stops.")
        await wait_for_stop_signal()


async def _ingest(args: argparse.Namespace) -> None:
    text = sys.stdin.read() if args.text == "-" else args.text
    at = datetime.fromisoformat(args.at) if args.at else None
    async with _client(args) as client:
        scope = _scope(args)
        response = await client.ingest(scope, text, Role(args.role), occurred_at=at, turn_id=args.turn_id or "")
        console.print(f"accepted: job [bold]{response.job_id}[/bold]")
        if args.wait:
            _print_job(await client.wait_job(scope, response.job_id))


def _print_job(job: gateway_pb2.Job) -> None:
    counts = ", ".join(f"{k}={v}" for k, v in sorted(job.counts.items()))
    line = f"job {job.job_id} ({job.kind}): {JOB_NAMES.get(job.status, '?')}"
    console.print(line + (f" — {counts}" if counts else "") + (f" — error: {job.error}" if job.error else ""))


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
            ", ".join(t[:12] for t in m.source_turn_ids),
            m.text,
        )
    console.print(table)
    if response.dropped:
        console.print(f"{response.dropped} more candidates did not fit the budget")


async def _forget(args: argparse.Namespace) -> None:
    async with _client(args) as client:
        scope = _scope(args)
        job_id = await client.forget(scope, args.level)
        console.print(f"forget accepted: job [bold]{job_id}[/bold]")
        if args.wait:
            _print_job(await client.wait_job(scope, job_id))


async def _keys_create(args: argparse.Namespace) -> None:
    from acm.auth import create_api_key
    from acm.bootstrap import open_relational

    rel = await open_relational(args.database_url)
    try:
        key, secret = await create_api_key(rel.api_keys, args.client, args.name)
    finally:
        await rel.close()
    console.print(f"key {key.key_id} for client {key.client_id}: {secret}")
    console.print("store it now: only its hash is kept")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="acm", description="ACM: context lifecycle platform for LLM agents")
    sub = p.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run embedded ACM (every service in one process)")
    serve.add_argument("--data-dir", dest="serve_data_dir", type=Path, help="default ./.acm (ACM_DATA_DIR)")
    serve.add_argument("--listen", help="default 127.0.0.1:50051 (ACM_LISTEN_ADDR)")
    serve.set_defaults(run=_serve)

    def remote(sp: argparse.ArgumentParser, scoped: bool = True) -> None:
        sp.add_argument("--addr", default=os.environ.get("ACM_ADDR", "127.0.0.1:50051"))
        sp.add_argument("--api-key", default=os.environ.get("ACM_API_KEY"))
        sp.add_argument("--data-dir", default=os.environ.get("ACM_DATA_DIR", ".acm"), help="for the dev key")
        if scoped:
            sp.add_argument("-c", "--customer", required=True)
            sp.add_argument("-u", "--user", required=True)
            sp.add_argument("-a", "--agent")
            sp.add_argument("-s", "--session")

    ingest = sub.add_parser("ingest", help="send one turn")
    remote(ingest)
    ingest.add_argument("text", help="the turn's text, or - to read stdin")
    ingest.add_argument("--role", default="user", choices=[r.value for r in Role])
    ingest.add_argument("--at", help="when it happened (ISO 8601); default now")
    ingest.add_argument("--turn-id")
    ingest.add_argument("--wait", action="store_true", help="wait until ingest has written it")
    ingest.set_defaults(run=_ingest)

    fetch = sub.add_parser("fetch", help="fetch context for a query")
    remote(fetch)
    fetch.add_argument("query")
    fetch.add_argument("--budget", type=int, default=0, help="token budget (default: server's)")
    fetch.add_argument("--encoding", choices=["cl100k_base", "o200k_base"])
    fetch.set_defaults(run=_fetch)

    job = sub.add_parser("job", help="show a job")
    remote(job)
    job.add_argument("job_id")
    job.set_defaults(run=_job)

    forget = sub.add_parser("forget", help="erase a session, user, customer or client")
    remote(forget)
    forget.add_argument("--level", default="user", choices=["session", "user", "customer", "client"])
    forget.add_argument("--wait", action="store_true")
    forget.set_defaults(run=_forget)

    keys = sub.add_parser("keys", help="manage API keys (talks to the database directly)")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    create = keys_sub.add_parser("create", help="create a key for a client")
    create.add_argument("--client", required=True)
    create.add_argument("--name", default="")
    create.add_argument("--database-url", default=os.environ.get("ACM_DATABASE_URL", "sqlite:///.acm/acm.db"))
    create.set_defaults(run=_keys_create)

    bench = sub.add_parser("bench", help="run a benchmark (starts its own embedded ACM)")
    add_bench_parsers(bench)
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    try:
        asyncio.run(args.run(args))
    except grpc.aio.AioRpcError as exc:
        console.print(f"[red]{exc.code().name}[/red]: {exc.details()}")
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
