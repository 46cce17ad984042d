"""`acm bench traces`: does the session context keep what the agent's next tool call needs?

    acm bench traces --data trajectories.json --json results/traces.json [--plot traces.png] [--limit N]

Input: agent trajectories in the OpenAI chat format (a JSON list of items with `traj`, the messages, and
optionally `info.task.actions`, the gold write actions, used only to score the end state). Each trajectory
is one ACM session (user `user-<i>`, session `session-<i>`) fed message by message through gRPC Ingest
into an embedded ACM; system messages are the agent's instructions, neither ingested nor counted. A tool
message is a turn of role tool named after its tool; an assistant message with tool calls is a turn whose
text is its content (if any) and one `name(arguments)` line per call.

At every assistant message with tool calls, before it is ingested (its jobs and those before it DONE, the
consumers caught up), the session context is fetched (session id set, empty query) at 500, 1,000 and
2,000 tokens (o200k_base) and scored with the tool-call argument recall of the data README: the leaf
strings and numbers of the calls' parsed arguments, as text, case-insensitive, at least 3 characters,
that occur in the session's earlier messages; score = the share of them found (case-insensitive
substring) in the context, averaged over all values of all steps.

Systems side by side: `acm` (the Fetch's `context`), `truncation` (the newest earlier messages that fit,
each rendered "role: text", counted in o200k_base tokens plus one per message) and `full` (every earlier
message: the upper bound, whatever its size). `failures` = Fetches that errored or whose context,
recounted here with tiktoken, is over the budget (the end-state Fetches included); `steps` = the tool-call
steps with at least one value to recall (the README's count), while every step is fetched and its context
tokens and latency counted. After the last message, the end state: the values of the gold actions' kwargs
that occur in the trajectory, found in each system's context at each budget. The benchmark only scores:
nothing it reads from the gold data reaches ACM.

Context assembly, apart from the client's latency: before each scored gRPC Fetch, the benchmark calls a read
side of its own (acm.read.reader.read_side over the embedded ACM's retriever, cache and session owners, as
the gateway builds it) in this process with the same request, and times that call (`assembly_p50_ms`,
`assembly_p95_ms`: loading the session when it changed, retrieval, planning and counting) and, inside it,
the retriever's calls (`retrieval_p95_ms`; the rest is `planning_p95_ms`). The in-process call comes first,
so it embeds the step's query itself; the gRPC Fetch after it finds that query's vector cached.
`assembly_mismatches` counts in-process contexts that differ from the gRPC Fetch's (0 when both read the
same state).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acm_benchmarks.coverage import last_tokens
from acm_benchmarks.locomo import percentile
from acm_benchmarks.plotting import pyplot

if TYPE_CHECKING:
    from rich.console import Console

    from acm.client import AcmClient
    from acm.domain.retrieved import Retrieval, RetrievalQuery
    from acm.ports.reader import ContextReader
    from acm.ports.retriever import Retriever
    from acm_cli.embedded import EmbeddedAcm

SYSTEMS: tuple[str, ...] = ("acm", "truncation", "full")
BUDGETS: tuple[int, ...] = (500, 1000, 2000)
ENCODING = "o200k_base"
MIN_VALUE_CHARS = 3
CUSTOMER = "bench-traces"
AGENT = "traces"
MAX_ERRORS_KEPT = 10
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
# Older or newer spellings of the chat roles: a function result is a tool output, developer text instructions.
ROLE_ALIASES = {"function": "tool", "developer": "system"}

# ---------------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    arguments: str  # the raw JSON string, as the model wrote it

    def render(self) -> str:
        return f"{self.name}({self.arguments})"


@dataclass(frozen=True, slots=True)
class Message:
    role: str  # user, assistant or tool
    content: str
    tool_name: str = ""
    calls: tuple[Call, ...] = ()

    @property
    def text(self) -> str:
        """What is ingested: the content, then one `name(arguments)` line per call."""
        return "\n".join([*([self.content] if self.content else []), *(c.render() for c in self.calls)])

    def render(self) -> str:
        """A baseline item, as the data README's reference figures were measured."""
        return f"{self.role}: {self.text}"


