"""`acm bench fetch-load`: Fetch alone under N concurrent clients against an embedded `acm serve` (issue 20, item 3).

    acm bench fetch-load [--clients 1,4,8,16,32] [--duration 20] [--data locomo.json] [--baseline SRC]
        [--server-env ACM_X=Y ...] --json results/fetch-load.json

`acm bench fleet` mixes Fetch with ingest (its agents publish a turn after each Fetch), so its Fetch latency is
the event loop's contention with the in-process ingest pipeline. This one measures the read path alone, as
the issue's target states it (embedded Fetch p99 with 16 concurrent clients, 0 errors; RESOURCE_EXHAUSTED,
with p99 bounded, beyond capacity):

1. `acm serve` starts on a fresh data folder (a process of its own: the load generator's CPU is not the
   server's) and is seeded with LoCoMo conversations (``--data``; else seeded template dialogue), one user
   and session each, through the gateway's Ingest; the run waits until every turn is retrievable and the
   bus has no backlog, so no ingest work overlaps the measurement.
2. For each client count N, N gRPC clients (a channel each) loop Fetch back to back (``--think`` seconds
   between a client's Fetches; 0 by default, the harshest closed loop) for ``--warmup`` + ``--duration``
   seconds; only Fetches started after the warm-up count. Client i reads conversation i mod their number,
   in its session, asking that conversation's LoCoMo questions in a seeded order of its own (templates:
   its lines), so few queries repeat within a level.
3. Per level: Fetch p50/p95/p99/max of the served Fetches, Fetches/s, errors by gRPC code (RESOURCE_EXHAUSTED
   counted apart, with its own p99: a refusal should be quick), and the server's CPU seconds per Fetch.

``--baseline SRC`` starts a second `acm serve` from another source tree (a `git worktree` of an older commit:
its ``libs`` and ``services`` go first on PYTHONPATH), seeded the same way; each level then runs on the
baseline and on this tree back to back, so a before/after pair shares the machine's load of that moment.
The JSON holds each server's levels and the pairs' p99 ratios; the plot draws latency by client count.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acm_benchmarks.fleet_stats import pcts
from acm_benchmarks.fleet_turns import template_dialogue
from acm_benchmarks.plotting import pyplot, save_result

if TYPE_CHECKING:
    from rich.console import Console

    from acm.client import AcmClient
    from acm_benchmarks.fleet_stack import Stack

CUSTOMER = "fetchload"
AGENT_ID = "fetchload-agent"
DEFAULT_CLIENTS = (1, 4, 8, 16, 32)
DEFAULT_BUDGET = 1000
RPC_TIMEOUT_S = 30.0
SEED_IN_FLIGHT = 4  # Ingest calls in flight per conversation while seeding (its turns stay in order by time)
SETTLE_TIMEOUT_S = 600.0
TEMPLATE_TURNS = 300  # turns per conversation without --data
TARGET = {"clients": 16, "p99_ms": 100.0, "errors": 0}


@dataclass(frozen=True)
class Conversation:
    """What a client reads: one user's session, its turns (seeded into ACM) and the questions asked of it."""

    name: str
    turns: tuple[tuple[str, str, datetime], ...]  # (speaker, text, occurred_at)
    questions: tuple[str, ...]


@dataclass(frozen=True)
class Options:
    clients: tuple[int, ...]
    duration_s: float
    warmup_s: float
    think_s: float
    data: Path | None
    conversations: int
    turns: int  # at most this many turns per conversation (0: all)
    budget: int
    seed: int
    server_env: dict[str, str]
    baseline: Path | None
    json_out: Path | None
    plot_out: Path | None


