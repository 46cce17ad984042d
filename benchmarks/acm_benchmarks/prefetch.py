"""`acm bench prefetch`: does anticipation take retrieval off the critical path without losing evidence?

    acm bench prefetch --data locomo.json --json results/prefetch.json [--limit-conversations 1]
        [--ask-at {all,evidence,session-end,random}] [--seed 22]

Each LoCoMo conversation is replayed turn by turn into its sessions (gRPC Ingest into one embedded ACM,
agent "locomo", a session per LoCoMo session). Each question is asked once in the replay, right after one
turn, in the session then running, as an agent would ask mid-conversation; before it, every consumer
(ingest, retrieve's index, anticipate) has caught up with the turns so far. Where (--ask-at; by default
each placement in turn, each in a fresh embedded ACM):

- evidence: just after the question's last evidence turn. The gold evidence decides when the question
  comes, which flatters the pool (it was just warmed for those turns); kept to compare with earlier runs.
- session-end: at the end of one of the conversation's sessions, drawn uniformly for each question;
- random: just after one of the conversation's turns, drawn uniformly for each question.

The two drawn placements read no gold field: the draw is seeded by (--seed, placement, conversation,
question text) only. A question may then come before some or all of its evidence was said; it is scored on
the evidence said so far, and a question with none of it said yet is asked (for the served share and the
latency) but not scored.

The question is asked twice, in alternating order, through two gateways of the same process over gRPC:
one whose Fetch consults the prefetch pool ("prefetch"), one without it ("no_prefetch"). The Fetches come
from a client in a process of its own, as an agent's would (acm_benchmarks.fetch_process; `--client
in-process` asks from the benchmark's own event loop instead, which shares the server's).

Reported per placement and system: hit rate (the share of scored Fetches whose evidence said so far was
all in the session's fresh prefetch pool before the Fetch), the share actually served from the pool, Fetch
latency p50 / p95 (and p50 of the hits, and of the Fetches served from the pool), evidence recall of the
served bundle, and the pool's bytes per session (mean and max over sessions, against the schema's bound);
per placement, recall with prefetch minus without, overall and on the Fetches the pool served, and on how
many of those the pool's answer had the lower recall, and the higher.
"""

from __future__ import annotations

import argparse
import json
import random
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
PLACEMENTS: tuple[str, ...] = ("evidence", "session-end", "random")
RULES: dict[str, str] = {
    "evidence": "just after the question's last evidence turn (reads the gold evidence)",
    "session-end": "at the end of a session drawn uniformly, seeded by (seed, placement, conversation, question text)",
    "random": "just after a turn drawn uniformly, seeded by (seed, placement, conversation, question text)",
}
DEFAULT_SEED = 22
CLIENTS = ("process", "in-process")
# (system, scope, query, budget) → (FetchResponse, milliseconds of the gRPC call)
Fetch = Callable[[str, Any, str, int], Awaitable[tuple[Any, float]]]
DEFAULT_BUDGET = 1000
PROGRESS_EVERY = 50

# ---------------------------------------------------------------------------------------------------
# Pure parts


def ask_points(conv: Conversation) -> dict[int, list[Question]]:
    """The "evidence" placement. Turn index → the questions to ask right after that turn (the last of their
    evidence turns; a question whose evidence names no turn of the conversation is asked at the end)."""
    position = {t.turn_id: i for i, t in enumerate(conv.turns)}
    points: dict[int, list[Question]] = {}
    for q in conv.questions:
        known = [position[e] for e in q.evidence if e in position]
        points.setdefault(max(known) if known else len(conv.turns) - 1, []).append(q)
    return points


def drawn_points(conv: Conversation, placement: str, seed: int) -> dict[int, list[Question]]:
    """The "session-end" and "random" placements: turn index → the questions to ask right after it. Each
    question's draw is seeded by its text only (never its evidence, answer or category), so neither the gold
    data nor the other questions move it."""
    if placement not in ("session-end", "random"):
        raise ValueError(f"not a drawn placement: {placement!r}")
    session_ends = {t.session: i for i, t in enumerate(conv.turns)}  # the last turn of each session
    candidates = sorted(session_ends.values()) if placement == "session-end" else list(range(len(conv.turns)))
    points: dict[int, list[Question]] = {}
    for q in conv.questions:
        rng = random.Random(f"{seed}:{placement}:{conv.sample_id}:{q.text}")
        points.setdefault(rng.choice(candidates), []).append(q)
    return dict(sorted(points.items()))


