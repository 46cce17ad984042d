"""`acm bench coverage`: how much of each LoCoMo gold answer is in the context ACM assembles for the
question, at a 2,000-token budget, after the whole conversation went into ONE session.

    acm bench coverage --data locomo.json --json results/coverage.json [--limit 1] [--quick]

Per conversation, every turn goes through the real pipeline (gRPC Ingest into an embedded ACM, one session,
jobs awaited, vector index caught up); then one Compact RPC (what the compact service does on its own when
the soft limit is crossed; the explicit call makes the end state independent of consumer timing). Each
question with a gold answer is asked through gRPC Fetch in that session's scope (pinned state, retrieved
memories, summary, recent turns). Coverage = the share of the answer's content words (lowercased, English
stop words removed) found among the context's words. Side by side: the last 2,000 tokens of the
conversation (truncation) and the whole conversation (the upper bound, with its token cost); both carry
the session date lines, as a transcript would.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acm_benchmarks.locomo import CATEGORIES, Conversation, load_conversations, percentile, tokenize
from acm_benchmarks.plotting import pyplot

BUDGET = 2000
SYSTEMS = ("acm", "truncation", "full")
CUSTOMER = "coverage"
AGENT = "coverage"
SESSION = "all"
PROGRESS_EVERY = 50


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "coverage",
        help="gold-answer coverage of Fetch on LoCoMo at 2,000 tokens: ACM vs truncation vs whole conversation",
        description="How much of each LoCoMo gold answer the context ACM assembles at 2,000 tokens holds, beside "
        "truncation and the whole conversation. Runs its own embedded ACM.",
    )
    p.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    p.add_argument("--json", dest="json_out", type=Path, help="write the results here")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N conversations")
    p.add_argument("--quick", action="store_true", help="first conversation, first 60 turns, 20 questions")
    p.add_argument("--data-dir", type=Path, help="embedded ACM's data (default: a fresh temporary folder)")
    p.add_argument(
        "--reuse-ingest",
        action="store_true",
        help="with --data-dir: skip conversations a previous run already ingested and compacted there (to compare "
        "assembly changes only; ingest and compaction figures are then not measured)",
    )
    p.add_argument("--misses", type=Path, help="write ACM's per-question results below full coverage here")
    p.add_argument(
        "--plot", dest="plot_out", type=Path, help="bar chart per category (default: coverage.png beside --json)"
    )
    p.set_defaults(run=run)


def answer_words(answer: object) -> set[str]:
    return set(tokenize(str(answer)))


def coverage(answer: object, context: str) -> float | None:
    wanted = answer_words(answer)
    if not wanted:
        return None
    return len(wanted & set(tokenize(context))) / len(wanted)


def transcript(conv: Conversation, dates: dict[int, str]) -> list[tuple[int, str]]:
    """(session, line) of the conversation as a transcript: a date line opens each session."""
    lines: list[tuple[int, str]] = []
    seen: set[int] = set()
    for t in conv.turns:
        if t.session not in seen:
            seen.add(t.session)
            lines.append((t.session, f"[session {t.session}, {dates.get(t.session, '')}]"))
        lines.append((t.session, t.item_text))
    return lines


def last_tokens(lines: Sequence[str], sizes: Sequence[int], budget: int) -> list[str]:
    kept: list[str] = []
    total = 0
    for line, size in zip(reversed(lines), reversed(sizes), strict=True):
        if total + size > budget:
            break
        kept.insert(0, line)
        total += size
    return kept


async def run(args: argparse.Namespace) -> None:
    if not args.data.is_file():
        raise SystemExit(f"no such file: {args.data}")
    if args.reuse_ingest and args.data_dir is None:
        raise SystemExit("--reuse-ingest needs --data-dir")
    await run_benchmark(
        args.data,
        args.json_out,
        1 if args.quick else args.limit,
        args.quick,
        args.data_dir,
        reuse_ingest=args.reuse_ingest,
        misses_out=args.misses,
        plot_out=args.plot_out or (args.json_out.with_name("coverage.png") if args.json_out else None),
    )


async def run_benchmark(
    data: Path,
    json_out: Path | None,
    limit: int | None,
    quick: bool,
    data_dir: Path | None,
    *,
    reuse_ingest: bool = False,
    misses_out: Path | None = None,
    plot_out: Path | None = None,
) -> dict[str, Any]:
    import tempfile

    from rich.console import Console

    console = Console(soft_wrap=True)
    raw = json.loads(await asyncio.to_thread(data.read_text))[:limit]
    conversations = load_conversations(data, limit)
    t0 = time.perf_counter()
    console.print(
        f"[bold]coverage[/bold] {data.name}: {len(conversations)} conversations, "
        f"{sum(len(c.turns) for c in conversations)} turns; budget {BUDGET}"
    )
    if data_dir is None:
        with tempfile.TemporaryDirectory(prefix="acm-bench-coverage-") as tmp:
            rows, ops = await _run_all(conversations, raw, Path(tmp), quick, console, t0, reuse_ingest)
    else:
        rows, ops = await _run_all(conversations, raw, data_dir, quick, console, t0, reuse_ingest)
    result = _result(rows, ops, data, quick, time.perf_counter() - t0)
    _print(console, result)
    if json_out:
        await asyncio.to_thread(_write, json_out, json.dumps(result, indent=2) + "\n")
        console.print(f"wrote {json_out}")
    if plot_out is not None:
        drawn = await asyncio.to_thread(write_plot, result, plot_out)
        console.print(f"wrote {plot_out}" if drawn else "no plot: matplotlib is not installed")
    if misses_out:
        misses = [r["detail"] for r in rows if r["coverage"]["acm"] is not None and r["coverage"]["acm"] < 1.0]
        await asyncio.to_thread(_write, misses_out, json.dumps(misses, indent=1, ensure_ascii=False) + "\n")
        console.print(f"wrote {len(misses)} questions below full coverage to {misses_out}")
    return result


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


async def _run_all(
    conversations: Sequence[Conversation],
    raw: Sequence[dict[str, Any]],
    data_dir: Path,
    quick: bool,
    console: Any,
    t0: float,
    reuse_ingest: bool,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from acm.adapters.tokenizer import TiktokenCounter
    from acm.client import AcmClient
    from acm.v1 import common_pb2
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

    counter = TiktokenCounter()
    rows: list[dict[str, Any]] = []
    ops: dict[str, Any] = {"compactions": [], "fetch_ms": [], "ingest_s": 0.0, "notices": 0}
    settings = EmbeddedSettings(data_dir=data_dir, listen_addr="127.0.0.1:0")
    async with EmbeddedAcm(settings) as acm, AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=120) as client:
        for conv, item in zip(conversations, raw, strict=True):
            turns = list(conv.turns[:60] if quick else conv.turns)
            scope = common_pb2.Scope(customer_id=CUSTOMER, user_id=conv.sample_id, agent_id=AGENT, session_id=SESSION)
            marker = data_dir / f"coverage-ingested-{conv.sample_id}{'-quick' if quick else ''}"
            if reuse_ingest and marker.exists():
                console.print(f"{conv.sample_id}: already ingested and compacted in {data_dir}, reused")
            else:
                await _ingest_and_compact(client, acm, scope, turns, ops, console, conv.sample_id, t0)
                marker.touch()
            conversation = item["conversation"]
            dates = {t.session: str(conversation.get(f"session_{t.session}_date_time", "")) for t in turns}
            lines = [line for _s, line in transcript(Conversation(conv.sample_id, tuple(turns), ()), dates)]
            sizes = [counter.count(line + "\n") for line in lines]
            full_text = "\n".join(lines)
            full_tokens = counter.count(full_text)
            trunc_text = "\n".join(last_tokens(lines, sizes, BUDGET))
            trunc_tokens = counter.count(trunc_text)
            known = {t.turn_id.split(":", 1)[1] for t in turns}
            qas = [qa for qa in item.get("qa", []) if "answer" in qa]
            if quick:
                qas = [qa for qa in qas if set(map(str, qa.get("evidence") or [])) <= known][:20]
            for i, qa in enumerate(qas, start=1):
                began = time.perf_counter()
                fetched = await client.fetch(scope, str(qa["question"]), BUDGET)
                ops["fetch_ms"].append((time.perf_counter() - began) * 1000)
                ops["notices"] += bool(fetched.notice)
                scores = {
                    "acm": coverage(qa["answer"], fetched.context),
                    "truncation": coverage(qa["answer"], trunc_text),
                    "full": coverage(qa["answer"], full_text),
                }
                if scores["full"] is None:
                    continue
                rows.append(
                    {
                        "category": int(qa["category"]),
                        "coverage": scores,
                        "tokens": {"acm": fetched.context_tokens, "truncation": trunc_tokens, "full": full_tokens},
                        "parts": {p.name: p.tokens for p in fetched.parts},
                        "detail": {
                            "conversation": conv.sample_id,
                            "category": int(qa["category"]),
                            "question": str(qa["question"]),
                            "answer": str(qa["answer"]),
                            "missing": sorted(answer_words(qa["answer"]) - set(tokenize(fetched.context))),
                            "missing_in_full": sorted(answer_words(qa["answer"]) - set(tokenize(full_text))),
                            "evidence": [str(e) for e in qa.get("evidence") or []],
                            "from_prefetch": fetched.from_prefetch,
                            "parts": {p.name: p.tokens for p in fetched.parts},
                            "context": fetched.context,
                        },
                    }
                )
                if i % PROGRESS_EVERY == 0 or i == len(qas):
                    done = [r for r in rows if r["coverage"]["acm"] is not None]
                    mean = 100 * sum(r["coverage"]["acm"] for r in done) / max(len(done), 1)
                    console.print(
                        f"  {conv.sample_id}: {i}/{len(qas)} questions; acm coverage so far {mean:.1f} % "
                        f"[{time.perf_counter() - t0:.0f} s]"
                    )
    return rows, ops


async def _ingest_and_compact(
    client: Any, acm: Any, scope: Any, turns: Sequence[Any], ops: dict[str, Any], console: Any, name: str, t0: float
) -> None:
    from acm_benchmarks.locomo import ingest_turn, wait_until_indexed

    start = time.perf_counter()
    jobs = []
    for turn in turns:
        jobs.append(await ingest_turn(client, scope, turn))
    for job_id in jobs:
        await client.wait_job(scope, job_id, timeout_s=600)
    await wait_until_indexed(acm)
    ops["ingest_s"] += time.perf_counter() - start
    compaction = await client.compact(scope)
    ops["compactions"].append(
        {
            "outcome": compaction.outcome,
            "ratio": round(compaction.ratio, 4),
            "verified": compaction.verified,
            "attempts": compaction.attempts,
            "latency_ms": round(compaction.latency_ms, 1),
            "tokens_before": compaction.tokens_before,
            "tokens_after": compaction.tokens_after,
        }
    )
    console.print(
        f"{name}: {len(turns)} turns in one session in {time.perf_counter() - start:.0f} s; "
        f"compact → "
        f"{compaction.outcome}, {compaction.tokens_before} → {compaction.tokens_after} tokens, verified "
        f"{compaction.verified} [{time.perf_counter() - t0:.0f} s]"
    )


def _summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in SYSTEMS:
        values = [r["coverage"][name] for r in rows]
        tokens = [r["tokens"][name] for r in rows]
        out[name] = {
            "coverage_pct": round(100 * sum(values) / len(values), 1) if values else None,
            "tokens_per_question": round(sum(tokens) / len(tokens), 1) if tokens else None,
            "n": len(values),
        }
    return out


def _result(
    rows: Sequence[dict[str, Any]], ops: dict[str, Any], data: Path, quick: bool, duration: float
) -> dict[str, Any]:
    systems = _summary(rows)
    by_category: dict[str, Any] = {}
    grouped: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        grouped[r["category"]].append(r)
    for category, items in sorted(grouped.items()):
        by_category[f"{category} {CATEGORIES.get(category, '?')}"] = _summary(items)
    acm, full = systems["acm"], systems["full"]
    parts: dict[str, float] = defaultdict(float)
    for r in rows:
        for name, tokens in r["parts"].items():
            parts[name] += tokens / len(rows)
    if acm["coverage_pct"] is not None and full["coverage_pct"] is not None:
        systems["acm"]["gap_to_full_points"] = round(full["coverage_pct"] - acm["coverage_pct"], 1)
        systems["acm"]["token_share_of_full_pct"] = round(
            100 * acm["tokens_per_question"] / full["tokens_per_question"], 1
        )
        systems["acm"]["mean_part_tokens"] = {k: round(v, 1) for k, v in parts.items()}
    served = [r["coverage"]["acm"] for r in rows if r["detail"]["from_prefetch"]]
    systems["acm"]["served_from_prefetch_pct"] = round(100 * len(served) / len(rows), 1) if rows else None
    systems["acm"]["coverage_pct_served_from_prefetch"] = round(100 * sum(served) / len(served), 1) if served else None
    return {
        "systems": systems,
        "by_category": by_category,
        "run": {
            "data": data.name,
            "quick": quick,
            "budget_tokens": BUDGET,
            "questions": len(rows),
            "compactions": ops["compactions"],
            "fetch_p50_ms": round(percentile(ops["fetch_ms"], 50), 2) if ops["fetch_ms"] else None,
            "fetch_p95_ms": round(percentile(ops["fetch_ms"], 95), 2) if ops["fetch_ms"] else None,
            "fetches_with_notice": ops["notices"],
            "ingest_s": round(ops["ingest_s"], 1),
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "duration_s": round(duration, 1),
        },
    }


def _print(console: Any, result: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"gold-answer coverage at {BUDGET} tokens ({result['run']['questions']} questions)")
    for col in ("system", "coverage %", "tokens / question"):
        table.add_column(col, justify="left" if col == "system" else "right")
    for name in SYSTEMS:
        s = result["systems"][name]
        table.add_row(name, str(s["coverage_pct"]), str(s["tokens_per_question"]))
    console.print(table)
    acm = result["systems"]["acm"]
    console.print(
        f"acm: {acm.get('gap_to_full_points')} points below the whole conversation at "
        f"{acm.get('token_share_of_full_pct')} % of its tokens; parts {acm.get('mean_part_tokens')}; "
        f"fetch p50 {result['run']['fetch_p50_ms']} ms, p95 {result['run']['fetch_p95_ms']} ms; served from the "
        f"prefetch pool {acm.get('served_from_prefetch_pct')} % (coverage of those "
        f"{acm.get('coverage_pct_served_from_prefetch')} %)"
    )


def write_plot(result: dict[str, Any], path: Path) -> bool:
    """Coverage per category for the three systems, with each system's tokens per question in the legend;
    False when matplotlib is missing."""
    plt = pyplot()
    if plt is None:
        return False
    groups = {"all": result["systems"], **result["by_category"]}
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / len(SYSTEMS)
    for i, name in enumerate(SYSTEMS):
        values = [g[name]["coverage_pct"] or 0 for g in groups.values()]
        tokens = result["systems"][name]["tokens_per_question"]
        ax.bar([x + i * width for x in range(len(groups))], values, width, label=f"{name} ({tokens:,.0f} tokens)")
    ax.set_xticks([x + width * (len(SYSTEMS) - 1) / 2 for x in range(len(groups))], list(groups))
    ax.set_ylabel("gold-answer words in the context (%)")
    ax.set_ylim(0, 115)
    ax.set_yticks(range(0, 101, 20))
    acm = result["systems"]["acm"]
    ax.set_title(
        f"gold-answer coverage at {BUDGET} tokens: ACM {acm['coverage_pct']} %, "
        f"{acm.get('gap_to_full_points')} points\nbelow the whole conversation at "
        f"{acm.get('token_share_of_full_pct')} % of its tokens",
        fontsize=11,
    )
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper center", ncol=len(SYSTEMS), fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