@dataclass(frozen=True, slots=True)
class Trajectory:
    index: int
    messages: tuple[Message, ...]  # system messages left out
    actions: tuple[Any, ...] = ()  # gold actions (scoring only)
    skipped_empty: int = 0


def _content(raw: object) -> str:
    """OpenAI content: a string, null, or a list of parts ({"type": "text", "text": ...})."""
    if raw is None:
        return ""
    if isinstance(raw, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, Mapping) else str(p) for p in raw)
    return str(raw)


def parse_message(raw: Mapping[str, Any]) -> Message:
    calls = []
    # `function_call` is the older single-call form of `tool_calls`.
    legacy = [{"function": raw["function_call"]}] if raw.get("function_call") else []
    for call in raw.get("tool_calls") or legacy:
        function = call.get("function") or {}
        arguments = function.get("arguments", "")
        calls.append(
            Call(str(function.get("name", "")), arguments if isinstance(arguments, str) else json.dumps(arguments))
        )
    role = str(raw.get("role", ""))
    role = ROLE_ALIASES.get(role, role)
    return Message(
        role, _content(raw.get("content")), str(raw.get("name") or "") if role == "tool" else "", tuple(calls)
    )


def parse_trajectory(index: int, item: Mapping[str, Any]) -> Trajectory:
    messages = [parse_message(m) for m in item.get("traj") or item.get("messages") or []]
    kept = [m for m in messages if m.role != "system" and m.text.strip()]
    skipped = sum(1 for m in messages if m.role != "system" and not m.text.strip())
    info = item.get("info") or {}
    task = (info.get("task") or {}) if isinstance(info, Mapping) else {}
    actions = (task.get("actions") or []) if isinstance(task, Mapping) else []
    return Trajectory(index, tuple(kept), tuple(actions), skipped)


def load_trajectories(path: Path, limit: int | None = None) -> list[Trajectory]:
    data = json.loads(path.read_text())
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of trajectories (items with `traj`)")
    return [parse_trajectory(i, item) for i, item in enumerate(data[:limit])]


# ---------------------------------------------------------------------------------------------------
# Scoring


def leaf_values(value: object) -> list[str]:
    """Every leaf string or number, as text, depth first (booleans and nulls are not values)."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, str | int | float):
        return [str(value)]
    if isinstance(value, Mapping):
        return [v for item in value.values() for v in leaf_values(item)]
    if isinstance(value, list | tuple):
        return [v for item in value for v in leaf_values(item)]
    return []


def call_values(calls: Iterable[Call]) -> list[str]:
    """Leaf values of the calls' parsed arguments; arguments that are not JSON give none."""
    out: list[str] = []
    for call in calls:
        try:
            out += leaf_values(json.loads(call.arguments)) if call.arguments.strip() else []
        except json.JSONDecodeError:
            continue
    return out


def wanted_values(values: Iterable[str], seen_text: str) -> list[str]:
    """The values at least MIN_VALUE_CHARS long that occur (case-insensitive) in `seen_text`; once each."""
    seen = seen_text.lower()
    kept: dict[str, str] = {}  # lowered → first spelling: a value named twice in one step counts once
    for v in values:
        if len(v) >= MIN_VALUE_CHARS and v.lower() in seen:
            kept.setdefault(v.lower(), v)
    return list(kept.values())


def found(values: Iterable[str], context: str) -> int:
    lowered = context.lower()
    return sum(1 for v in values if v.lower() in lowered)


def action_values(actions: Iterable[Any]) -> list[str]:
    """Leaf values of the gold actions' kwargs."""
    return [v for a in actions if isinstance(a, Mapping) for v in leaf_values(a.get("kwargs") or a.get("arguments"))]