def placement_points(conv: Conversation, placement: str, seed: int) -> dict[int, list[Question]]:
    return ask_points(conv) if placement == "evidence" else drawn_points(conv, placement, seed)


def said_evidence(conv: Conversation, question: Question, turn_index: int) -> tuple[str, ...]:
    """The question's evidence turns said up to and including ``turn_index`` (what a Fetch there can find)."""
    said = {t.turn_id for t in conv.turns[: turn_index + 1]}
    return tuple(e for e in question.evidence if e in said)


@dataclass
class Asked:
    recall: float | None  # None: none of the evidence was said yet (asked, not scored)
    latency_ms: float
    from_prefetch: bool
    evidence_in_cache: bool | None  # the evidence said so far was warm in the pool (None: not scored)


@dataclass
class Tally:
    asked: dict[str, list[Asked]] = field(default_factory=lambda: {s: [] for s in SYSTEMS})
    pool_bytes: dict[str, int] = field(default_factory=dict)  # session → latest pool size


def _pct(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def _ms(values: Sequence[float], q: float) -> float | None:
    return round(percentile(values, q), 3) if values else None


def _mean_recall(items: Sequence[Asked]) -> float | None:
    scored = [a.recall for a in items if a.recall is not None]
    return round(100 * sum(scored) / len(scored), 1) if scored else None


def summarise(tally: Tally, max_bytes: int) -> dict[str, dict[str, Any]]:
    sizes = list(tally.pool_bytes.values())
    out: dict[str, dict[str, Any]] = {}
    for name in SYSTEMS:
        items = tally.asked[name]
        scored = [a for a in items if a.recall is not None]
        served = [a for a in items if a.from_prefetch]
        latencies = [a.latency_ms for a in items]
        out[name] = {
            "hit_rate_pct": _pct(sum(bool(a.evidence_in_cache) for a in scored), len(scored))
            if name == "prefetch"
            else 0.0,
            "served_from_prefetch_pct": _pct(len(served), len(items)),
            "fetch_p50_ms": _ms(latencies, 50),
            "fetch_p95_ms": _ms(latencies, 95),
            # On a hit (the evidence was warm), whether or not the gateway chose to serve from the pool.
            "fetch_p50_ms_on_hit": _ms([a.latency_ms for a in scored if a.evidence_in_cache], 50)
            if name == "prefetch"
            else None,
            "fetch_p50_ms_served_from_prefetch": _ms([a.latency_ms for a in served], 50),
            "fetch_p95_ms_served_from_prefetch": _ms([a.latency_ms for a in served], 95),
            "fetch_p50_ms_fallback": _ms([a.latency_ms for a in items if not a.from_prefetch], 50),
            "recall_pct": _mean_recall(scored),
            "recall_pct_served_from_prefetch": _mean_recall(served),
            "cache_bytes_per_session": round(sum(sizes) / len(sizes)) if sizes and name == "prefetch" else 0,
            "cache_bytes_per_session_max": max(sizes) if sizes and name == "prefetch" else 0,
            "cache_bytes_bound": max_bytes if name == "prefetch" else 0,
            "n": len(items),
            "n_scored": len(scored),
        }
    return out


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a - b, 1)


