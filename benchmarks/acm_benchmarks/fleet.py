"""`acm bench fleet`: an agent fleet against one ACM, for a bounded time (issue 20, item 1).

    acm bench fleet --mode embedded|distributed [--agents 16] [--duration 60] [--rate 16] [--via gateway|kafka]
        [--replicas 1] [--data locomo.json] [--tool-share 0.3] --json results/fleet-<mode>.json

N simulated agents run an agent loop each: at their share of the fleet's target rate, Fetch the session's
context (the "model call" needs it), then publish the turn that call produced, through the gateway's gRPC
Ingest or (``--via kafka``, distributed only) straight to Kafka as an envelope signed with the client's key.
Turns are LoCoMo dialogue (``--data``; else template sentences) mixed with tool calls and their JSON
answers (acm_benchmarks.fleet_turns). ACM runs in processes of its own (acm_benchmarks.fleet_stack), so
the load generator's CPU is not the server's.

While it runs, and for up to ``--drain`` seconds after the load stops (so late jobs are still seen done):
- accepted turns (Ingest returned / Kafka acknowledged) and processed ones (GetJob says DONE; a job
  published to Kafka is NOT_FOUND until ingest finishes it);
- consumer lag each second, read from the bus (Kafka's committed offsets of this run's groups, or the
  embedded log's file);
- freshness: every ``--probe-every`` seconds (at most PROBES_IN_FLIGHT at once) a turn carrying a unique token
  goes through the gateway into a probe session, then Fetch asks for the token until the bundle holds it
  (accepted → returned by Fetch); the probes' Fetches are counted apart from the agents';
- the agents' Fetch latency and every error by RPC and gRPC code;
- CPU and RSS of each ACM process (and of the load generator) from /proc.

The JSON starts with the issue's shape (mode … replicas), then the details and a per-second timeline; the
plot (the JSON's path with .png) draws the timeline from the JSON alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acm_benchmarks.fleet_stats import Pacer, Recorder, pcts, planned_turns, summarise
from acm_benchmarks.fleet_turns import FleetTurn, agent_turns, locomo_dialogue
from acm_benchmarks.plotting import pyplot

if TYPE_CHECKING:
    from rich.console import Console

    from acm.client import AcmClient
    from acm_benchmarks.fleet_stack import Stack

MODES = ("embedded", "distributed")
VIAS = ("gateway", "kafka")
CUSTOMER = "fleet"
AGENT_ID = "fleet-agent"
DEFAULT_BUDGET = 1000
RPC_TIMEOUT_S = 30.0
JOB_POLL_S = 0.25
JOBS_CHECKED_PER_ROUND = 8  # per agent: the oldest pending jobs, so one stuck job does not hide the rest
# A probe asks every 10 % of the time it has waited, within these bounds: ±10 % resolution on freshness while
# its own Fetches (at most PROBES_IN_FLIGHT probes at once) stay a small share of the agents' load.
PROBE_POLL_MIN_S = 0.2
PROBE_POLL_MAX_S = 1.0
PROBES_IN_FLIGHT = 2
PROGRESS_EVERY_S = 5.0

# (agent, turn, turn id) → the job id (raises grpc.aio.AioRpcError or BusUnavailable when not accepted).
Publish = Callable[[int, FleetTurn, str], Awaitable[str]]


@dataclass(frozen=True)
class Options:
    mode: str
    agents: int
    duration_s: float
    rate: float
    via: str
    replicas: int
    data: Path | None
    tool_share: float
    budget: int
    probe_every_s: float
    probe_timeout_s: float
    drain_s: float
    seed: int
    json_out: Path | None
    plot_out: Path | None


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "fleet",
        help="an agent fleet against ACM: sustained ingest, lag, freshness, Fetch under concurrency",
        description=(__doc__ or "").split("\n\n")[0],
    )
    p.add_argument("--mode", choices=MODES, default="embedded", help="embedded (one process) or distributed")
    p.add_argument("--agents", type=int, default=16, help="simulated agents, each its own gRPC client (16)")
    p.add_argument("--duration", type=float, default=60.0, help="seconds of load (60); then the drain")
    p.add_argument("--rate", type=float, default=16.0, help="the fleet's target turns/s (16)")
    p.add_argument("--via", choices=VIAS, default="gateway", help="publish turns through the gateway or to Kafka")
    p.add_argument("--replicas", type=int, default=1, help="ingest processes (distributed; 1)")
    p.add_argument("--data", type=Path, help="LoCoMo JSON for the dialogue (default: template sentences)")
    p.add_argument("--tool-share", type=float, default=0.3, help="share of turns that are tool calls/JSON (0.3)")
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help=f"Fetch budget in tokens ({DEFAULT_BUDGET})")
    p.add_argument("--probe-every", type=float, default=2.0, help="seconds between freshness probes (2)")
    p.add_argument("--probe-timeout", type=float, default=60.0, help="a probe not fetched by then times out (60)")
    p.add_argument("--drain", type=float, default=60.0, help="at most this long after the load for jobs to finish")
    p.add_argument("--seed", type=int, default=20, help="seed of the generated turns (20)")
    p.add_argument("--json", dest="json_out", type=Path, help="write the result here")
    p.add_argument("--plot", dest="plot_out", type=Path, help="plot (default: the --json path with .png)")
    p.set_defaults(run=run)


async def run(args: argparse.Namespace) -> None:
    if args.via == "kafka" and args.mode != "distributed":
        raise SystemExit("--via kafka needs --mode distributed (embedded mode has no Kafka)")
    if args.agents < 1 or args.duration <= 0 or args.rate <= 0 or args.replicas < 1:
        raise SystemExit("--agents, --duration, --rate and --replicas must be positive")
    if args.data is not None and not args.data.is_file():
        raise SystemExit(f"no such file: {args.data}")
    plot_out = args.plot_out or (args.json_out.with_suffix(".png") if args.json_out else None)
    await run_benchmark(
        Options(
            mode=args.mode,
            agents=args.agents,
            duration_s=args.duration,
            rate=args.rate,
            via=args.via,
            replicas=args.replicas if args.mode == "distributed" else 1,
            data=args.data,
            tool_share=args.tool_share,
            budget=args.budget,
            probe_every_s=args.probe_every,
            probe_timeout_s=args.probe_timeout,
            drain_s=args.drain,
            seed=args.seed,
            json_out=args.json_out,
            plot_out=plot_out,
        )
    )


async def run_benchmark(options: Options) -> dict[str, Any]:
    import tempfile

    from rich.console import Console

    from acm_benchmarks.fleet_stack import (
        Servers,
        clear_shared,
        create_database,
        drop_database,
        start_distributed,
        start_embedded,
        stop,
    )

    console = Console(soft_wrap=True)
    dialogue = locomo_dialogue(str(options.data)) if options.data else []
    turns = [
        agent_turns(
            i,
            planned_turns(i, options.agents, options.rate, options.duration_s),
            options.seed,
            dialogue=dialogue,
            tool_share=options.tool_share,
        )
        for i in range(options.agents)
    ]
    console.print(
        f"[bold]fleet[/bold] {options.mode}: {options.agents} agents, {options.rate:g} turns/s for "
        f"{options.duration_s:g} s via {options.via} ({sum(map(len, turns))} turns planned; dialogue from "
        f"{options.data.name if options.data else 'templates'}, {options.tool_share:.0%} tool turns); "
        f"replicas {options.replicas}"
    )
    started_at = datetime.now(UTC)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="acm-bench-fleet-") as tmp:
        work = Path(tmp)
        servers = Servers.from_env() if options.mode == "distributed" else None
        console.print("starting ACM …")
        try:
            if servers is None:
                stack = await start_embedded(work)
            else:
                database = create_database(servers.postgres)
                try:
                    stack = await start_distributed(work, servers, options.replicas, database)
                except BaseException:
                    drop_database(database)
                    raise
        except BaseException:
            _print_logs(console, work)  # the folder goes with the exception
            raise
        try:
            console.print(f"ACM on {stack.addr} ({', '.join(f'{n} pid {p}' for n, p in stack.pids.items())})")
            rec = await _load(stack, turns, options, console)
        except BaseException:
            _print_logs(console, work)
            raise
        finally:
            await stack.lag.close()
            stop(stack.procs)
            if servers is not None:
                drop_database(database)
                for problem in await clear_shared(servers, stack):
                    console.print(f"[yellow]cleanup: {problem}[/yellow]")
    result = summarise(
        rec,
        mode=options.mode,
        agents=options.agents,
        duration_s=options.duration_s,
        replicas=options.replicas,
        extra={
            "target_turns_per_s": options.rate,
            "via": options.via,
            "run": {
                "data": options.data.name if options.data else "templates",
                "tool_share": options.tool_share,
                "budget_tokens": options.budget,
                "probe_every_s": options.probe_every_s,
                "seed": options.seed,
                "started_at": started_at.isoformat(timespec="seconds"),
                "machine": {
                    "cpus": os.cpu_count(),
                    "loadavg_before": [round(x, 2) for x in load_before],
                    "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                },
            },
        },
    )
    print_table(console, result)
    if options.json_out:
        options.json_out.parent.mkdir(parents=True, exist_ok=True)
        options.json_out.write_text(json.dumps(result, indent=2) + "\n")
        console.print(f"wrote {options.json_out}")
    if options.plot_out and write_plot(result, options.plot_out):
        console.print(f"wrote {options.plot_out}")
    return result


def _print_logs(console: Console, work: Path) -> None:
    for log in sorted(work.glob("*.log")):
        console.print(f"--- {log.name} ---\n{log.read_text(errors='replace')[-2000:]}")


def _scope(i: int) -> Any:
    from acm.v1 import common_pb2

    return common_pb2.Scope(customer_id=CUSTOMER, user_id=f"user-{i}", agent_id=AGENT_ID, session_id=f"session-{i}")


def _code(exc: BaseException) -> str:
    import grpc

    if isinstance(exc, grpc.aio.AioRpcError):
        return str(exc.code().name)
    return type(exc).__name__


async def _load(stack: Stack, turns: Sequence[Sequence[FleetTurn]], options: Options, console: Console) -> Recorder:
    import grpc

    from acm.client import AcmClient
    from acm.ports.bus import BusUnavailable

    rec = Recorder()
    n = options.agents
    async with AsyncExitStack() as stack_ctx:
        clients = [
            await stack_ctx.enter_async_context(AcmClient(stack.addr, stack.api_key, timeout_s=RPC_TIMEOUT_S))
            for _ in range(n)
        ]
        probe_client = await stack_ctx.enter_async_context(
            AcmClient(stack.addr, stack.api_key, timeout_s=RPC_TIMEOUT_S)
        )
        publish = await _publisher(stack, options, clients, stack_ctx)
        # A first Fetch each (connections up, models loaded) before the clock starts; not recorded.
        await asyncio.gather(*(c.fetch(_scope(i), "hello", options.budget) for i, c in enumerate(clients)))

        t0 = time.monotonic()

        def now() -> float:
            return time.monotonic() - t0

        pending: list[deque[str]] = [deque() for _ in range(n)]
        pacers = [Pacer(i, n, options.rate, options.duration_s) for i in range(n)]
        load_done = asyncio.Event()
        all_done = asyncio.Event()

        async def agent(i: int) -> None:
            scope, client = _scope(i), clients[i]
            for k, turn in enumerate(turns[i]):
                due = pacers[i].next_due(now())
                if due is None:
                    return
                await asyncio.sleep(max(0.0, due - now()))
                rec.fetch_started()
                began = time.perf_counter()
                ms: float | None = None
                try:
                    await client.fetch(scope, turn.query or turn.content[:300], options.budget)
                    ms = (time.perf_counter() - began) * 1000
                except grpc.aio.AioRpcError as exc:
                    rec.error("Fetch", _code(exc))
                finally:
                    rec.fetch_ended(now(), ms)
                try:
                    pending[i].append(await publish(i, turn, f"fleet-{i}-{k}-{uuid.uuid4().hex[:6]}"))
                    rec.accepted.append(now())
                except (grpc.aio.AioRpcError, BusUnavailable) as exc:
                    rec.error("Ingest", _code(exc))

        async def watch_jobs() -> None:
            watcher = await stack_ctx.enter_async_context(AcmClient(stack.addr, stack.api_key, RPC_TIMEOUT_S))
            while not (load_done.is_set() and not any(pending)):
                await asyncio.gather(*(_check_jobs(watcher, _scope(i), pending[i], rec, now) for i in range(n)))
                await asyncio.sleep(JOB_POLL_S)

        async def probes() -> None:
            in_flight: set[asyncio.Task[None]] = set()
            k = 0
            while not load_done.is_set():
                if len(in_flight) < PROBES_IN_FLIGHT:
                    task = asyncio.create_task(_probe(probe_client, k, rec, now, options))
                    in_flight.add(task)
                    task.add_done_callback(in_flight.discard)
                    k += 1
                with suppress(TimeoutError):
                    await asyncio.wait_for(load_done.wait(), options.probe_every_s)
            if in_flight:
                await asyncio.gather(*in_flight)

        async def sample() -> None:
            from acm_benchmarks.fleet_stack import proc_sample

            pids = {**stack.pids, "load generator": os.getpid()}
            next_print = PROGRESS_EVERY_S
            lag_failed = False
            while not all_done.is_set():
                t = now()
                for name, pid in pids.items():
                    s = proc_sample(pid, t)
                    if s is not None:
                        rec.procs.setdefault(name, []).append(s)
                try:
                    by_group = await stack.lag.lag()
                    rec.lag.append((t, sum(by_group.values()), by_group))
                except Exception as exc:  # lag is observed, not load: say it once and go on
                    if not lag_failed:
                        console.print(f"[yellow]lag not readable: {exc!r}[/yellow]")
                        lag_failed = True
                if t >= next_print:
                    next_print += PROGRESS_EVERY_S
                    _progress(console, rec, t, options)
                if dead := stack.dead():
                    console.print(f"[red]ACM processes exited: {dead}[/red]")
                with suppress(TimeoutError):
                    await asyncio.wait_for(all_done.wait(), max(0.0, 1.0 - (now() - t)))

        sampler = asyncio.create_task(sample())
        watcher = asyncio.create_task(watch_jobs())
        prober = asyncio.create_task(probes())
        try:
            await asyncio.gather(*(agent(i) for i in range(n)))
            load_done.set()
            console.print(f"load over at {now():.0f} s; draining (at most {options.drain_s:g} s) …")
            with suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(watcher), options.drain_s)
            await prober
        finally:
            load_done.set()
            all_done.set()
            for task in (watcher, prober):
                task.cancel()
            await asyncio.gather(sampler, watcher, prober, return_exceptions=True)
        _progress(console, rec, now(), options, "end")
        rec.skipped = sum(p.skipped for p in pacers)
    return rec


async def _publisher(stack: Stack, options: Options, clients: Sequence[AcmClient], ctx: AsyncExitStack) -> Publish:
    """How an agent publishes a turn: gRPC Ingest (its own client), or a signed envelope on Kafka."""
    from acm.domain.models import Role

    if options.via == "gateway":

        async def ingest(agent: int, turn: FleetTurn, turn_id: str) -> str:
            response = await clients[agent].ingest(
                _scope(agent),
                turn.content,
                Role(turn.role),
                turn_id=turn_id,
                metadata={"speaker": turn.speaker} if turn.speaker else None,
                tool_name=turn.tool_name,
            )
            return str(response.job_id)

        return ingest

    from acm import topics
    from acm.adapters.kafka_bus import KafkaBus
    from acm.auth import key_id_of
    from acm.convert import ROLE_TO_PB, scope_from_pb
    from acm.domain.models import new_id
    from acm.envelopes import envelope, key_hash, sign
    from acm.v1 import common_pb2

    bus = KafkaBus(stack.kafka, client_id="acm-bench-fleet", namespace=stack.namespace)
    ctx.push_async_callback(bus.stop)
    key_id, hashed = key_id_of(stack.api_key), key_hash(stack.api_key)

    async def to_kafka(agent: int, turn: FleetTurn, turn_id: str) -> str:
        domain_scope = scope_from_pb(_scope(agent), client_id=stack.client_id)
        env = envelope(domain_scope)
        job_id = new_id()
        env.turn_received.job_id = job_id
        env.turn_received.turn.CopyFrom(
            common_pb2.Turn(
                turn_id=turn_id,
                role=ROLE_TO_PB[Role(turn.role)],
                content=turn.content,
                metadata={"speaker": turn.speaker} if turn.speaker else {},
                tool_name=turn.tool_name,
            )
        )
        sign(env, key_id, hashed)
        await bus.publish(topics.TURNS, domain_scope.session_key, env.SerializeToString())
        return job_id

    return to_kafka


async def _check_jobs(
    client: AcmClient, scope: Any, pending: deque[str], rec: Recorder, now: Callable[[], float]
) -> None:
    """GetJob on the agent's oldest pending jobs: DONE ones are processed, FAILED ones counted; a job
    published to Kafka is NOT_FOUND until ingest finishes it, so that is still pending."""
    import grpc

    from acm.v1 import gateway_pb2

    for job_id in list(pending)[:JOBS_CHECKED_PER_ROUND]:
        try:
            job = await client.get_job(scope, job_id)
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.NOT_FOUND:
                rec.error("GetJob", _code(exc))
            continue
        if job.status == gateway_pb2.JOB_STATUS_DONE:
            rec.processed.append(now())
            pending.remove(job_id)
        elif job.status == gateway_pb2.JOB_STATUS_FAILED:
            rec.failed += 1
            pending.remove(job_id)


async def _probe(client: AcmClient, k: int, rec: Recorder, now: Callable[[], float], options: Options) -> None:
    """One freshness probe: a turn with a token no other turn has, then Fetch (the token as the query) until a
    returned memory holds it; the time from accepted to that answer."""
    import grpc

    from acm.v1 import common_pb2

    token = f"zq{uuid.uuid4().hex[:10]}"
    scope = common_pb2.Scope(customer_id=CUSTOMER, user_id="probe", agent_id=AGENT_ID, session_id=f"probe-{k}")
    try:
        # Not a secret's wording ("locker code ..."): the redactor would rightly remove the token before storage.
        await client.ingest(scope, f"Remember that ticket {token} was reassigned to the night shift.")
    except grpc.aio.AioRpcError as exc:
        rec.error("ProbeIngest", _code(exc))
        return
    accepted = now()
    rec.probes_sent += 1
    while (waited := now() - accepted) < options.probe_timeout_s:
        rec.probe_fetches += 1
        try:
            bundle = await client.fetch(scope, token, options.budget)
        except grpc.aio.AioRpcError as exc:
            rec.error("ProbeFetch", _code(exc))
        else:
            if any(token in m.text for m in bundle.memories):
                rec.freshness.append((accepted, (now() - accepted) * 1000))
                return
        await asyncio.sleep(min(PROBE_POLL_MAX_S, max(PROBE_POLL_MIN_S, waited / 10)))
    rec.probes_timed_out += 1


def _progress(console: Console, rec: Recorder, t: float, options: Options, label: str = "") -> None:
    recent = [ms for at, ms in rec.fetches if at >= t - PROGRESS_EVERY_S]
    per_s = len(rec.accepted) / max(min(t, options.duration_s), 1e-9)
    lag = rec.lag[-1][1] if rec.lag else "-"
    fresh = pcts([ms for _, ms in rec.freshness])["p95"]
    console.print(
        f"  [{t:5.0f} s{' ' + label if label else ''}] accepted {len(rec.accepted)} ({per_s:.1f}/s"
        f" of {options.rate:g}), processed {len(rec.processed)}, lag {lag}, Fetch p95 "
        f"{pcts(recent)['p95']} ms (last {PROGRESS_EVERY_S:g} s), freshness p95 {fresh} ms, errors "
        f"{sum(rec.errors.values())}"
    )


def print_table(console: Console, result: Mapping[str, Any]) -> None:
    from rich.table import Table

    table = Table(
        title=f"acm bench fleet: {result['mode']}, {result['agents']} agents, {result['duration_s']} s, "
        f"target {result['target_turns_per_s']} turns/s via {result['via']}, {result['replicas']} ingest replica(s)",
        caption=f"machine: {result['run']['machine']['cpus']} cores, load average before "
        f"{result['run']['machine']['loadavg_before'][0]} (shared with other work)",
    )
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("issue 20 target")
    f, fe = result["freshness_ms"], result["fetch_ms"]
    rows = (
        ("accepted turns/s", result["accepted_turns_per_s"], ""),
        ("processed turns/s (sustained)", result["ingest_turns_per_s"], "≥ 100 (distributed)"),
        ("accepted / processed (total)", f"{result['accepted']} / {result['processed']}", ""),
        ("max consumer lag", result["max_lag"], ""),
        ("freshness p50 / p95 / p99 ms", f"{f['p50']} / {f['p95']} / {f['p99']}", "p95 ≤ 2000 at half max"),
        ("Fetch p50 / p95 / p99 ms", f"{fe['p50']} / {fe['p95']} / {fe['p99']}", "p99 ≤ 100 (embedded, 16)"),
        ("Fetch clients / max in flight", f"{result['fetch_concurrency']} / {result['fetch_max_in_flight']}", ""),
        ("errors", result["errors"], "0"),
        ("skipped slots (agents behind)", result["skipped_slots"], ""),
    )
    for name, value, target in rows:
        table.add_row(name, "-" if value is None else str(value), target)
    for name, usage in result["services"].items():
        table.add_row(
            f"{name}: CPU % mean / max, RSS MiB max",
            f"{usage['cpu_pct_mean']} / {usage['cpu_pct_max']}, {usage['rss_mb_max']}",
            "",
        )
    console.print(table)
    if result["errors_by_code"]:
        console.print(f"errors by code: {result['errors_by_code']}")


def write_plot(result: Mapping[str, Any], path: Path) -> bool:
    """From the result alone, over time: turns/s accepted and processed against the target, consumer lag,
    Fetch p95 per second with the freshness probes, and CPU % per process; False when matplotlib is missing."""
    plt = pyplot()
    if plt is None:
        return False
    rows = result["timeline"]
    ts = [r["t"] for r in rows]
    fig, axes = plt.subplots(4, 1, figsize=(11, 12), sharex=True)
    rate_ax, lag_ax, ms_ax, cpu_ax = axes
    rate_ax.plot(ts, [r["accepted"] for r in rows], label="accepted")
    rate_ax.plot(ts, [r["processed"] for r in rows], label="processed (job seen DONE)")
    rate_ax.axhline(result["target_turns_per_s"], color="grey", linestyle=":", label="target")
    rate_ax.set_ylabel("turns / s")
    lag_ax.plot(ts, [r["lag"] for r in rows], color="tab:red")
    lag_ax.set_ylabel("consumer lag (records)")
    ms_ax.plot(ts, [r["fetch_p95_ms"] for r in rows], label="agents' Fetch p95 in the second")
    fresh = result["freshness_samples"]
    ms_ax.scatter(
        [t for t, _ in fresh],
        [ms for _, ms in fresh],
        s=10,
        color="tab:green",
        label="freshness probe (accepted → fetched), at its acceptance",
    )
    ms_ax.set_yscale("log")
    ms_ax.set_ylabel("ms (log)")
    for name in result["services"]:
        points = [(r["t"], r["cpu_pct"][name]) for r in rows if name in r["cpu_pct"]]
        cpu_ax.plot([t for t, _ in points], [c for _, c in points], label=name, linewidth=1)
    cpu_ax.set_ylabel("CPU % (100 = one core)")
    cpu_ax.set_xlabel("seconds")
    for ax in axes:
        ax.axvline(result["duration_s"], color="black", linestyle="--", linewidth=0.8, label="load ends")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncols=3 if ax is cpu_ax else 1)
    machine = result["run"]["machine"]
    fig.suptitle(
        f"acm bench fleet, {result['mode']}: {result['agents']} agents, target {result['target_turns_per_s']} turns/s "
        f"via {result['via']}, {result['replicas']} ingest replica(s) ({machine['cpus']} shared cores, load avg "
        f"{machine['loadavg_before'][0]})"
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
