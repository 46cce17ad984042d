"""`acm bench tokens`: cumulative prompt tokens over a session, append-all vs sliding window vs ACM.

    acm bench tokens --json results/tokens.json [--plot results/tokens.png] [--quick] [--tool-heavy]

For n = 50, 100, 200, 500 turns of about 500 tokens each (a generated enterprise session, padded with
protocol noise; acm_benchmarks.workflows) and a window budget W = 4,000 tokens, every turn is followed by a
model call whose prompt is: everything so far (append_all), the newest turns that fit W (truncation), or
ACM's assembled context within W (acm). ACM's figure also counts its compaction work as if a model did it
(the old pinned state and summary read, the span read, the new state and summary written, per verifier
attempt), although the deterministic compactor uses no model. Target: acm ≤ 1.1·n·W, i.e. ≥ 95% fewer
tokens than append-all at n = 500. The paper's append-all figures (exactly 500 tokens a turn) are printed
beside the measured ones. Per n, ACM's largest working context over the session (pins, summary, turns after
each turn's compaction) and largest prompt are reported against W.

`--tool-heavy`: the sessions of acm_benchmarks.toolsessions instead (JSON tool outputs of 5-20 records, a few
of 20-60 KiB, ids of several formats, people with honorifics, values changing over the session), turns as
generated rather than padded to 500 tokens.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acm_benchmarks.plotting import pyplot
from acm_benchmarks.workflows import KINDS, generate

NS = (50, 100, 200, 500)
QUICK_NS = (60, 120)  # enough turns for compaction to run: turns are kept compact (protocol noise out)
WINDOW = 4000
TURN_TOKENS = 500
PAPER_APPEND_ALL = {50: 637_500, 100: 2_525_000, 200: 10_050_000, 500: 62_625_000}
SYSTEMS = ("append_all", "truncation", "acm")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "tokens",
        help="cumulative prompt tokens: append-all vs sliding window vs ACM",
        description="Cumulative prompt tokens over generated sessions of 50 to 500 turns, at a 4,000-token window: "
        "append-all vs sliding window vs ACM.",
    )
    p.add_argument("--json", dest="json_out", type=Path, help="write the results here")
    p.add_argument("--plot", dest="plot_out", type=Path, help="plot (default: tokens.png beside --json)")
    p.add_argument("--seed", type=int, default=11, help="seed of the generated sessions (default 11)")
    p.add_argument("--quick", action="store_true", help="n = 60, 120 only (smoke test)")
    p.add_argument(
        "--tool-heavy",
        action="store_true",
        help="tool-heavy sessions instead (JSON tool outputs, ids of several formats), turns as generated (not "
        "padded); default plot <json name>.png",
    )
    p.set_defaults(run=run)


async def run(args: argparse.Namespace) -> None:
    default_plot = None
    if args.json_out:
        # The tool-heavy run must not overwrite the classic run's tokens.png.
        default_plot = args.json_out.with_suffix(".png") if args.tool_heavy else args.json_out.parent / "tokens.png"
    run_benchmark(
        args.json_out, args.plot_out or default_plot, QUICK_NS if args.quick else NS, args.seed, args.tool_heavy
    )


def run_benchmark(
    json_out: Path | None, plot_out: Path | None, ns: tuple[int, ...], seed: int, tool_heavy: bool = False
) -> dict[str, Any]:
    """`tool_heavy`: the sessions of acm_benchmarks.toolsessions (one domain per n in turn), as generated."""
    from rich.console import Console
    from rich.table import Table

    from acm.adapters.tokenizer import TiktokenCounter
    from acm.domain.compaction.engine import Rules
    from acm_benchmarks import simulate, toolsessions
    from acm_benchmarks.retention import compaction_stats, window_maxima

    console = Console(soft_wrap=True)
    counter = TiktokenCounter()
    rules = Rules(budget_tokens=WINDOW)
    t0 = time.perf_counter()
    cumulative: dict[str, dict[str, int]] = {s: {} for s in SYSTEMS}
    acm_prompt: dict[str, int] = {}
    acm_work: dict[str, int] = {}
    mean_turn: dict[str, float] = {}
    results: list[Any] = []
    latencies: list[float] = []
    windows: dict[str, dict[str, Any]] = {}
    for i, n in enumerate(ns):
        if tool_heavy:
            session = toolsessions.generate(toolsessions.KINDS[i % len(toolsessions.KINDS)], n, seed * 1000 + n)
        else:
            session = generate(
                KINDS[i % len(KINDS)], n, seed * 1000 + n, entities=8, turn_tokens=TURN_TOKENS, count=counter.count
            )
        turns = simulate.session_turns(session.turns, counter)
        mean_turn[str(n)] = round(sum(t.tokens for t in turns) / n, 1)
        runs = {
            "append_all": simulate.append_all(turns),
            "truncation": simulate.truncation(turns, WINDOW),
            "acm": simulate.acm(turns, rules, counter),
        }
        for name, r in runs.items():
            cumulative[name][str(n)] = sum(r.prompt_tokens) + r.extra_tokens
        acm_prompt[str(n)] = sum(runs["acm"].prompt_tokens)
        acm_work[str(n)] = runs["acm"].extra_tokens
        results += runs["acm"].compactions
        latencies += runs["acm"].latencies_ms
        windows[str(n)] = {"kind": session.kind, "max_turn_tokens": max(t.tokens for t in turns)}
        windows[str(n)] |= window_maxima(runs["acm"], WINDOW)
        console.print(
            f"n={n} ({session.kind}): mean turn {mean_turn[str(n)]} tokens; cumulative "
            + ", ".join(f"{s} {cumulative[s][str(n)]:,}" for s in SYSTEMS)
            + f"; acm max working context {windows[str(n)]['max_working_tokens']:,} / {WINDOW:,}"
            + f" [{time.perf_counter() - t0:.0f} s]"
        )
    bound = {str(n): int(1.1 * n * WINDOW) for n in ns}
    systems: dict[str, Any] = {name: {"cumulative_tokens": cumulative[name]} for name in SYSTEMS}
    for name in ("truncation", "acm"):
        systems[name]["ratio_to_append_all"] = {
            k: round(v / cumulative["append_all"][k], 4) for k, v in cumulative[name].items()
        }
        systems[name]["saving_vs_append_all_pct"] = {
            k: round(100 * (1 - v / cumulative["append_all"][k]), 2) for k, v in cumulative[name].items()
        }
    systems["acm"]["prompt_tokens"] = acm_prompt
    systems["acm"]["compaction_work_tokens"] = acm_work
    systems["acm"]["per_turn_over_nW"] = {k: round(v / (int(k) * WINDOW), 3) for k, v in cumulative["acm"].items()}
    systems["acm"]["within_1_1_nW"] = {k: cumulative["acm"][k] <= bound[k] for k in bound}
    systems["acm"]["compaction"] = compaction_stats(results, latencies)
    # Per session: the working context (after each turn's compaction) and the prompt, against W.
    systems["acm"]["window"] = windows
    result = {
        "systems": systems,
        "run": {
            "window_tokens": WINDOW,
            "turn_tokens_target": TURN_TOKENS,
            "mean_turn_tokens": mean_turn,
            "linear_bound_1_1_nW": bound,
            "paper_append_all": {} if tool_heavy else {str(k): v for k, v in PAPER_APPEND_ALL.items() if k in ns},
            "generator": "toolsessions" if tool_heavy else "workflows",
            "seed": seed,
            "encoding": "cl100k_base",
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "duration_s": round(time.perf_counter() - t0, 1),
        },
    }
    table = Table(title=f"cumulative prompt tokens, W = {WINDOW:,}{', tool-heavy sessions' if tool_heavy else ''}")
    columns = ("n", "append_all", "paper append_all", "truncation", "acm", "acm / append_all", "1.1·n·W")
    for col in (*columns, "acm max working", "acm max prompt"):
        table.add_column(col, justify="right")
    for n in ns:
        k = str(n)
        table.add_row(
            k,
            f"{cumulative['append_all'][k]:,}",
            f"{PAPER_APPEND_ALL.get(n, 0):,}" if not tool_heavy else "-",
            f"{cumulative['truncation'][k]:,}",
            f"{cumulative['acm'][k]:,}",
            f"{systems['acm']['ratio_to_append_all'][k]:.2%}",
            f"{bound[k]:,}",
            f"{windows[k]['max_working_tokens']:,}{' ✓' if windows[k]['working_within_budget'] else ' over'}",
            f"{windows[k]['max_prompt_tokens']:,}",
        )
    console.width = max(console.width, 140)  # a pipe's 80 columns would cut the cells
    console.print(table)
    c = systems["acm"]["compaction"]
    console.print(
        f"acm compactions {c['compactions']}: p50 {c['latency_p50_ms']} ms, p95 {c['latency_p95_ms']} ms, "
        f"verification failures {c['verification_failure_rate_pct']} %"
    )
    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result, indent=2) + "\n")
        console.print(f"wrote {json_out}")
    if plot_out and write_plot(result, plot_out):
        console.print(f"wrote {plot_out}")
    return result


def write_plot(result: dict[str, Any], path: Path) -> bool:
    plt = pyplot()
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    for name in SYSTEMS:
        points = sorted((int(k), v) for k, v in result["systems"][name]["cumulative_tokens"].items())
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=name)
    bound = sorted((int(k), v) for k, v in result["run"]["linear_bound_1_1_nW"].items())
    ax.plot([p[0] for p in bound], [p[1] for p in bound], linestyle="--", color="grey", label="1.1·n·W")
    ax.set_xlabel("turns in the session (n)")
    ax.set_ylabel("cumulative prompt tokens")
    ax.set_yscale("log")
    sessions = ", tool-heavy sessions" if result["run"].get("generator") == "toolsessions" else ""
    ax.set_title(f"Cumulative prompt tokens, W = {result['run']['window_tokens']:,}{sessions} (log scale)")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
