"""`acm memories get|list|update|delete|history`, `acm export`, `acm import`, `acm ingest-batch`, `acm compact`
and `acm agents define|get|list`: the Memory API and the other gateway RPCs from a terminal
(docs/memory-api.md). Registered by acm_cli.main.parser; failures become one line there."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime
from pathlib import Path
from types import ModuleType

from google.protobuf import json_format
from rich.console import Console
from rich.table import Table
from rich.text import Text

from acm.channels import open_channel
from acm.convert import ROLE_TO_PB, ts
from acm.domain.models import Role
from acm.v1 import common_pb2, gateway_pb2, memories_pb2
from acm_cli.memories import MemoryCalls

console = Console()
BATCH = 500  # lines per ImportUser / turns per IngestBatch (the gateway's limit)
_TIERS = {"user": common_pb2.TIER_USER, "customer": common_pb2.TIER_CUSTOMER, "client": common_pb2.TIER_CLIENT}
_LAYERS = {"short": common_pb2.LAYER_SHORT, "mid": common_pb2.LAYER_MID, "long": common_pb2.LAYER_LONG}
_TRUST = {
    "normal": common_pb2.TRUST_NORMAL,
    "untrusted": common_pb2.TRUST_UNTRUSTED,
    "instruction": common_pb2.TRUST_INSTRUCTION,
}
_NAMES = {v: k for k, v in _TIERS.items()}
_STATUS = {memories_pb2.MEMORY_STATUS_ACTIVE: "active", memories_pb2.MEMORY_STATUS_STALE: "stale"}


class InputError(ValueError):
    """The file or a line of it cannot be used; the message names it (acm_cli.main prints it, exit 2)."""


def _cli() -> ModuleType:
    from acm_cli import main  # the CLI's own helpers (key, scope, TLS); imported late: main imports this module

    return main


def _calls(args: argparse.Namespace) -> tuple[MemoryCalls, Callable[[], Awaitable[None]]]:
    cli = _cli()
    channel = open_channel(args.addr, cli._tls(args))
    return MemoryCalls(channel, cli._api_key(args)), channel.close


async def _wait(args: argparse.Namespace, scope: common_pb2.Scope, job_id: str) -> None:
    cli = _cli()
    async with cli._client(args) as client:
        cli._print_job(await client.wait_job(scope, job_id))


# --- memories -------------------------------------------------------------------------------------------


def _row(m: memories_pb2.StoredMemory) -> list[Text | str]:
    when = m.memory.created_at.ToDatetime().isoformat(timespec="seconds") if m.memory.created_at.seconds else ""
    return [
        m.memory.memory_id,
        _NAMES.get(m.memory.tier, "?"),
        common_pb2.Layer.Name(m.memory.layer).removeprefix("LAYER_").lower(),
        m.memory.kind,
        _STATUS.get(m.status, "?"),
        when,
        Text(m.memory.text),  # stored text, never markup
    ]


def _table(title: str, memories: list[memories_pb2.StoredMemory]) -> None:
    table = Table(title=title)
    for column in ("memory id", "tier", "layer", "kind", "status", "created", "text"):
        table.add_column(column, overflow="fold")
    for m in memories:
        table.add_row(*_row(m))
    console.print(table)


async def _get(args: argparse.Namespace) -> None:
    calls, close = _calls(args)
    try:
        found = await calls.get(_cli()._scope(args), args.memory_id)
    finally:
        await close()
    print(json_format.MessageToJson(found, preserving_proto_field_name=True))


def _list_request(args: argparse.Namespace, token: str) -> memories_pb2.ListMemoriesRequest:
    request = memories_pb2.ListMemoriesRequest(
        scope=_cli()._scope(args),
        tiers=[_TIERS[t] for t in args.tier],
        layers=[_LAYERS[x] for x in args.layer],
        kinds=args.kind,
        trust=[_TRUST[t] for t in args.trust],
        entity=args.entity or "",
        role=common_pb2.ROLE_UNSPECIFIED if not args.role else ROLE_TO_PB[Role(args.role)],
        tool_name=args.tool or "",
        include_stale=args.stale,
        metadata=args.metadata,
        page_size=args.page_size,
        page_token=token,
    )
    if args.after:
        request.created_after.CopyFrom(ts(args.after))
    if args.before:
        request.created_before.CopyFrom(ts(args.before))
    return request


async def _list(args: argparse.Namespace) -> None:
    calls, close = _calls(args)
    shown: list[memories_pb2.StoredMemory] = []
    token = args.page_token or ""
    try:
        while True:
            page = await calls.list_memories(_list_request(args, token))
            shown += page.memories
            token = page.next_page_token
            if not (args.all and token):
                break
    finally:
        await close()
    if args.json:
        for m in shown:
            print(json_format.MessageToJson(m, preserving_proto_field_name=True, indent=None))
        return
    _table(f"{len(shown)} memories", shown)
    if token:
        console.print(f"more: --page-token {token}  (or --all)", markup=False)


async def _send(
    args: argparse.Namespace,
    what: str,
    call: Callable[[MemoryCalls, common_pb2.Scope], Awaitable[gateway_pb2.MemoryJob]],
) -> None:
    """An edit: sent, its job printed (and waited for with --wait)."""
    calls, close = _calls(args)
    scope = _cli()._scope(args)
    try:
        job = await call(calls, scope)
    finally:
        await close()
    console.print(
        f"{what} accepted: job {job.job_id}" + (f", memory {job.memory_id}" if job.memory_id else ""), markup=False
    )
    if args.wait:
        await _wait(args, scope, job.job_id)


async def _update(args: argparse.Namespace) -> None:
    await _send(args, "update", lambda calls, scope: calls.update(scope, args.memory_id, args.text, args.source))


async def _delete(args: argparse.Namespace) -> None:
    await _send(args, "delete", lambda calls, scope: calls.delete(scope, args.memory_id))


async def _history(args: argparse.Namespace) -> None:
    if bool(args.memory_id) == bool(args.slot):
        raise InputError("give a memory id or --slot SLOT (e.g. 'alice|lives_in'), one of the two")
    calls, close = _calls(args)
    try:
        found = await calls.history(_cli()._scope(args), args.memory_id or "", args.slot or "")
    finally:
        await close()
    _table(f"{len(found.versions)} versions, oldest first", list(found.versions))


# --- export, import, ingest-batch -----------------------------------------------------------------------


async def _export(args: argparse.Namespace) -> None:
    calls, close = _calls(args)
    count = 0
    try:
        async for line in calls.export(_cli()._scope(args)):
            sys.stdout.write(line + "\n")
            count += 1
    finally:
        await close()
    sys.stdout.flush()
    print(f"exported {count} memories", file=sys.stderr)


def _lines(path: Path) -> list[tuple[int, str]]:
    """(line number, line) of the file's non-blank lines; InputError when it cannot be read as UTF-8 text."""
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 (byte {data[exc.start]:#04x} at offset {exc.start})") from None
    return [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]


def _chunks(items: list[tuple[int, str]]) -> Iterator[list[tuple[int, str]]]:
    for start in range(0, len(items), BATCH):
        yield items[start : start + BATCH]


async def _import(args: argparse.Namespace) -> None:
    lines = _lines(args.file)
    if not lines:
        raise InputError(f"{args.file} has no lines: give a file `acm export` wrote")
    calls, close = _calls(args)
    scope = _cli()._scope(args)
    jobs = []
    try:
        for chunk in _chunks(lines):
            job = await calls.import_(scope, "".join(f"{line}\n" for _, line in chunk))
            jobs.append(job.job_id)
            console.print(f"import accepted: {len(chunk)} memories, job {job.job_id}", markup=False)
    finally:
        await close()
    if args.wait:
        for job_id in jobs:
            await _wait(args, scope, job_id)


def turn_of(n: int, line: str) -> common_pb2.Turn:
    """One line of an ingest-batch file: {"content": …, "role": "user", "turn_id": …, "occurred_at": ISO 8601,
    "tool_name": …, "metadata": {…}}; only content is required."""
    try:
        item = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"line {n}: not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(item, dict) or not isinstance(item.get("content"), str):
        raise InputError(f'line {n}: expected an object with "content" (text), e.g. {{"content": "hi"}}')
    unknown = set(item) - {"content", "role", "turn_id", "occurred_at", "tool_name", "metadata"}
    if unknown:
        raise InputError(f"line {n}: unknown field(s) {sorted(unknown)}")
    try:
        role = Role(item.get("role", "user"))
    except ValueError:
        raise InputError(f"line {n}: role must be one of {', '.join(r.value for r in Role)}") from None
    metadata = item.get("metadata") or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise InputError(f"line {n}: metadata must be an object of strings")
    turn = common_pb2.Turn(
        turn_id=str(item.get("turn_id", "")),
        role=ROLE_TO_PB[role],
        content=item["content"],
        tool_name=str(item.get("tool_name", "")),
        metadata=metadata,
    )
    if "occurred_at" in item:
        try:
            turn.occurred_at.CopyFrom(ts(datetime.fromisoformat(str(item["occurred_at"]))))
        except ValueError:
            raise InputError(f"line {n}: occurred_at is not ISO 8601 (e.g. 2026-05-01T09:30:00+00:00)") from None
    return turn


async def _ingest_batch(args: argparse.Namespace) -> None:
    lines = _lines(args.file)
    if not lines:
        raise InputError(f'{args.file} has no lines: one JSON turn per line, e.g. {{"content": "hi"}}')
    turns = [(n, turn_of(n, line)) for n, line in lines]  # every line checked before anything is sent
    calls, close = _calls(args)
    scope = _cli()._scope(args)
    jobs = []
    try:
        for start in range(0, len(turns), BATCH):
            chunk = [t for _, t in turns[start : start + BATCH]]
            accepted = await calls.ingest_batch(scope, chunk)
            jobs += [a.job_id for a in accepted.accepted]
    finally:
        await close()
    console.print(f"accepted {len(jobs)} turns", markup=False)
    if args.wait:
        cli = _cli()
        async with cli._client(args) as client:
            for job_id in jobs:
                cli._print_job(await client.wait_job(scope, job_id))


# --- compact and agents ---------------------------------------------------------------------------------


async def _compact(args: argparse.Namespace) -> None:
    cli = _cli()
    async with cli._client(args) as client:
        record = await client.compact(cli._scope(args), args.budget)
    console.print(
        f"{record.outcome}: {record.tokens_before} → {record.tokens_after} tokens (ratio {record.ratio:.2f}), "
        f"verified={record.verified}, {record.turns_replaced} turns replaced"
        + (f" — {record.message}" if record.message else ""),
        markup=False,
    )


def _print_agent(info: gateway_pb2.AgentSchemaInfo) -> None:
    console.print(f"agent {info.agent_id} v{info.version} ({info.archetype}) {info.rationale}", markup=False)


async def _agents_define(args: argparse.Namespace) -> None:
    if args.overrides:
        try:
            json.loads(args.overrides)
        except json.JSONDecodeError as exc:
            raise InputError(f"--overrides is not JSON ({exc.msg} at column {exc.colno})") from None
    cli = _cli()
    async with cli._client(args) as client:
        info = await client.define_agent(cli._scope(args), args.description, args.overrides or "", args.archetype or "")
    _print_agent(info)


async def _agents_get(args: argparse.Namespace) -> None:
    cli = _cli()
    async with cli._client(args) as client:
        info = await client.get_agent(cli._scope(args), args.version)
    _print_agent(info)
    print(json.dumps(json.loads(info.schema_json), indent=2))


async def _agents_list(args: argparse.Namespace) -> None:
    cli = _cli()
    async with cli._client(args) as client:
        found = await client.list_agents(cli._scope(args))
    for info in found.agents:
        _print_agent(info)
    if not found.agents:
        console.print("no agent schemas in this client yet")


# --- parsers --------------------------------------------------------------------------------------------


def add_parsers(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    remote: Callable[[argparse.ArgumentParser], None],
    moment: Callable[[str], datetime],
    budget: Callable[[str], int],
) -> None:
    """The commands, on acm's subparsers; ``remote`` adds the connection and scope options to each."""

    def command(
        parent: argparse._SubParsersAction,  # type: ignore[type-arg]
        name: str,
        help_text: str,
        run: Callable[[argparse.Namespace], Awaitable[None]],
    ) -> argparse.ArgumentParser:
        """A command that calls a gateway: its connection and scope options, and what runs it."""
        p: argparse.ArgumentParser = parent.add_parser(name, help=help_text)
        remote(p)
        p.set_defaults(run=run)
        return p

    memories = sub.add_parser("memories", help="read, correct and delete memories (the Memory API)")
    msub = memories.add_subparsers(dest="memories_command", required=True, metavar="MEMORIES_COMMAND")

    get = command(msub, "get", "one memory, as JSON", _get)
    get.add_argument("memory_id", help="the memory's id (from fetch or memories list)")

    listing = command(msub, "list", "the scope's memories, newest first, filtered", _list)
    listing.add_argument(
        "--tier", action="append", default=[], choices=list(_TIERS), help="only this tier (repeatable)"
    )
    listing.add_argument(
        "--layer", action="append", default=[], choices=list(_LAYERS), help="only this layer (repeatable)"
    )
    listing.add_argument("--kind", action="append", default=[], help="only this kind, e.g. fact or turn (repeatable)")
    listing.add_argument("--after", type=moment, help="created at or after, ISO 8601")
    listing.add_argument("--before", type=moment, help="created before, ISO 8601")
    listing.add_argument(
        "--trust", action="append", default=[], choices=list(_TRUST), help="only this trust (repeatable)"
    )
    listing.add_argument("--entity", help="only memories that mention this entity (name or alias)")
    listing.add_argument("--role", choices=[r.value for r in Role], help="only what this role said")
    listing.add_argument("--tool", help="only this tool's output")
    listing.add_argument(
        "--metadata",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="only memories whose turn's metadata has this key and value (repeatable: all must match)",
    )
    listing.add_argument("--stale", action="store_true", help="superseded versions too")
    listing.add_argument("--page-size", type=int, default=0, help="memories per page, 1-500 (default 50)")
    listing.add_argument("--page-token", help="the token the previous page printed")
    listing.add_argument("--all", action="store_true", help="every page")
    listing.add_argument("--json", action="store_true", help="one JSON object per line instead of a table")

    update = command(msub, "update", "correct a memory: a new version supersedes it", _update)
    update.add_argument("memory_id", help="the memory to correct (its newest version)")
    update.add_argument("text", help="the corrected text")
    update.add_argument("--source", required=True, help="where the correction comes from, e.g. 'ticket 881'")
    update.add_argument("--wait", action="store_true", help="wait until ingest has applied it")

    delete = command(msub, "delete", "erase one memory from every store", _delete)
    delete.add_argument("memory_id", help="the memory to erase")
    delete.add_argument("--wait", action="store_true", help="wait until ingest has erased it")

    history = command(msub, "history", "the versions of a memory or of a slot, oldest first", _history)
    history.add_argument("memory_id", nargs="?", help="the memory (any of its versions)")
    history.add_argument("--slot", help="a slot instead, e.g. 'alice|lives_in'")

    command(sub, "export", "the user's memories as JSON lines on stdout (acm export … > f.jsonl)", _export)

    imports = command(sub, "import", "memories from `acm export`'s JSON lines into the user (idempotent)", _import)
    imports.add_argument("file", type=Path, help="the .jsonl file, or - for stdin")
    imports.add_argument("--wait", action="store_true", help="wait until ingest has written them")

    batch = command(sub, "ingest-batch", "send many turns: a file of JSON lines", _ingest_batch)
    batch.add_argument(
        "file",
        type=Path,
        help='one turn per line: {"content": …, "role": "user", "turn_id": …, "occurred_at": ISO 8601, '
        '"tool_name": …, "metadata": {…}} (only content is required); - for stdin',
    )
    batch.add_argument("--wait", action="store_true", help="wait until ingest has written every turn")

    compact = command(sub, "compact", "compact a session's working memory now (needs -s)", _compact)
    compact.add_argument("--budget", type=budget, default=0, help="token budget (default 0: the agent schema's)")

    agents = sub.add_parser("agents", help="agent schemas: define, get, list")
    asub = agents.add_subparsers(dest="agents_command", required=True, metavar="AGENTS_COMMAND")
    define = command(asub, "define", "define (or redefine) the agent -a from a description (admin key)", _agents_define)
    define.add_argument("description", help="what the agent does, in plain words")
    define.add_argument(
        "--overrides", help='JSON merged over the drafted schema, e.g. {"retention": {"mid_ttl_days": 7}}'
    )
    define.add_argument("--archetype", help="force an archetype by name")
    get_agent = command(asub, "get", "the agent -a's schema", _agents_get)
    get_agent.add_argument("--version", type=int, default=0, help="a version (default 0: the latest)")
    command(asub, "list", "every agent schema of the client", _agents_list)