def compare(tally: Tally) -> dict[str, Any]:
    """Recall with prefetch minus without (points), on every scored question and on those the pool served:
    the two systems answered the same questions in the same order, so the lists pair up."""
    pairs = list(zip(tally.asked["prefetch"], tally.asked["no_prefetch"], strict=True))
    served = [(p, n) for p, n in pairs if p.from_prefetch]
    on_served = {
        "n": len(served),
        "n_scored": sum(p.recall is not None for p, _ in served),
        "recall_pct_prefetch": _mean_recall([p for p, _ in served]),
        "recall_pct_no_prefetch": _mean_recall([n for _, n in served]),
    }
    on_served["recall_difference_pts"] = _diff(on_served["recall_pct_prefetch"], on_served["recall_pct_no_prefetch"])
    # Per question, not only on average: "the pool never lowers recall" is a claim about each Fetch it serves.
    both = [(p.recall, n.recall) for p, n in served if p.recall is not None and n.recall is not None]
    on_served["lowered"] = sum(p < n for p, n in both)
    on_served["raised"] = sum(p > n for p, n in both)
    return {
        "recall_difference_pts": _diff(_mean_recall([p for p, _ in pairs]), _mean_recall([n for _, n in pairs])),
        "served_from_prefetch": on_served,
    }


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
    ask_at: tuple[str, ...] = PLACEMENTS
    seed: int = DEFAULT_SEED


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
    p.add_argument(
        "--ask-at",
        choices=[*PLACEMENTS, "all"],
        default="all",
        help="where each question is asked: after its last evidence turn (reads gold data), at the end of a "
        "drawn session, after a drawn turn, or each of them in turn (default)",
    )
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"seed of the drawn placements ({DEFAULT_SEED})")
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
            ask_at=PLACEMENTS if args.ask_at == "all" else (args.ask_at,),
            seed=args.seed,
        )
    )


async def run_benchmark(options: Options) -> dict[str, Any]:
    import tempfile

    from rich.console import Console

    console = Console(soft_wrap=True)
    console.width = max(console.width, 120)  # a log's 80 columns would crush the tables' cells
    conversations = load_conversations(options.data, options.limit_conversations)
    started_at = datetime.now(UTC)
    t0 = time.perf_counter()
    console.print(
        f"[bold]prefetch[/bold] {options.data.name}: {len(conversations)} conversations, "
        f"{sum(len(c.turns) for c in conversations)} turns, {sum(len(c.questions) for c in conversations)} "
        f"questions; placements {', '.join(options.ask_at)} (seed {options.seed}); budget {options.budget}, "
        f"embedder {options.embedder}"
    )
    tallies: dict[str, Tally] = {}
    placements: dict[str, dict[str, Any]] = {}
    for placement in options.ask_at:
        started = time.perf_counter()
        console.print(f"[bold]{placement}[/bold]: {RULES[placement]}")
        # A fresh ACM per placement: the Fetches of one (their accesses, the pools they leave) do not reach the next.
        if options.data_dir is None:
            with tempfile.TemporaryDirectory(prefix="acm-bench-prefetch-") as tmp:
                tally, max_bytes, outcomes = await _run_all(conversations, options, placement, Path(tmp), console, t0)
        else:
            data_dir = options.data_dir / placement
            tally, max_bytes, outcomes = await _run_all(conversations, options, placement, data_dir, console, t0)
        tallies[placement] = tally
        placements[placement] = {
            "rule": RULES[placement],
            "uses_gold": placement == "evidence",
            "systems": summarise(tally, max_bytes),
            **compare(tally),
            "sessions": len(tally.pool_bytes),
            "gateway_outcomes": dict(outcomes),
            "duration_s": round(time.perf_counter() - started, 1),
        }
    result = {
        "placements": placements,
        "run": {
            "data": options.data.name,
            "embedder": options.embedder,
            "fetch_client": options.client,
            "budget_tokens": options.budget,
            "seed": options.seed,
            "conversations": len(conversations),
            "turns": sum(len(c.turns) for c in conversations),
            "questions": sum(len(c.questions) for c in conversations),
            "started_at": started_at.isoformat(timespec="seconds"),
            "duration_s": round(time.perf_counter() - t0, 1),
        },
    }
    _print_table(console, result)
    if options.json_out:
        options.json_out.parent.mkdir(parents=True, exist_ok=True)
        options.json_out.write_text(json.dumps(result, indent=2) + "\n")
        console.print(f"wrote {options.json_out}")
    if options.plot_out and write_plot(tallies, result, options.plot_out):
        console.print(f"wrote {options.plot_out}")
    return result