@dataclass(frozen=True, slots=True)
class Step:
    """A point where the agent calls tools: the messages before it, and the values it had to recall."""

    trajectory: int
    position: int  # index of the assistant message in Trajectory.messages
    values: tuple[str, ...]


def steps(traj: Trajectory) -> list[Step]:
    out = []
    for i, m in enumerate(traj.messages):
        if m.role == "assistant" and m.calls:
            earlier = "\n".join(e.text for e in traj.messages[:i])
            out.append(Step(traj.index, i, tuple(wanted_values(call_values(m.calls), earlier))))
    return out


def miss_rows(traj: Trajectory, step: Step, budget: int, context: str) -> list[dict[str, Any]]:
    """The step's values absent from `context`, each with the earlier messages that hold it (index, role,
    tool name): the material to tell why a value was lost."""
    lowered = context.lower()
    rows = []
    for value in step.values:
        if value.lower() in lowered:
            continue
        where = [
            {"index": i, "role": m.role, "tool": m.tool_name, "call": bool(m.calls)}
            for i, m in enumerate(traj.messages[: step.position])
            if value.lower() in m.text.lower()
        ]
        rows.append(
            {
                "trajectory": traj.index,
                "position": step.position,
                "budget": budget,
                "value": value,
                "where": where,
                "context": context,
            }
        )
    return rows


def end_values(traj: Trajectory) -> list[str]:
    return wanted_values(action_values(traj.actions), "\n".join(m.text for m in traj.messages))


class Counter:
    """tiktoken o200k_base, counted here rather than trusted from ACM's reply (its ranks come from the
    package ACM ships, as there is no download)."""

    def __init__(self, name: str = ENCODING) -> None:
        from acm.adapters.tokenizer import encoding

        self._enc = encoding(name)

    def __call__(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=()))


def truncation_context(messages: Sequence[Message], sizes: Sequence[int], budget: int) -> str:
    """The newest messages whose sizes (tokens + 1 each) fit the budget, oldest first, one per line."""
    return "\n".join(last_tokens([m.render() for m in messages], sizes, budget))


def full_context(messages: Sequence[Message]) -> str:
    return "\n".join(m.render() for m in messages)


# ---------------------------------------------------------------------------------------------------
# Tally


@dataclass
class Cell:
    """One system at one budget."""

    values: int = 0
    found: int = 0
    steps: int = 0  # steps with at least one value to recall (the README's count)
    fetches: int = 0  # every step, scored or not: each context is checked against the budget
    tokens: list[int] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    failures: int = 0
    # acm only: the in-process read side's time for the same request, and its retriever's share of it
    assembly_ms: list[float] = field(default_factory=list)
    retrieval_ms: list[float] = field(default_factory=list)
    # the CPU the assembly's own thread spent (time.thread_time): less bent by the machine's load than the wall
    # time; store reads and searches in worker threads are not in it
    assembly_cpu_ms: list[float] = field(default_factory=list)
    mismatches: int = 0

    def add(self, wanted: Sequence[str], context: str, tokens: int, latency_ms: float, failed: bool) -> None:
        self.steps += bool(wanted)
        self.fetches += 1
        self.values += len(wanted)
        self.found += found(wanted, context)
        self.tokens.append(tokens)
        self.latencies_ms.append(latency_ms)
        self.failures += failed

    def summary(self) -> dict[str, Any]:
        out = {
            "arg_recall_pct": round(100 * self.found / self.values, 1) if self.values else None,
            "steps": self.steps,
            "values": self.values,
            "mean_context_tokens": round(sum(self.tokens) / len(self.tokens), 1) if self.tokens else None,
            "max_context_tokens": max(self.tokens) if self.tokens else None,
            "failures": self.failures,
            "p50_ms": _pct(self.latencies_ms, 50),
            "p95_ms": _pct(self.latencies_ms, 95),
        }
        if self.assembly_ms:
            planning = [a - r for a, r in zip(self.assembly_ms, self.retrieval_ms, strict=True)]
            out |= {
                "assembly_p50_ms": _pct(self.assembly_ms, 50),
                "assembly_p95_ms": _pct(self.assembly_ms, 95),
                "retrieval_p95_ms": _pct(self.retrieval_ms, 95),
                "planning_p95_ms": _pct(planning, 95),
                "assembly_cpu_p50_ms": _pct(self.assembly_cpu_ms, 50),
                "assembly_cpu_p95_ms": _pct(self.assembly_cpu_ms, 95),
                "assembly_mismatches": self.mismatches,
            }
        return out


