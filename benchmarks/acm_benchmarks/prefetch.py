"""`acm bench prefetch`: does anticipation take retrieval off the critical path without losing evidence?

    acm bench prefetch --data locomo.json --json results/prefetch.json [--limit-conversations 1]

Each LoCoMo conversation is replayed turn by turn into its sessions (gRPC Ingest into one embedded ACM,
agent "locomo", a session per LoCoMo session). Each question is asked at the point of the conversation
just after its last evidence turn, in the session then running, as an agent would ask mid-conversation;
before it, every consumer (ingest, retrieve's index, anticipate) has caught up with the turns so far.
The question is asked twice, in alternating order, through two gateways of the same process over gRPC:
one whose Fetch consults the prefetch pool ("prefetch"), one without it ("no_prefetch"). The Fetches come
from a client in a process of its own, as an agent's would (acm_benchmarks.fetch_process; `--client
in-process` asks from the benchmark's own event loop instead, which shares the server's).

Reported per system: hit rate (the share of Fetches whose evidence turns were all in the session's fresh
prefetch pool before the Fetch), the share actually served from the pool, Fetch latency p50 / p95 (and p50
of the hits, and of the Fetches served from the pool), evidence recall of the served bundle, and the
pool's bytes per session (mean and max over sessions, against the schema's bound).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acm_benchmarks.locomo import (
    AGENT,
    CUSTOMER,
    Conversation,
    Question,
    evidence_recall,
    ingest_turn,
    load_conversations,
    percentile,
    wait_until_indexed,
)
from acm_benchmarks.plotting import pyplot

if TYPE_CHECKING:
    from rich.console import Console

    from acm.client import AcmClient
    from acm_cli.embedded import EmbeddedAcm

SYSTEMS: tuple[str, ...] = ("prefetch", "no_prefetch")
CLIENTS = ("process", "in-process")
# (system, scope, query, budget) → (FetchResponse, milliseconds of the gRPC call)
Fetch = Callable[[str, Any, str, int], Awaitable[tuple[Any, float]]]
DEFAULT_BUDGET = 1000
PROGRESS_EVERY = 50

# ---------------------------------------------------------------------------------------------------
# Pure parts


def ask_points(conv: Conversation) -> dict[int, list[Question]]:
    """Turn index → the questions to ask right after that turn (the last of their evidence turns; a
    question whose evidence names no turn of the conversation is asked at the end)."""
    position = {t.turn_id: i for i, t in enumerate(conv.turns)}
    points: dict[int, list[Question]] = {}
    for q in conv.questions:
        known = [position[e] for e in q.evidence if e in position]
        points.setdefault(max(known) if known else len(conv.turns) - 1, []).append(q)
    return points


@dataclass
class Asked:
    recall: float
    latency_ms: float
    from_prefetch: bool
    evidence_in_cache: bool


@dataclass
class Tally:
    asked: dict[str, list[Asked]] = field(default_factory=lambda: {s: [] for s in SYSTEMS})
    pool_bytes: dict[str, int] = field(default_factory=dict)  # session → latest pool size


def _pct(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def _ms(values: Sequence[float], q: float) -> float | None:
    return round(percentile(values, q), 3) if values else None


def summarise(tally: Tally, max_bytes: int) -> dict[str, dict[str, Any]]:
    sizes = list(tally.pool_bytes.values())
    out: dict[str, dict[str, Any]] = {}
    for name in SYSTEMS:
        items = tally.asked[name]
        served = [a for a in items if a.from_prefetch]
        latencies = [a.latency_ms for a in items]
        out[name] = {
            "hit_rate_pct": _pct(sum(a.evidence_in_cache for a in items), len(items)) if name == "prefetch" else 0.0,
            "served_from_prefetch_pct": _pct(len(served), len(items)),
            "fetch_p50_ms": _ms(latencies, 50),
            "fetch_p95_ms": _ms(latencies, 95),
            # On a hit (the evidence was warm), whether or not the gateway chose to serve from the pool.
            "fetch_p50_ms_on_hit": _ms([a.latency_ms for a in items if a.evidence_in_cache], 50)
            if name == "prefetch"
            else None,
            "fetch_p50_ms_served_from_prefetch": _ms([a.latency_ms for a in served], 50),
            "fetch_p95_ms_served_from_prefetch": _ms([a.latency_ms for a in served], 95),
            "fetch_p50_ms_fallback": _ms([a.latency_ms for a in items if not a.from_prefetch], 50),
            "recall_pct": round(100 * sum(a.recall for a in items) / len(items), 1) if items else None,
            "recall_pct_served_from_prefetch": (
                round(100 * sum(a.recall for a in served) / len(served), 1) if served else None
            ),
            "cache_bytes_per_session": round(sum(sizes) / len(sizes)) if sizes and name == "prefetch" else 0,
            "cache_bytes_per_session_max": max(sizes) if sizes and name == "prefetch" else 0,
            "cache_bytes_bound": max_bytes if name == "prefetch" else 0,
            "n": len(items),
        }
    return out


# ---------------------------------------------------------------------------------------------------
# Runner (IO)


@dataclass(frozen=True)
class Options:
    data: Path
    json_out: Path | None
    plot_out: Path | None
    limit_conversations: int | None
    budget: int
    embedder: str
    data_dir: Path | None
    client: str = "process"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "prefetch",
        help="prefetch hit rate, Fetch latency and recall with and without anticipation (LoCoMo replay)",
        description="Prefetch hit rate, Fetch latency and evidence recall with and without anticipation, replaying "
        "LoCoMo conversations. Runs its own embedded ACM.",
    )
    p.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    p.add_argument("--json", dest="json_out", type=Path, help="write the results here")
    p.add_argument("--plot", dest="plot_out", type=Path, help="latency plot (default: prefetch.png beside --json)")
    p.add_argument("--limit-conversations", type=int, metavar="N", help="only the first N conversations")
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="Fetch token budget (cl100k_base)")
    p.add_argument("--embedder", help="embedder of ACM (default: embedded ACM's)")
    p.add_argument("--data-dir", type=Path, help="embedded ACM's data (default: a fresh temporary folder)")
    p.add_argument(
        "--client",
        choices=CLIENTS,
        default="process",
        help="where Fetches come from: a process of their own, as an agent's (default), or the benchmark's loop",
    )
    p.set_defaults(run=run)


async def run(args: argparse.Namespace) -> None:
    from acm_cli.embedded import EmbeddedSettings

    if not args.data.is_file():
        raise SystemExit(f"no such file: {args.data}")
    plot_out = args.plot_out or (args.json_out.parent / "prefetch.png" if args.json_out else None)
    await run_benchmark(
        Options(
            data=args.data,
            json_out=args.json_out,
            plot_out=plot_out,
            limit_conversations=args.limit_conversations,
            budget=args.budget,
            embedder=args.embedder or str(EmbeddedSettings.model_fields["embedder"].default),
            data_dir=args.data_dir,
            client=args.client,
        )
    )


async def run_benchmark(options: Options) -> dict[str, Any]:
    import tempfile

    from rich.console import Console

    console = Console(soft_wrap=True)
    conversations = load_conversations(options.data, options.limit_conversations)
    started_at = datetime.now(UTC)
    t0 = time.perf_counter()
    console.print(
        f"[bold]prefetch[/bold] {options.data.name}: {len(conversations)} conversations, "
        f"{sum(len(c.turns) for c in conversations)} turns, {sum(len(c.questions) for c in conversations)} "
        f"questions asked after their last evidence turn; budget {options.budget}, embedder {options.embedder}"
    )
    if options.data_dir is None:
        with tempfile.TemporaryDirectory(prefix="acm-bench-prefetch-") as tmp:
            tally, max_bytes, outcomes = await _run_all(conversations, options, Path(tmp), console, t0)
    else:
        tally, max_bytes, outcomes = await _run_all(conversations, options, options.data_dir, console, t0)
    result = {
        "systems": summarise(tally, max_bytes),
        "run": {
            "data": options.data.name,
            "embedder": options.embedder,
            "fetch_client": options.client,
            "budget_tokens": options.budget,
            "conversations": len(conversations),
            "turns": sum(len(c.turns) for c in conversations),
            "questions": len(tally.asked["prefetch"]),
            "sessions": len(tally.pool_bytes),
            "gateway_outcomes": dict(outcomes),
            "started_at": started_at.isoformat(timespec="seconds"),
            "duration_s": round(time.perf_counter() - t0, 1),
        },
    }
    _print_table(console, result)
    if options.json_out:
        options.json_out.parent.mkdir(parents=True, exist_ok=True)
        options.json_out.write_text(json.dumps(result, indent=2) + "\n")
        console.print(f"wrote {options.json_out}")
    if options.plot_out and write_plot(tally, result, options.plot_out):
        console.print(f"wrote {options.plot_out}")
    return result


async def _run_all(
    conversations: Sequence[Conversation], options: Options, data_dir: Path, console: Console, t0: float
) -> tuple[Tally, int, Mapping[str, int]]:
    from acm.adapters.prefetching_retriever import PrefetchingRetriever
    from acm.client import AcmClient
    from acm.domain.schema import default_schema
    from acm_benchmarks.fetch_process import FetchProcess
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
    from acm_gateway.app import build_server, build_servicer
    from acm_gateway.settings import GatewaySettings

    tally = Tally()
    settings = EmbeddedSettings(data_dir=data_dir, listen_addr="127.0.0.1:0", embedder=options.embedder)
    async with EmbeddedAcm(settings) as acm:
        # The same process and stores, a second gateway whose Fetch always runs the full retrieval.
        u = acm.urls
        plain_settings = GatewaySettings(
            database_url=u.database,
            bus_url=u.bus,
            retrieve_addr="in-process",
            architect_addr="in-process",
            cache_url=u.cache,
            listen_addr="127.0.0.1:0",
        )
        plain = build_server(
            build_servicer(acm.rel, acm.bus, acm.full_retriever, acm.cache, plain_settings), "127.0.0.1:0"
        )
        await plain.start()
        try:
            addrs = {"prefetch": f"127.0.0.1:{acm.port}", "no_prefetch": f"127.0.0.1:{plain.port}"}
            async with AsyncExitStack() as stack:
                clients = {
                    name: await stack.enter_async_context(AcmClient(addr, acm.api_key, timeout_s=60))
                    for name, addr in addrs.items()
                }

                async def in_process(system: str, scope: Any, query: str, budget: int) -> tuple[Any, float]:
                    start = time.perf_counter()
                    response = await clients[system].fetch(scope, query, budget, "")
                    return response, (time.perf_counter() - start) * 1000

                fetch: Fetch = in_process
                if options.client == "process":
                    child = await stack.enter_async_context(
                        await FetchProcess.start([addrs[s] for s in SYSTEMS], acm.api_key)
                    )

                    async def from_child(system: str, scope: Any, query: str, budget: int) -> tuple[Any, float]:
                        return await child.fetch(SYSTEMS.index(system), scope, query, budget)

                    fetch = from_child
                with_prefetch = clients["prefetch"]
                for conv in conversations:
                    await _replay(conv, acm, with_prefetch, fetch, options, tally, console, t0)
        finally:
            await plain.stop()
        outcomes = acm.retriever.outcomes if isinstance(acm.retriever, PrefetchingRetriever) else {}
        for key, size in acm.anticipate.warm.last_bytes.items():
            tally.pool_bytes[key] = size
    return tally, default_schema(AGENT).prefetch.max_bytes, dict(outcomes)


def _scope(sample_id: str, session: int) -> Any:
    from acm.v1 import common_pb2

    return common_pb2.Scope(customer_id=CUSTOMER, user_id=sample_id, agent_id=AGENT, session_id=f"session_{session}")


async def _replay(
    conv: Conversation,
    acm: EmbeddedAcm,
    client: AcmClient,
    fetch: Fetch,
    options: Options,
    tally: Tally,
    console: Console,
    t0: float,
) -> None:
    points = ask_points(conv)
    pending: list[tuple[Any, str]] = []
    asked = 0
    for i, turn in enumerate(conv.turns):
        scope = _scope(conv.sample_id, turn.session)
        pending.append((scope, await ingest_turn(client, scope, turn)))
        if i not in points:
            continue
        for job_scope, job_id in pending:
            await client.wait_job(job_scope, job_id, timeout_s=300)
        pending.clear()
        await wait_until_indexed(acm)
        for question in points[i]:
            await _ask(scope, question, acm, fetch, options, tally, flip=asked % 2 == 1)
            asked += 1
            if asked % PROGRESS_EVERY == 0 or asked == len(conv.questions):
                s = summarise(tally, 0)
                console.print(
                    f"  {conv.sample_id}: {asked}/{len(conv.questions)} asked (turn {i + 1}/{len(conv.turns)}); "
                    f"hit rate {s['prefetch']['hit_rate_pct']} %, served from prefetch "
                    f"{s['prefetch']['served_from_prefetch_pct']} %, recall {s['prefetch']['recall_pct']} vs "
                    f"{s['no_prefetch']['recall_pct']} % [{time.perf_counter() - t0:.0f} s]"
                )


async def _ask(
    scope: Any,
    question: Question,
    acm: EmbeddedAcm,
    fetch: Fetch,
    options: Options,
    tally: Tally,
    *,
    flip: bool,
) -> None:
    from acm.convert import scope_from_pb
    from acm.prefetch_state import load_pool, read_generations
    from acm_cli.embedded import DEV_CLIENT

    # Was the evidence already warm (and the pool fresh) before the agent asked?
    domain_scope = scope_from_pb(scope, client_id=DEV_CLIENT)
    pool = await load_pool(acm.cache, domain_scope)
    fresh = pool is not None and list(pool.generations) == await read_generations(acm.cache, domain_scope)
    warm = {t for m in pool.memories for t in m.source_turn_ids} if pool is not None and fresh else set()
    in_cache = set(question.evidence) <= warm
    order = list(reversed(SYSTEMS)) if flip else list(SYSTEMS)
    for name in order:
        response, latency_ms = await fetch(name, scope, question.text, options.budget)
        recall = evidence_recall(question.evidence, (m.source_turn_ids for m in response.memories))
        tally.asked[name].append(Asked(recall, latency_ms, response.from_prefetch, in_cache))


def _print_table(console: Console, result: Mapping[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"prefetch vs full retrieval (budget {result['run']['budget_tokens']} tokens)")
    columns = (
        ("hit %", "hit_rate_pct"),
        ("served %", "served_from_prefetch_pct"),
        ("p50 ms", "fetch_p50_ms"),
        ("p95 ms", "fetch_p95_ms"),
        ("p50 ms on hit", "fetch_p50_ms_on_hit"),
        ("p50 ms served", "fetch_p50_ms_served_from_prefetch"),
        ("recall %", "recall_pct"),
        ("bytes/session", "cache_bytes_per_session"),
        ("max bytes", "cache_bytes_per_session_max"),
        ("n", "n"),
    )
    table.add_column("system")
    for title, _ in columns:
        table.add_column(title, justify="right")
    for name, row in result["systems"].items():
        table.add_row(name, *("-" if row[k] is None else str(row[k]) for _, k in columns))
    console.print(table)
    console.print(f"gateway outcomes: {result['run']['gateway_outcomes']}; duration {result['run']['duration_s']} s")


def write_plot(tally: Tally, result: Mapping[str, Any], path: Path) -> bool:
    """Fetch latency distributions of both systems (log scale); False when matplotlib is missing."""
    plt = pyplot()
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name in SYSTEMS:
        values = sorted(a.latency_ms for a in tally.asked[name])
        if values:
            ax.plot(values, [(i + 1) / len(values) for i in range(len(values))], label=name)
    ax.set_xscale("log")
    ax.set_xlabel("Fetch latency over gRPC, embedded mode (ms, log scale)")
    ax.set_ylabel("share of Fetches")
    s = result["systems"]
    ax.set_title(
        f"prefetch: hit {s['prefetch']['hit_rate_pct']} %, recall {s['prefetch']['recall_pct']} % "
        f"(no prefetch {s['no_prefetch']['recall_pct']} %)"
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