async def _run_all(
    conversations: Sequence[Conversation],
    options: Options,
    placement: str,
    data_dir: Path,
    console: Console,
    t0: float,
) -> tuple[Tally, int, Mapping[str, int]]:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from acm.client import AcmClient
    from acm.domain.schema import default_schema
    from acm.schemas import RepoSchemaSource
    from acm.telemetry import PREFETCH_OUTCOMES, counts_by
    from acm_benchmarks.fetch_process import FetchProcess
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
    from acm_gateway.app import build_server, build_servicer
    from acm_gateway.settings import GatewaySettings

    tally = Tally()
    settings = EmbeddedSettings(data_dir=data_dir, listen_addr="127.0.0.1:0", embedder=options.embedder)
    reader = InMemoryMetricReader()  # the gateway's prefetch outcomes, as an exporter would read them
    async with EmbeddedAcm(settings, meter_provider=MeterProvider(metric_readers=[reader])) as acm:
        # The same process and stores, a second gateway whose Fetch always runs the full retrieval.
        u = acm.urls
        plain_settings = GatewaySettings(
            database_url=u.databases["gateway"],
            bus_url=u.bus,
            retrieve_addr="in-process",
            architect_addr="in-process",
            cache_url=u.cache,
            listen_addr="127.0.0.1:0",
        )
        plain = build_server(
            build_servicer(
                acm.stores["gateway"],
                acm.bus,
                acm.full_retriever,
                acm.cache,
                plain_settings,
                RepoSchemaSource(acm.stores["architect"].schemas),
                compactor=acm.compactor,  # the session's reads, from their owners as the main gateway's
                memory_reader=acm.memories,
                apply_job_updates=False,  # the main gateway applies the shared jobs table's updates
            ),
            "127.0.0.1:0",
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
                    points = placement_points(conv, placement, options.seed)
                    await _replay(conv, points, acm, with_prefetch, fetch, options, tally, console, t0)
        finally:
            await plain.stop()
        outcomes = counts_by(reader, PREFETCH_OUTCOMES, "outcome")
        for key, size in acm.anticipate.warm.last_bytes.items():
            tally.pool_bytes[key] = size
    return tally, default_schema(AGENT).prefetch.max_bytes, dict(outcomes)


def _scope(sample_id: str, session: int) -> Any:
    from acm.v1 import common_pb2

    return common_pb2.Scope(customer_id=CUSTOMER, user_id=sample_id, agent_id=AGENT, session_id=f"session_{session}")


async def _replay(
    conv: Conversation,
    points: Mapping[int, Sequence[Question]],
    acm: EmbeddedAcm,
    client: AcmClient,
    fetch: Fetch,
    options: Options,
    tally: Tally,
    console: Console,
    t0: float,
) -> None:
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
            said = said_evidence(conv, question, i)
            await _ask(scope, question, acm, fetch, options, tally, flip=asked % 2 == 1, said=said)
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
    said: Sequence[str] | None = None,
) -> None:
    """Ask through both gateways; score on ``said`` (the evidence said so far; default: all of it), and not
    at all when none of it was said yet."""
    from acm.convert import scope_from_pb
    from acm.prefetch_state import read_generations
    from acm.read.pool import load_pool
    from acm_cli.embedded import DEV_CLIENT

    # Was the evidence already warm (and the pool fresh) before the agent asked?
    domain_scope = scope_from_pb(scope, client_id=DEV_CLIENT)
    pool = await load_pool(acm.cache, domain_scope)
    fresh = pool is not None and list(pool.generations) == await read_generations(acm.cache, domain_scope)
    warm = {t for m in pool.memories for t in m.source_turn_ids} if pool is not None and fresh else set()
    scored = tuple(question.evidence if said is None else said)
    in_cache = set(scored) <= warm if scored else None
    order = list(reversed(SYSTEMS)) if flip else list(SYSTEMS)
    for name in order:
        response, latency_ms = await fetch(name, scope, question.text, options.budget)
        recall = evidence_recall(scored, (m.source_turn_ids for m in response.memories)) if scored else None
        tally.asked[name].append(Asked(recall, latency_ms, response.from_prefetch, in_cache))