def _pct(values: Sequence[float], q: float) -> float | None:
    return round(percentile(values, q), 2) if values else None


@dataclass
class Tally:
    cells: dict[str, dict[int, Cell]] = field(
        default_factory=lambda: {s: {b: Cell() for b in BUDGETS} for s in SYSTEMS}
    )
    end_found: dict[str, dict[int, int]] = field(
        default_factory=lambda: {s: dict.fromkeys(BUDGETS, 0) for s in SYSTEMS}
    )
    end_values: int = 0
    errors: list[str] = field(default_factory=list)
    error_count: int = 0
    notices: int = 0
    messages: int = 0
    job_ms: list[float] = field(default_factory=list)
    misses: list[dict[str, Any]] = field(default_factory=list)

    def error(self, message: str) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_ERRORS_KEPT:
            self.errors.append(message)


def baseline_cells(
    tally: Tally, messages: Sequence[Message], sizes: Sequence[int], wanted: Sequence[str], count: Counter
) -> None:
    """Score truncation and full over `messages` (the messages before the step)."""
    start = time.perf_counter()
    whole = full_context(messages)
    whole_ms = (time.perf_counter() - start) * 1000
    whole_tokens = count(whole)
    for budget in BUDGETS:
        start = time.perf_counter()
        context = truncation_context(messages, sizes, budget)
        ms = (time.perf_counter() - start) * 1000
        tokens = count(context)
        tally.cells["truncation"][budget].add(wanted, context, tokens, ms, tokens > budget)
        # The upper bound ignores the budget: its size is what it costs, never a failure.
        tally.cells["full"][budget].add(wanted, whole, whole_tokens, whole_ms, False)


def result_json(tally: Tally) -> dict[str, Any]:
    return {
        "systems": {s: {str(b): tally.cells[s][b].summary() for b in BUDGETS} for s in SYSTEMS},
        "end_state": {
            s: {
                str(b): round(100 * tally.end_found[s][b] / tally.end_values, 1) if tally.end_values else None
                for b in BUDGETS
            }
            for s in SYSTEMS
        },
    }


def score_end_state(tally: Tally, system: str, budget: int, values: Sequence[str], context: str) -> None:
    tally.end_found[system][budget] += found(values, context)


# ---------------------------------------------------------------------------------------------------
# Runner (IO)


@dataclass
class TimedRetriever:
    """The benchmark's read side's retriever, timed from outside the product: the retrieval's share of an
    assembly (``spent_ms`` since the last reset)."""

    inner: Retriever
    spent_ms: float = 0.0

    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        start = time.perf_counter()
        try:
            return await self.inner.retrieve(query)
        finally:
            self.spent_ms += (time.perf_counter() - start) * 1000

    async def keyword_ids(self, query: RetrievalQuery, limit: int) -> list[str]:
        start = time.perf_counter()
        try:
            return await self.inner.keyword_ids(query, limit)
        finally:
            self.spent_ms += (time.perf_counter() - start) * 1000


@dataclass
class InProcess:
    """A read side of the benchmark's own over the embedded ACM's stores and owners, called in this process."""

    reads: ContextReader
    retriever: TimedRetriever
    client_id: str