@dataclass
class Level:
    """What one client count observed (milliseconds; refusals timed apart from served Fetches)."""

    clients: int
    served_ms: list[float] = field(default_factory=list)
    refused_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    server_cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    seconds: float = 0.0
    loadavg: float = 0.0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "fetch-load",
        help="Fetch latency under 1..N concurrent clients on an embedded acm serve (issue 20 item 3)",
        description=(__doc__ or "").split("\n\n")[0],
    )
    p.add_argument("--clients", default=",".join(map(str, DEFAULT_CLIENTS)), help="client counts (1,4,8,16,32)")
    p.add_argument("--duration", type=float, default=20.0, help="measured seconds per client count (20)")
    p.add_argument("--warmup", type=float, default=3.0, help="unmeasured seconds before each (3)")
    p.add_argument("--think", type=float, default=0.0, help="seconds a client waits between its Fetches, staggered (0)")
    p.add_argument("--data", type=Path, help="LoCoMo JSON: its conversations and questions (default: templates)")
    p.add_argument("--conversations", type=int, default=3, help="conversations seeded (3)")
    p.add_argument("--turns", type=int, default=0, help="at most this many turns per conversation (0: all)")
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help=f"Fetch budget in tokens ({DEFAULT_BUDGET})")
    p.add_argument("--seed", type=int, default=20, help="seed of the query order and templates (20)")
    p.add_argument(
        "--server-env", action="append", default=[], metavar="NAME=VALUE", help="a setting for the server(s)"
    )
    p.add_argument("--baseline", type=Path, help="source tree of a baseline server, run beside this one")
    p.add_argument("--json", dest="json_out", type=Path, help="write the result here")
    p.add_argument("--plot", dest="plot_out", type=Path, help="plot (default: the --json path with .png)")
    p.set_defaults(run=run)