def _print_table(console: Console, result: Mapping[str, Any]) -> None:
    from rich.table import Table

    budget = result["run"]["budget_tokens"]
    tables = {  # two tables rather than one too wide to read
        f"prefetch vs full retrieval by where questions are asked (budget {budget} tokens)": (
            ("hit %", "hit_rate_pct"),
            ("served %", "served_from_prefetch_pct"),
            ("recall %", "recall_pct"),
            ("n", "n"),
            ("scored", "n_scored"),
        ),
        "Fetch latency and pool size": (
            ("p50 ms", "fetch_p50_ms"),
            ("p95 ms", "fetch_p95_ms"),
            ("p50 hit", "fetch_p50_ms_on_hit"),
            ("p50 served", "fetch_p50_ms_served_from_prefetch"),
            ("bytes/session", "cache_bytes_per_session"),
            ("max bytes", "cache_bytes_per_session_max"),
        ),
    }
    caption = "recall on the evidence said by the ask point; hit: that evidence was all in the fresh pool"
    for title, columns in tables.items():
        table = Table(title=title, caption=caption if "recall_pct" in dict(columns).values() else None)
        table.add_column("placement")
        table.add_column("system")
        for name, _ in columns:
            table.add_column(name, justify="right")
        for placement, block in result["placements"].items():
            label = f"{placement} (gold)" if block["uses_gold"] else placement
            for name, row in block["systems"].items():
                table.add_row(label, name, *("-" if row[k] is None else str(row[k]) for _, k in columns))
        console.print(table)
    for placement, block in result["placements"].items():
        served = block["served_from_prefetch"]
        console.print(
            f"{placement}: recall with prefetch − without {block['recall_difference_pts']} points; on the "
            f"{served['n']} Fetches the pool served {served['recall_pct_prefetch']} vs "
            f"{served['recall_pct_no_prefetch']} % ({served['recall_difference_pts']}; lowered on "
            f"{served['lowered']}, raised on {served['raised']}); "
            f"gateway outcomes {block['gateway_outcomes']}"
        )
    console.print(f"duration {result['run']['duration_s']} s")


def write_plot(tallies: Mapping[str, Tally], result: Mapping[str, Any], path: Path) -> bool:
    """Per placement: hit rate, served share and recall with and without prefetch (bars), and the Fetch
    latency distributions of both systems (log scale); False when matplotlib is missing."""
    plt = pyplot()
    if plt is None:
        return False
    fig, (bars_ax, ax) = plt.subplots(1, 2, figsize=(14, 5))
    placements = list(result["placements"])
    metrics = (
        ("hit %", "prefetch", "hit_rate_pct"),
        ("served from pool %", "prefetch", "served_from_prefetch_pct"),
        ("recall with prefetch %", "prefetch", "recall_pct"),
        ("recall without %", "no_prefetch", "recall_pct"),
    )
    width = 0.8 / len(metrics)
    for m, (label, system, key) in enumerate(metrics):
        values = [result["placements"][p]["systems"][system][key] or 0.0 for p in placements]
        xs = [i + (m - (len(metrics) - 1) / 2) * width for i in range(len(placements))]
        bars_ax.bar_label(bars_ax.bar(xs, values, width, label=label), fmt="%.0f", fontsize=7, padding=2)
    names = [f"{p}\n(gold)" if result["placements"][p]["uses_gold"] else p for p in placements]
    bars_ax.set_xticks(range(len(placements)), names)
    bars_ax.set_ylim(0, 118)  # room for the legend above the bars
    bars_ax.set_ylabel("%")
    bars_ax.set_title("by where the question is asked")
    bars_ax.legend(ncols=2, loc="upper center", fontsize=8)
    for p, (placement, tally) in enumerate(tallies.items()):
        for name in SYSTEMS:  # a colour per placement, solid with prefetch and dotted without
            values = sorted(a.latency_ms for a in tally.asked[name])
            if values:
                ys = [(i + 1) / len(values) for i in range(len(values))]
                style = "-" if name == "prefetch" else ":"
                ax.plot(values, ys, label=f"{placement}: {name}", color=f"C{p}", linestyle=style)
    ax.set_xscale("log")
    ax.set_xlabel("Fetch latency over gRPC, embedded mode (ms, log scale)")
    ax.set_ylabel("share of Fetches")
    ax.set_title("Fetch latency")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