@dataclass(frozen=True)
class Options:
    data: Path
    json_out: Path | None
    plot_out: Path | None
    limit: int | None
    embedder: str
    data_dir: Path | None
    misses_out: Path | None = None


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "traces",
        help="tool-call argument recall of the session context on agent trajectories: ACM vs truncation vs full",
        description="Tool-call argument recall of the session context on agent trajectories: ACM vs truncation vs the "
        "full history. Runs its own embedded ACM.",
    )
    p.add_argument("--data", type=Path, required=True, help="a JSON list of OpenAI-format trajectories (`traj`)")
    p.add_argument("--json", dest="json_out", type=Path, help="write the results here")
    p.add_argument("--plot", dest="plot_out", type=Path, help="bar chart (default: <json name>.png beside --json)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N trajectories")
    p.add_argument("--embedder", help="embedder of ACM (default: embedded ACM's)")
    p.add_argument("--data-dir", type=Path, help="embedded ACM's data (default: a fresh temporary folder)")
    p.add_argument(
        "--misses", dest="misses_out", type=Path, help="JSON lines: each acm miss, where its value was, the context"
    )
    p.set_defaults(run=run)


async def run(args: argparse.Namespace) -> None:
    from acm_cli.embedded import EmbeddedSettings

    if not args.data.is_file():
        raise SystemExit(f"no such file: {args.data}")
    plot_out = args.plot_out or (args.json_out.with_suffix(".png") if args.json_out else None)
    await run_benchmark(
        Options(
            data=args.data,
            json_out=args.json_out,
            plot_out=plot_out,
            limit=args.limit,
            embedder=args.embedder or str(EmbeddedSettings.model_fields["embedder"].default),
            data_dir=args.data_dir,
            misses_out=args.misses_out,
        )
    )


async def run_benchmark(options: Options) -> dict[str, Any]:
    import tempfile

    from rich.console import Console

    console = Console(soft_wrap=True)  # progress lines stay whole in logs and pipes
    trajectories = load_trajectories(options.data, options.limit)
    started_at = datetime.now(UTC)
    t0 = time.perf_counter()
    all_steps = [s for t in trajectories for s in steps(t)]
    console.print(
        f"[bold]traces[/bold] {options.data.name}: {len(trajectories)} trajectories, "
        f"{sum(len(t.messages) for t in trajectories)} messages (system left out), {len(all_steps)} tool-call "
        f"steps, {sum(len(s.values) for s in all_steps)} values to recall; budgets {list(BUDGETS)} {ENCODING}"
    )
    if options.data_dir is None:
        with tempfile.TemporaryDirectory(prefix="acm-bench-traces-") as tmp:
            tally = await _run_all(trajectories, options, Path(tmp), console, t0)
    else:
        tally = await _run_all(trajectories, options, options.data_dir, console, t0)
    result = result_json(tally)
    result |= {
        "errors": tally.errors,
        "run": {
            "data": options.data.name,
            "trajectories": len(trajectories),
            "messages": tally.messages,
            "skipped_empty_messages": sum(t.skipped_empty for t in trajectories),
            "tool_call_steps": len(all_steps),
            "fetches_per_budget": tally.cells["acm"][BUDGETS[0]].fetches,
            "end_state_values": tally.end_values,
            "budgets": list(BUDGETS),
            "encoding": ENCODING,
            "embedder": options.embedder,
            "fetch_query": "",
            "error_count": tally.error_count,
            "notices": tally.notices,
            "ingest_job_p50_ms": round(percentile(tally.job_ms, 50), 1) if tally.job_ms else None,
            "started_at": started_at.isoformat(timespec="seconds"),
            "duration_s": round(time.perf_counter() - t0, 1),
        },
    }
    print_table(console, result)
    if options.misses_out is not None:
        options.misses_out.parent.mkdir(parents=True, exist_ok=True)
        options.misses_out.write_text("".join(json.dumps(row) + "\n" for row in tally.misses))
        console.print(f"wrote {len(tally.misses)} misses to {options.misses_out}")
    for path in filter(None, (options.json_out, options.plot_out)):
        path.parent.mkdir(parents=True, exist_ok=True)
        if path == options.json_out:
            path.write_text(json.dumps(result, indent=2) + "\n")
        elif not write_plot(result, path):
            console.print("[yellow]matplotlib is not installed: no plot[/yellow]")
            continue
        console.print(f"wrote {path}")
    return result