def parse_clients(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise SystemExit(f"--clients: comma-separated integers (got {text!r})") from None
    if not counts or min(counts) < 1:
        raise SystemExit("--clients: at least one count, each at least 1")
    return counts


def parse_env(pairs: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SystemExit(f"--server-env: NAME=VALUE (got {pair!r})")
        out[name] = value
    return out


async def run(args: argparse.Namespace) -> None:
    if args.duration <= 0 or args.warmup < 0 or args.think < 0 or args.conversations < 1 or args.turns < 0:
        raise SystemExit("--duration must be positive; --warmup, --think, --turns not negative; --conversations >= 1")
    if args.data is not None and not args.data.is_file():
        raise SystemExit(f"no such file: {args.data}")
    if args.baseline is not None and not (args.baseline / "libs" / "acm").is_dir():
        raise SystemExit(f"--baseline: {args.baseline} is not a source tree (no libs/acm)")
    plot_out = args.plot_out or (args.json_out.with_suffix(".png") if args.json_out else None)
    # The options taken as given (option field → argument name); the rest are parsed above or here.
    same = {"duration_s": "duration", "warmup_s": "warmup", "think_s": "think"}
    same |= {name: name for name in ("data", "conversations", "turns", "budget", "seed", "baseline", "json_out")}
    given = {field_name: getattr(args, arg) for field_name, arg in same.items()}
    options = Options(
        clients=parse_clients(args.clients), server_env=parse_env(args.server_env), plot_out=plot_out, **given
    )
    await run_benchmark(options)


# ---------------------------------------------------------------------------------------------------
# Data (pure)


def conversations(options: Options) -> list[Conversation]:
    """The seeded conversations: LoCoMo's (its questions asked), else template dialogue asking its own lines."""
    if options.data is not None:
        from acm_benchmarks.locomo import load_conversations

        convs = load_conversations(options.data, limit=options.conversations)
        return [
            Conversation(
                c.sample_id,
                tuple((t.speaker, t.content, t.occurred_at) for t in c.turns)[: options.turns or None],
                tuple(q.text for q in c.questions),
            )
            for c in convs
        ]
    start = datetime(2024, 1, 1, tzinfo=UTC)
    out = []
    for j in range(options.conversations):
        lines = template_dialogue(options.turns or TEMPLATE_TURNS, options.seed * 100 + j)
        turns = tuple((s, text, start + timedelta(minutes=10 * i)) for i, (s, text) in enumerate(lines))
        out.append(Conversation(f"templates-{j}", turns, tuple(dict.fromkeys(text for _, text in lines))))
    return out


def client_queries(convs: Sequence[Conversation], client: int, seed: int) -> list[str]:
    """Client ``client``'s questions, of conversation ``client`` mod their number, in a seeded order of its own."""
    questions = list(convs[client % len(convs)].questions)
    random.Random(f"fetch-load:{seed}:{client}").shuffle(questions)
    return questions


def summarise_level(level: Level) -> dict[str, Any]:
    served = len(level.served_ms)
    refused = level.errors.get("RESOURCE_EXHAUSTED", 0)
    return {
        "clients": level.clients,
        "fetches": served,
        "fetches_per_s": round(served / level.seconds, 1) if level.seconds else None,
        "fetch_ms": {**pcts(level.served_ms), "max": round(max(level.served_ms), 1) if served else None},
        "errors": sum(level.errors.values()) - refused,
        "resource_exhausted": refused,
        "refused_ms": pcts(level.refused_ms),
        "error_codes": dict(level.errors),
        "server_cpu_ms_per_fetch": round(1000 * level.server_cpu_s / served, 2) if served else None,
        "server_cpu_cores": round(level.server_cpu_s / level.seconds, 2) if level.seconds else None,
        "client_cpu_cores": round(level.client_cpu_s / level.seconds, 2) if level.seconds else None,
        "loadavg_1m": round(level.loadavg, 2),
    }


def target_check(levels: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The issue's target at its client count: p99 within bound and no errors (refusals included)."""
    at = [lv for lv in levels if lv["clients"] == TARGET["clients"]]
    if not at:
        return None
    lv = at[0]
    p99 = lv["fetch_ms"]["p99"]
    errors = lv["errors"] + lv["resource_exhausted"]
    return {
        **TARGET,
        "measured_p99_ms": p99,
        "measured_errors": errors,
        "met": p99 is not None and p99 <= TARGET["p99_ms"] and errors == 0,
    }


def ratios(after: Sequence[Mapping[str, Any]], before: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per client count run on both: this tree's p50/p99 and Fetches/s over the baseline's."""

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 2) if a is not None and b else None

    by_clients = {lv["clients"]: lv for lv in before}
    return [
        {
            "clients": a["clients"],
            "p50": ratio(a["fetch_ms"]["p50"], by_clients[a["clients"]]["fetch_ms"]["p50"]),
            "p99": ratio(a["fetch_ms"]["p99"], by_clients[a["clients"]]["fetch_ms"]["p99"]),
            "fetches_per_s": ratio(a["fetches_per_s"], by_clients[a["clients"]]["fetches_per_s"]),
        }
        for a in after
        if a["clients"] in by_clients
    ]


# ---------------------------------------------------------------------------------------------------
# Running


def _scope(conv: Conversation) -> Any:
    from acm.v1 import common_pb2

    return common_pb2.Scope(customer_id=CUSTOMER, user_id=f"user-{conv.name}", agent_id=AGENT_ID, session_id=conv.name)


async def _seed(stack: Stack, convs: Sequence[Conversation], console: Console) -> float:
    """Every turn in, retrievable, and no backlog on the bus; returns the seconds it took."""
    from acm.client import AcmClient

    began = time.monotonic()

    async def one(client: AcmClient, conv: Conversation) -> None:
        scope, gate = _scope(conv), asyncio.Semaphore(SEED_IN_FLIGHT)

        async def send(k: int, speaker: str, text: str, at: datetime) -> str:
            async with gate:
                response = await client.ingest(
                    scope, text, occurred_at=at, turn_id=f"{conv.name}-{k}", metadata={"speaker": speaker}
                )
                return str(response.job_id)

        jobs = await asyncio.gather(*(send(k, s, text, at) for k, (s, text, at) in enumerate(conv.turns)))
        for job in jobs:  # DONE means retrievable
            await client.wait_job(scope, job, timeout_s=SETTLE_TIMEOUT_S)

    async with AsyncExitStack() as ctx:
        clients = [
            await ctx.enter_async_context(AcmClient(stack.addr, stack.api_key, timeout_s=RPC_TIMEOUT_S)) for _ in convs
        ]
        await asyncio.gather(*(one(c, conv) for c, conv in zip(clients, convs, strict=True)))
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while any((await stack.lag.lag()).values()):  # prefetch pools and the rest of the pipeline caught up
        if time.monotonic() > deadline:
            raise RuntimeError(f"the bus still has a backlog after {SETTLE_TIMEOUT_S:.0f} s")
        await asyncio.sleep(0.5)
    seconds = time.monotonic() - began
    console.print(f"seeded {sum(len(c.turns) for c in convs)} turns in {seconds:.0f} s")
    return seconds


async def _level(
    stack: Stack,
    clients: Sequence[AcmClient],
    convs: Sequence[Conversation],
    queries: Sequence[Sequence[str]],
    n: int,
    options: Options,
) -> Level:
    import grpc

    from acm_benchmarks.fleet_stack import proc_sample

    level = Level(n)
    began = time.monotonic()
    measured_from = began + options.warmup_s
    stop_at = measured_from + options.duration_s
    server_pid = next(iter(stack.pids.values()))
    cpu: dict[str, float] = {}

    async def mark_start() -> None:
        await asyncio.sleep(max(0.0, measured_from - time.monotonic()))
        s, me = proc_sample(server_pid, 0.0), proc_sample(os.getpid(), 0.0)
        cpu["server"], cpu["client"] = (s.cpu_s if s else 0.0), (me.cpu_s if me else 0.0)

    async def client(i: int) -> None:
        scope, mine = _scope(convs[i % len(convs)]), queries[i]
        k = i  # clients of one conversation start apart in their (already distinct) orders
        # With think time, the clients' first Fetches are spread over one think period, as independent agents'
        # are, instead of arriving together and every period again.
        await asyncio.sleep(options.think_s * i / n)
        while (start := time.monotonic()) < stop_at:
            query = mine[k % len(mine)]
            k += 1
            code = ""
            t = time.perf_counter()
            try:
                await clients[i].fetch(scope, query, options.budget)
            except grpc.aio.AioRpcError as exc:
                code = exc.code().name
            ms = (time.perf_counter() - t) * 1000
            if start >= measured_from:
                if not code:
                    level.served_ms.append(ms)
                else:
                    level.errors[code] += 1
                    if code == "RESOURCE_EXHAUSTED":
                        level.refused_ms.append(ms)
            if options.think_s:
                await asyncio.sleep(options.think_s)

    await asyncio.gather(mark_start(), *(client(i) for i in range(n)))
    s, me = proc_sample(server_pid, 0.0), proc_sample(os.getpid(), 0.0)
    level.server_cpu_s = (s.cpu_s if s else 0.0) - cpu.get("server", 0.0)
    level.client_cpu_s = (me.cpu_s if me else 0.0) - cpu.get("client", 0.0)
    # The measured window ends when the last Fetch started in it returns.
    level.seconds = max(time.monotonic(), stop_at) - measured_from
    level.loadavg = os.getloadavg()[0]
    return level


def _source_tree(env: Mapping[str, str]) -> dict[str, str]:
    """The tree a server runs (its PYTHONPATH's, else this one) and its commit, "+dirty" with changes to
    tracked files, so a result names the code it measured."""
    import subprocess

    path = env.get("PYTHONPATH", "").split(os.pathsep)[0]
    tree = Path(path).parent if path else Path(__file__).resolve().parents[2]

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, timeout=30)
        return done.stdout.strip() if done.returncode == 0 else ""

    dirty = "+dirty" if git("status", "--porcelain", "--untracked-files=no") else ""
    return {"tree": str(tree), "commit": (git("rev-parse", "--short", "HEAD") or "unknown") + dirty}


def _print_logs(console: Console, work: Path) -> None:
    for log in sorted(work.glob("*/*.log")):
        console.print(f"--- {log} ---\n{log.read_text(errors='replace')[-2000:]}")


def _print_level(console: Console, label: str, s: Mapping[str, Any]) -> None:
    f = s["fetch_ms"]
    console.print(
        f"  {label:>8} {s['clients']:>3} clients: {s['fetches']:>5} Fetches, {s['fetches_per_s']} /s, "
        f"p50 {f['p50']} p95 {f['p95']} p99 {f['p99']} max {f['max']} ms; errors {s['errors']}, "
        f"RESOURCE_EXHAUSTED {s['resource_exhausted']}; server {s['server_cpu_ms_per_fetch']} ms CPU a Fetch, "
        f"load {s['loadavg_1m']}"
    )


async def run_benchmark(options: Options) -> dict[str, Any]:
    import tempfile

    from rich.console import Console

    from acm.client import AcmClient
    from acm_benchmarks.fleet_stack import start_embedded, stop

    console = Console(soft_wrap=True)
    convs = conversations(options)
    queries = [client_queries(convs, i, options.seed) for i in range(max(options.clients))]
    servers: dict[str, dict[str, str]] = {"after": dict(options.server_env)}
    if options.baseline is not None:
        src = options.baseline.resolve()
        servers = {
            "before": {**options.server_env, "PYTHONPATH": f"{src / 'libs'}{os.pathsep}{src / 'services'}"},
            **servers,
        }
    console.print(
        f"[bold]fetch-load[/bold]: clients {', '.join(map(str, options.clients))}, {options.warmup_s:g} + "
        f"{options.duration_s:g} s each, think {options.think_s:g} s; {len(convs)} conversations, "
        f"{sum(len(c.turns) for c in convs)} turns ({options.data.name if options.data else 'templates'}); "
        f"servers: {', '.join(servers)}"
    )
    started_at = datetime.now(UTC)
    load_before = os.getloadavg()
    levels: dict[str, list[dict[str, Any]]] = {label: [] for label in servers}
    seeded_s: dict[str, float] = {}
    trees = {label: _source_tree(env) for label, env in servers.items()}
    with tempfile.TemporaryDirectory(prefix="acm-bench-fetchload-") as tmp:
        stacks: dict[str, Stack] = {}
        try:
            for label, env in servers.items():
                work = Path(tmp) / label
                work.mkdir()
                stacks[label] = await start_embedded(work, env)
                console.print(f"{label}: acm serve on {stacks[label].addr} (pid {stacks[label].pids['embedded']})")
                seeded_s[label] = await _seed(stacks[label], convs, console)
            async with AsyncExitStack() as ctx:
                clients = {
                    label: [
                        await ctx.enter_async_context(AcmClient(st.addr, st.api_key, timeout_s=RPC_TIMEOUT_S))
                        for _ in range(max(options.clients))
                    ]
                    for label, st in stacks.items()
                }
                for n in options.clients:
                    for label, st in stacks.items():  # before, then after: a pair shares the moment's load
                        summary = summarise_level(await _level(st, clients[label], convs, queries, n, options))
                        levels[label].append(summary)
                        _print_level(console, label, summary)
        except BaseException:
            _print_logs(console, Path(tmp))
            raise
        finally:
            for st in stacks.values():
                await st.lag.close()
                stop(st.procs)
    result: dict[str, Any] = {
        "benchmark": "fetch-load",
        "mode": "embedded",
        "target": target_check(levels["after"]),
        "levels": levels["after"],
        "code": trees["after"],
    }
    if "before" in levels:
        result["baseline"] = {
            "src": str(options.baseline),
            "code": trees["before"],
            "levels": levels["before"],
            "target": target_check(levels["before"]),
        }
        result["after_over_before"] = ratios(levels["after"], levels["before"])
    result["run"] = {
        "clients": list(options.clients),
        "duration_s": options.duration_s,
        "warmup_s": options.warmup_s,
        "think_s": options.think_s,
        "data": options.data.name if options.data else "templates",
        "conversations": [{"name": c.name, "turns": len(c.turns), "questions": len(c.questions)} for c in convs],
        "budget_tokens": options.budget,
        "seed": options.seed,
        "server_env": options.server_env,
        "seed_seconds": {k: round(v, 1) for k, v in seeded_s.items()},
        "started_at": started_at.isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        },
    }
    for path in save_result(result, options.json_out, options.plot_out, write_plot):
        console.print(f"wrote {path}")
    return result


def write_plot(result: Mapping[str, Any], path: Path) -> bool:
    """Fetch p50/p95/p99 by client count (log scale) for each server, with the target, and Fetches/s."""
    if (plt := pyplot()) is None:
        return False
    series = [("after", result["levels"], "-")]
    if "baseline" in result:
        series.insert(0, ("before", result["baseline"]["levels"], "--"))
    fig, (lat, rate) = plt.subplots(1, 2, figsize=(12, 4.5))
    for label, levels, style in series:
        xs = [lv["clients"] for lv in levels]
        for q, color in (("p50", "tab:blue"), ("p95", "tab:orange"), ("p99", "tab:red")):
            lat.plot(xs, [lv["fetch_ms"][q] for lv in levels], style, marker="o", color=color, label=f"{label} {q}")
        rate.plot(xs, [lv["fetches_per_s"] for lv in levels], style, marker="o", color="tab:green", label=label)
        for lv in levels:
            refused = lv["resource_exhausted"] + lv["errors"]
            if refused:
                rate.annotate(f"{refused} err", (lv["clients"], lv["fetches_per_s"]), fontsize=8)
    lat.axhline(TARGET["p99_ms"], color="grey", linestyle=":", label=f"target p99 ({TARGET['p99_ms']:g} ms at 16)")
    lat.set_xscale("log", base=2)
    lat.set_yscale("log")
    lat.set_xlabel("concurrent clients")
    lat.set_ylabel("Fetch latency, ms")
    lat.legend(fontsize=7)
    rate.set_xscale("log", base=2)
    rate.set_xlabel("concurrent clients")
    rate.set_ylabel("Fetches/s served")
    rate.legend(fontsize=8)
    fig.suptitle(f"acm bench fetch-load (embedded; {result['run']['started_at']})")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