async def _run_all(
    trajectories: Sequence[Trajectory], options: Options, data_dir: Path, console: Console, t0: float
) -> Tally:
    from acm.client import AcmClient
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

    tally = Tally()
    count = Counter()
    settings = EmbeddedSettings(data_dir=data_dir, listen_addr="127.0.0.1:0", embedder=options.embedder)
    async with EmbeddedAcm(settings) as acm, AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=120) as client:
        local = in_process(acm)
        for n, traj in enumerate(trajectories, start=1):
            await _replay(traj, client, acm, count, tally, local)
            acm_cell = tally.cells["acm"]
            console.print(
                f"trajectory {n}/{len(trajectories)}: {len(traj.messages)} messages; arg recall so far "
                + ", ".join(f"{b}: acm {acm_cell[b].summary()['arg_recall_pct']}" for b in BUDGETS)
                + f" / truncation {tally.cells['truncation'][BUDGETS[0]].summary()['arg_recall_pct']} @{BUDGETS[0]}; "
                f"failures {sum(c.failures for c in acm_cell.values())} [{time.perf_counter() - t0:.0f} s]"
            )
    return tally


def in_process(acm: EmbeddedAcm) -> InProcess:
    """The read side as the embedded gateway builds it (acm_gateway.app.build_servicer), around a timed retriever."""
    from acm.adapters.tokenizer import TiktokenCounter
    from acm.owners import Owners
    from acm.read.reader import read_side
    from acm.read.session import LoadSession
    from acm_cli.embedded import DEV_CLIENT
    from acm_gateway.settings import GatewaySettings

    owners = Owners.in_process(acm.stores["gateway"].api_keys, acm.stores["architect"].schemas)
    turns = int(GatewaySettings.model_fields["max_session_turns"].default)
    load = LoadSession(acm.memories, acm.compactor, owners.schemas, turns)
    retriever = TimedRetriever(acm.retriever)
    return InProcess(read_side(retriever, acm.cache, TiktokenCounter(), load), retriever, DEV_CLIENT)


async def _assemble(local: InProcess, traj: Trajectory, budget: int) -> tuple[str, float, float, float]:
    """The session context from the in-process read side: (context, ms of the call, ms of its retrieval, ms of
    this thread's CPU during the call: the loop's other tasks count too while it awaits, few after _settle)."""
    from acm.domain.retrieved import RetrievalQuery
    from acm.domain.scope import Scope

    scope = Scope(local.client_id, CUSTOMER, f"user-{traj.index}", AGENT, f"session-{traj.index}")
    local.retriever.spent_ms = 0.0
    start, cpu = time.perf_counter(), time.thread_time()
    try:
        context = (await local.reads.fetch(RetrievalQuery(scope, "", budget, ENCODING))).context
    except Exception as exc:  # what the gRPC Fetch then reports as a failure; here a mismatch at most
        context = f"{type(exc).__name__}: {exc}"
    wall_ms, cpu_ms = (time.perf_counter() - start) * 1000, (time.thread_time() - cpu) * 1000
    return context, wall_ms, local.retriever.spent_ms, cpu_ms


def _scope(traj: Trajectory) -> Any:
    from acm.v1 import common_pb2

    return common_pb2.Scope(
        customer_id=CUSTOMER, user_id=f"user-{traj.index}", agent_id=AGENT, session_id=f"session-{traj.index}"
    )


async def ingest_message(client: AcmClient, scope: Any, message: Message, turn_id: str, at: datetime) -> str:
    """One message through gRPC Ingest; the job id. AcmClient.ingest takes no tool name, so the request is
    built here (same RPC, same credentials) with the tool message's name."""
    from acm.convert import ROLE_TO_PB, ts
    from acm.domain.models import Role
    from acm.v1 import common_pb2, gateway_pb2

    turn = common_pb2.Turn(
        turn_id=turn_id, role=ROLE_TO_PB[Role(message.role)], content=message.text, tool_name=message.tool_name
    )
    turn.occurred_at.CopyFrom(ts(at))
    response = await client._stub.Ingest(
        gateway_pb2.IngestRequest(scope=scope, turn=turn), metadata=client._metadata, timeout=client._timeout_s
    )
    return str(response.job_id)


async def _settle(client: AcmClient, scope: Any, pending: list[str], acm: EmbeddedAcm, tally: Tally) -> None:
    """Every ingested message's job DONE, then every consumer caught up, before the next Fetch."""
    from acm.v1 import gateway_pb2
    from acm_benchmarks.locomo import wait_until_indexed

    for job_id in pending:
        job = await client.wait_job(scope, job_id, timeout_s=300)
        if job.status != gateway_pb2.JOB_STATUS_DONE:
            tally.error(f"ingest job {job_id} ended {job.status}: {job.error}")
        else:
            tally.job_ms.append((job.updated_at.ToDatetime() - job.created_at.ToDatetime()).total_seconds() * 1000)
    pending.clear()
    await wait_until_indexed(acm)


async def _fetch(client: AcmClient, scope: Any, budget: int, tally: Tally) -> tuple[str, float, str]:
    """The session context at `budget` with an empty query: (context, client-side ms, error or "")."""
    import grpc

    start = time.perf_counter()
    try:
        response = await client.fetch(scope, "", budget, ENCODING)
    except grpc.aio.AioRpcError as exc:
        return "", (time.perf_counter() - start) * 1000, f"{exc.code().name}: {exc.details()}"
    ms = (time.perf_counter() - start) * 1000
    tally.notices += bool(response.notice)
    return response.context, ms, ""


async def _acm_context(
    client: AcmClient, scope: Any, budget: int, count: Counter, tally: Tally, where: str
) -> tuple[str, int, float, bool]:
    context, ms, error = await _fetch(client, scope, budget, tally)
    tokens = count(context)
    if error:
        tally.error(f"{where} budget {budget}: {error}")
    elif tokens > budget:
        tally.error(f"{where} budget {budget}: context of {tokens} tokens")
    return context, tokens, ms, bool(error) or tokens > budget


async def _replay(
    traj: Trajectory, client: AcmClient, acm: EmbeddedAcm, count: Counter, tally: Tally, local: InProcess
) -> None:
    scope = _scope(traj)
    sizes = [count(m.render()) + 1 for m in traj.messages]
    by_position = {s.position: s for s in steps(traj)}
    pending: list[str] = []
    for i, message in enumerate(traj.messages):
        step = by_position.get(i)
        if step is not None:
            await _settle(client, scope, pending, acm, tally)
            for budget in BUDGETS:
                cell = tally.cells["acm"][budget]
                assembled, assembly_ms, retrieval_ms, cpu_ms = await _assemble(local, traj, budget)
                context, tokens, ms, failed = await _acm_context(
                    client, scope, budget, count, tally, f"trajectory {traj.index} message {i}"
                )
                cell.add(step.values, context, tokens, ms, failed)
                cell.assembly_ms.append(assembly_ms)
                cell.retrieval_ms.append(retrieval_ms)
                cell.assembly_cpu_ms.append(cpu_ms)
                cell.mismatches += assembled != context
                tally.misses += miss_rows(traj, step, budget, context)
            baseline_cells(tally, traj.messages[:i], sizes[:i], step.values, count)
        turn_id = f"traj-{traj.index}:{i}"
        pending.append(await ingest_message(client, scope, message, turn_id, T0 + timedelta(seconds=i)))
        tally.messages += 1
    await _settle(client, scope, pending, acm, tally)
    values = end_values(traj)
    tally.end_values += len(values)
    whole = full_context(traj.messages)
    for budget in BUDGETS:
        context, _tokens, _ms, failed = await _acm_context(
            client, scope, budget, count, tally, f"trajectory {traj.index} end"
        )
        tally.cells["acm"][budget].failures += failed  # the end-state Fetch must fit its budget too
        score_end_state(tally, "acm", budget, values, context)
        score_end_state(tally, "truncation", budget, values, truncation_context(traj.messages, sizes, budget))
        score_end_state(tally, "full", budget, values, whole)


# ---------------------------------------------------------------------------------------------------
# Report


def print_table(console: Console, result: Mapping[str, Any]) -> None:
    from rich.table import Table

    def cell(value: object) -> str:
        return "-" if value is None else str(value)

    table = Table(title=f"tool-call argument recall, session context ({ENCODING})")
    columns = ("system", "budget", "arg recall %", "end state %", "steps", "values", "mean tok", "max tok")
    for column in (*columns, "failures", "p50 ms", "p95 ms"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for name in SYSTEMS:
        for budget in BUDGETS:
            row = result["systems"][name][str(budget)]
            table.add_row(
                name,
                str(budget),
                cell(row["arg_recall_pct"]),
                cell(result["end_state"][name][str(budget)]),
                *(cell(row[k]) for k in ("steps", "values", "mean_context_tokens", "max_context_tokens")),
                *(cell(row[k]) for k in ("failures", "p50_ms", "p95_ms")),
            )
    console.width = max(console.width, 120)  # a pipe's 80 columns would cut the cells
    console.print(table)
    for budget in BUDGETS:
        row = result["systems"]["acm"][str(budget)]
        if "assembly_p95_ms" in row:
            console.print(
                f"acm @{budget}: context assembly in process p50 {row['assembly_p50_ms']} / p95 "
                f"{row['assembly_p95_ms']} ms (retrieval p95 {row['retrieval_p95_ms']}, planning p95 "
                f"{row['planning_p95_ms']}); {row['assembly_mismatches']} contexts differ from the gRPC Fetch's"
            )
    run_info = result["run"]
    console.print(
        f"{run_info['trajectories']} trajectories, {run_info['messages']} messages ingested, "
        f"{run_info['tool_call_steps']} tool-call steps; end state over {run_info['end_state_values']} values; "
        f"{run_info['error_count']} errors; {run_info['notices']} Fetches with a notice; "
        f"duration {run_info['duration_s']} s"
    )
    for error in result["errors"][:3]:
        console.print(f"  error: {error}")


def write_plot(result: Mapping[str, Any], path: Path) -> bool:
    """Grouped bars of arg recall per budget, one bar per system (end state as hatched bars beside)."""
    plt = pyplot()
    if plt is None:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / len(SYSTEMS)
    for ax, key, title in (
        (axes[0], "systems", "tool-call argument recall (%)"),
        (axes[1], "end_state", "end state: gold action values (%)"),
    ):
        for s, name in enumerate(SYSTEMS):
            if key == "systems":
                values = [result[key][name][str(b)]["arg_recall_pct"] or 0.0 for b in BUDGETS]
            else:
                values = [result[key][name][str(b)] or 0.0 for b in BUDGETS]
            xs = [i + (s - (len(SYSTEMS) - 1) / 2) * width for i in range(len(BUDGETS))]
            bars = ax.bar(xs, values, width, label=name)
            ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=2)
        ax.set_xticks(range(len(BUDGETS)), [f"{b:,} tokens" for b in BUDGETS])
        ax.set_ylim(0, 120)  # room above the bars for the legend
        ax.set_title(title, fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(loc="upper left", ncol=len(SYSTEMS), fontsize=8)
    run_info = result["run"]
    fig.suptitle(
        f"{run_info['data']}: {run_info['trajectories']} trajectories, {run_info['tool_call_steps']} tool-call steps "
        f"(full = every earlier message, no budget)",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
