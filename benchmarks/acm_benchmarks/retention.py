"""`acm bench retention`: are the planted facts still in the context after a long enterprise session?

    acm bench retention --json results/retention.json [--sessions 8] [--quick] [--tool-heavy]

Sessions come from a seeded generator (acm_benchmarks.workflows: procurement approvals, support tickets,
incident response, deployments; 200-500 turns; facts early and late, in prose and buried in noisy tool
outputs, some superseded later). Each session runs through truncation, a rolling summary without
verification, ACM, and ACM whose every first attempt is that lossy summary (acm_benchmarks.simulate);
after the last turn the context is assembled at a
4,000-token budget. Scores:
- retention: the share of the planted facts that are still current (entity, attribute, latest value)
  found in the context, the value in a segment (pinned line, summary line, turn) that names the entity;
- stale as current: of the (entity, attribute) pairs whose value changed, the share where the context
  presents an older value as the current one (the entity's pinned line if it has one, else the latest
  segment naming the entity and one of the values);
plus ACM's compaction latency (p50 / p95), verification failure rate and attempts, and per session the
largest prompt and ACM's largest working context (pins, summary, turns after each turn's compaction) against
the budget.

`--tool-heavy`: the sessions of acm_benchmarks.toolsessions instead (procurement, support, ops, orders: JSON
tool outputs of 5-20 records, a few of 20-60 KiB, ids of several formats, people with honorifics, record
fields changing over the session); a tool output lists many records, one per line, so there the scores
read each line as a segment and match ids whole. There `acm_fetch` is also scored: each session ingested
through a real embedded ACM (stores, automatic compaction, retrieval), then the session context a Fetch with
no query returns at the budget, the whole of it (pins, retrieved memories, summary, recent turns). The
simulated `acm` has no stores, so a fact that only a record memory keeps is never counted there; `acm_fetch`
counts a fact only when the context an agent gets states it. `--no-fetch` leaves it out.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from acm_benchmarks.workflows import KINDS, PlantedFact, Session, generate

SYSTEMS = ("acm", "acm_lossy_drafts", "summary_unverified", "truncation")
FETCHED = "acm_fetch"  # --tool-heavy: the context a real Fetch returns (fetch_contexts)
BUDGET = 4000
FETCH_T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class FetchedContext:
    context: str
    tokens: int
    notice: str
    errors: int  # ingest jobs that did not end DONE


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "retention",
        help="planted-fact retention after long sessions: ACM vs truncation vs summary",
        description="The share of planted facts still current in the context after long generated enterprise sessions: "
        "ACM vs truncation vs a rolling summary.",
    )
    p.add_argument("--json", dest="json_out", type=Path, help="write the results here")
    p.add_argument("--sessions", type=int, default=12, help="sessions (kinds in turn; default 12)")
    p.add_argument("--seed", type=int, default=2026, help="seed of the generated sessions (default 2026)")
    p.add_argument("--quick", action="store_true", help="2 short sessions (smoke test)")
    p.add_argument(
        "--tool-heavy",
        action="store_true",
        help="tool-heavy sessions instead (JSON records, ids of several formats, 20-60 KiB outputs), scored "
        "line by line, plus acm_fetch: the session context a Fetch returns through a real embedded ACM",
    )
    p.add_argument("--no-fetch", action="store_true", help="with --tool-heavy: leave acm_fetch out (no embedded ACM)")
    p.add_argument("--embedder", help="embedder of acm_fetch's embedded ACM (default: embedded ACM's)")
    p.add_argument(
        "--dump",
        type=Path,
        help="with --tool-heavy: write each acm_fetch context here, and for each stale pair the line and part "
        "(pinned, memories, summary, recent) that showed the older value",
    )
    p.set_defaults(run=run)


def _value_in(value: str, segment: str) -> bool:
    from acm.domain.compaction import atoms as A

    amounts = A.amounts(value)
    if amounts:
        return amounts[0][1] in {n for _raw, n in A.amounts(segment)}
    days = A.dates(value)
    if days:
        return days[0] in A.dates(segment)
    return re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", segment, re.IGNORECASE) is not None


def _names(entity: str, segment: str, exact: bool) -> bool:
    """Whether the segment names the entity; `exact`: as a whole id (INC-7 is not named by INC-70)."""
    if not exact:
        return entity in segment
    return re.search(rf"(?<![\w-]){re.escape(entity)}(?![\w-])", segment) is not None


def retained(fact: PlantedFact, segments: Sequence[str], exact: bool = False) -> bool:
    return any(_names(fact.entity, s, exact) and _value_in(fact.value, s) for s in segments)


def presented(entity: str, values: Sequence[str], segments: Sequence[str], exact: bool = False) -> str | None:
    """The value the context gives as current for the entity's attribute (see the module doc)."""
    pinned = [s for s in segments if s.startswith(f"{entity} (")]
    ordered = pinned or [s for s in reversed(segments) if _names(entity, s, exact)]
    for s in ordered:
        hits = [(s.lower().rfind(v.lower()), v) for v in values if _value_in(v, s)]
        if hits:
            return max(hits)[1]
    return None


def score(session: Session, segments: Sequence[str], by_line: bool = False) -> dict[str, int]:
    """`by_line` (tool-heavy sessions): each line of a segment is a segment of its own and ids match whole,
    since one tool output lists many records, one per line, with statuses and people in common."""
    if by_line:
        segments = [line for s in segments for line in s.splitlines() if line.strip()]
    current = [f for f in session.facts if f.current]
    history: dict[tuple[str, str], list[PlantedFact]] = {}
    for f in session.facts:
        history.setdefault((f.entity, f.attribute), []).append(f)
    changed = {k: v for k, v in history.items() if len({f.value for f in v}) > 1}
    stale = 0
    for (entity, _attr), facts in changed.items():
        now = next(f.value for f in facts if f.current)
        shown = presented(entity, [f.value for f in facts], segments, exact=by_line)
        if shown is not None and shown != now:
            stale += 1
    return {
        "current_facts": len(current),
        "retained": sum(retained(f, segments, exact=by_line) for f in current),
        "changed_pairs": len(changed),
        "stale_presented": stale,
    }


def _pct(a: float, b: float) -> float | None:
    return round(100 * a / b, 1) if b else None


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return round(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo), 2)


def window_maxima(run: Any, budget: int) -> dict[str, Any]:
    """A session's largest prompt and, for a system with a working memory, its largest working context (after
    each turn's compaction), against the budget."""
    out: dict[str, Any] = {"max_prompt_tokens": max(run.prompt_tokens, default=0)}
    if run.working_tokens:
        out["max_working_tokens"] = max(run.working_tokens)
        out["working_within_budget"] = out["max_working_tokens"] <= budget
        out["turns_working_over_budget"] = sum(1 for t in run.working_tokens if t > budget)
        out["notices"] = run.notices
    return out


def compaction_stats(results: Sequence[Any], latencies: Sequence[float]) -> dict[str, Any]:
    n = len(results)
    failed = sum(1 for r in results if not r.verified)
    retried = sum(1 for r in results if r.attempts > 1 or not r.verified)
    return {
        "compactions": n,
        "latency_p50_ms": percentile(latencies, 50),
        "latency_p95_ms": percentile(latencies, 95),
        "verification_failure_rate_pct": _pct(failed, n),
        "first_attempt_rejected_pct": _pct(retried, n),
        "mean_ratio": round(sum(r.ratio for r in results) / n, 3) if n else None,
        "outcomes": {o: sum(1 for r in results if r.outcome == o) for o in sorted({r.outcome for r in results})},
    }


async def run(args: argparse.Namespace) -> None:
    sessions = (4 if args.tool_heavy else 2) if args.quick else args.sessions
    fetched = None
    if args.tool_heavy and not args.no_fetch:
        generated = [s for _kind, _n, s in generate_sessions(sessions, args.seed, args.quick, tool_heavy=True)]
        # --dump keeps the embedded ACM's data folder, to say where each missing fact lives (explain_missing)
        kept = args.dump / "data" if args.dump else None
        fetched = await fetch_contexts(generated, BUDGET, args.embedder, data_dir=kept)
    run_benchmark(args.json_out, sessions, args.seed, quick=args.quick, tool_heavy=args.tool_heavy, fetched=fetched)
    if fetched is not None and args.dump:
        dump_stale(args.dump, generated, fetched)


def generate_sessions(sessions: int, seed: int, quick: bool, tool_heavy: bool) -> list[tuple[str, int, Session]]:
    """The seeded sessions: (kind, turns, session), kinds in turn."""
    import random

    from acm_benchmarks import toolsessions

    rng = random.Random(seed)
    kinds = toolsessions.KINDS if tool_heavy else KINDS
    make: Callable[..., Session] = toolsessions.generate if tool_heavy else generate
    out = []
    for i in range(sessions):
        kind = kinds[i % len(kinds)]
        n = 400 if quick else rng.randint(200, 500)  # quick: still enough turns for compaction to run
        out.append((kind, n, make(kind, n, seed * 1000 + i, entities=4 if quick else 8)))
    return out


FETCH_ENCODING = "cl100k_base"  # as the simulated systems count
PART_HEADERS = {"Relevant memories:": "memories", "Summary of earlier turns:": "summary", "Recent turns:": "recent"}


def explain_stale(session: Session, context: str) -> list[str]:
    """Each (entity, attribute) the context shows an older value of, as `score` judges it: its values in the
    order said (turn index), the value shown, and the part and line that show it."""
    lines: list[tuple[str, str]] = []
    part = "pinned"
    for block in context.split("\n\n"):
        part = next((name for head, name in PART_HEADERS.items() if block.startswith(head)), part)
        lines += [(part, line.removeprefix("- ")) for line in block.splitlines() if line.strip()]
    segments = [line for _part, line in lines]
    history: dict[tuple[str, str], list[PlantedFact]] = {}
    for f in session.facts:
        history.setdefault((f.entity, f.attribute), []).append(f)
    out = []
    for (entity, attribute), facts in history.items():
        values = [f.value for f in facts]
        now = next(f.value for f in facts if f.current)
        shown = presented(entity, values, segments, exact=True)
        if len(set(values)) < 2 or shown is None or shown == now:
            continue
        pinned = [s for s in segments if s.startswith(f"{entity} (")]
        ordered = pinned or [s for s in reversed(segments) if _names(entity, s, True)]
        line = next(s for s in ordered if any(_value_in(v, s) for v in values))
        said = [(f.turn, f.value) for n, f in enumerate(facts) if n == 0 or facts[n - 1].value != f.value]
        where = next(p for p, text in reversed(lines) if text == line)
        out.append(f"{entity}.{attribute}: shown {shown!r}, current {now!r}; said {said}\n  {where}: {line}")
    return out


def dump_stale(folder: Path, sessions: Sequence[Session], fetched: Sequence[FetchedContext]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i, (session, got) in enumerate(zip(sessions, fetched, strict=True)):
        (folder / f"acm_fetch-{i}.txt").write_text(f"{got.context}\n\n[notice] {got.notice}\n")
        stale = explain_stale(session, got.context)
        (folder / f"stale-{i}.txt").write_text("".join(f"{s}\n" for s in stale))
        missing = explain_missing(session, got.context, folder / "data", f"session-{i}")
        (folder / f"missing-{i}.txt").write_text("".join(f"{m}\n" for m in missing))
        facts = sum(not m.startswith(" ") for m in missing)  # a fact's first line; its details are indented
        print(f"session {i + 1}: {len(stale)} stale pairs shown, {facts} current facts missing ({folder})")


def explain_missing(session: Session, context: str, data_dir: Path, session_id: str) -> list[str]:
    """Each current fact the context lacks (as `score` judges it): the turn that said it last, and where it
    lives in the kept stores: ingest's memories naming the entity and holding the value (layer, status,
    superseded_by, kind, slot), and compact's pinned line of the entity, if any."""
    import sqlite3

    segments = [line.removeprefix("- ") for block in context.splitlines() for line in [block] if line.strip()]
    out = []
    for fact in session.facts:
        if not fact.current or retained(fact, segments, exact=True):
            continue
        turn = session.turns[fact.turn]
        head = f"{fact.entity}.{fact.attribute} = {fact.value!r}: said at turn {fact.turn} ({turn.role}"
        out.append(head + (f" {turn.tool_name})" if turn.tool_name else ")"))
        out += [f"  context line naming it: {s[:300]}" for s in segments if _names(fact.entity, s, True)][:5]
        ingest, compact = data_dir / "ingest.db", data_dir / "compact.db"
        if ingest.exists():
            with sqlite3.connect(f"file:{ingest}?mode=ro", uri=True) as db:
                rows = db.execute(
                    "SELECT layer, status, kind, slot, superseded_by <> '', created_at, text FROM memories "
                    "WHERE session_id = ? AND instr(text, ?) > 0 ORDER BY created_at",
                    (session_id, fact.entity),
                ).fetchall()
            held = [r for r in rows if _value_in(fact.value, r[6]) and _names(fact.entity, r[6], True)]
            out.append(f"  ingest: {len(rows)} memories name it, {len(held)} with the value")
            for layer, status, kind, slot, superseded, at, text in held[-4:]:
                flat = " ".join(text.split())[:240]
                out.append(f"    [{layer} {status} {kind} slot={slot} superseded={superseded} {at}] {flat}")
        if compact.exists():
            with sqlite3.connect(f"file:{compact}?mode=ro", uri=True) as db:
                bodies = [
                    b for (b,) in db.execute("SELECT body FROM working_memory WHERE session_id = ?", (session_id,))
                ]
            for body in bodies:
                hits = [line.strip()[:300] for line in re.split(r"\\n|\n", body) if fact.entity in line]
                out.append(f"  compact working memory: {len(hits)} pieces name it")
                out += [f"    {h}" for h in hits[:3]]
    return out


async def fetch_contexts(
    sessions: Sequence[Session], budget: int, embedder: str | None = None, data_dir: Path | None = None
) -> list[FetchedContext]:
    """Each session ingested turn by turn (user, assistant and tool turns, with their tool names) into one
    embedded ACM, every job done and every consumer caught up, then the session context a Fetch with no query
    returns at ``budget``. `data_dir`: the embedded ACM's folder, kept (a temporary one otherwise)."""
    import asyncio
    import contextlib
    import tempfile

    from acm.client import AcmClient
    from acm.v1 import common_pb2, gateway_pb2
    from acm_benchmarks.locomo import wait_until_indexed
    from acm_benchmarks.traces import Message, ingest_message
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

    out: list[FetchedContext] = []
    t0 = time.perf_counter()
    if data_dir is not None:
        await asyncio.to_thread(
            data_dir.mkdir, parents=True, exist_ok=False
        )  # a fresh folder: an old one's sessions would mix in
    folder = contextlib.nullcontext(str(data_dir)) if data_dir else tempfile.TemporaryDirectory(prefix="acm-retention-")
    with folder as where:
        settings = EmbeddedSettings(
            data_dir=Path(where),
            listen_addr="127.0.0.1:0",
            embedder=embedder or str(EmbeddedSettings.model_fields["embedder"].default),
        )
        async with (
            EmbeddedAcm(settings) as acm,
            AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=300) as client,
        ):
            for i, session in enumerate(sessions):
                scope = common_pb2.Scope(
                    customer_id="retention", user_id=f"user-{i}", agent_id="agent", session_id=f"session-{i}"
                )
                jobs = []
                for j, turn in enumerate(session.turns):
                    message = Message(turn.role, turn.text, turn.tool_name)
                    jobs.append(
                        await ingest_message(client, scope, message, f"s{i}:{j}", FETCH_T0 + timedelta(minutes=j))
                    )
                errors = 0
                for job_id in jobs:
                    job = await client.wait_job(scope, job_id, timeout_s=600)
                    errors += job.status != gateway_pb2.JOB_STATUS_DONE
                await wait_until_indexed(acm)
                response = await client.fetch(scope, "", budget, FETCH_ENCODING)
                out.append(FetchedContext(response.context, response.context_tokens, response.notice, errors))
                took = time.perf_counter() - t0
                print(f"acm_fetch: session {i + 1}/{len(sessions)} ingested and fetched [{took:.0f} s]", flush=True)
    return out


def run_benchmark(
    json_out: Path | None,
    sessions: int,
    seed: int,
    quick: bool = False,
    tool_heavy: bool = False,
    fetched: Sequence[FetchedContext] | None = None,
) -> dict[str, Any]:
    """`tool_heavy`: sessions of acm_benchmarks.toolsessions (one per domain in turn), scored line by line.
    ``fetched``: the session contexts fetch_contexts returned for the same sessions, scored as acm_fetch."""
    from rich.console import Console
    from rich.table import Table

    from acm.adapters.tokenizer import TiktokenCounter
    from acm.domain.compaction.engine import Rules
    from acm_benchmarks import simulate

    console = Console(soft_wrap=True)
    counter = TiktokenCounter()
    rules = Rules(budget_tokens=BUDGET)
    t0 = time.perf_counter()
    names = (*SYSTEMS, FETCHED) if fetched is not None else SYSTEMS
    totals = {s: {"current_facts": 0, "retained": 0, "changed_pairs": 0, "stale_presented": 0} for s in names}
    tokens: dict[str, list[int]] = {s: [] for s in names}
    results: list[Any] = []
    latencies: list[float] = []
    lossy_results: list[Any] = []
    lossy_latencies: list[float] = []
    per_session = []
    for i, (kind, n, session) in enumerate(generate_sessions(sessions, seed, quick, tool_heavy)):
        turns = simulate.session_turns(session.turns, counter)
        runs = {
            "truncation": simulate.truncation(turns, BUDGET),
            "summary_unverified": simulate.summary_unverified(turns, rules, counter),
            "acm": simulate.acm(turns, rules, counter),
            "acm_lossy_drafts": simulate.acm(turns, rules, counter, lossy_drafts=True),
        }
        row: dict[str, Any] = {"kind": kind, "turns": n, "session_tokens": sum(t.tokens for t in turns)}
        for name, r in runs.items():
            s = score(session, r.segments, by_line=tool_heavy)
            for k, v in s.items():
                totals[name][k] += v
            tokens[name].append(r.context_tokens)
            row[name] = {**s, "context_tokens": r.context_tokens, **window_maxima(r, BUDGET)}
        if fetched is not None:
            got = fetched[i]
            # Line by line, each without the context's "- " bullet: a pin's line then starts with its key, as the
            # simulated systems' pins do (`presented` reads an entity's pinned line first).
            s = score(session, [line.removeprefix("- ") for line in got.context.splitlines()], by_line=tool_heavy)
            for k, v in s.items():
                totals[FETCHED][k] += v
            tokens[FETCHED].append(got.tokens)
            row[FETCHED] = {**s, "context_tokens": got.tokens, "notice": got.notice, "ingest_errors": got.errors}
        results += runs["acm"].compactions
        latencies += runs["acm"].latencies_ms
        lossy_results += runs["acm_lossy_drafts"].compactions
        lossy_latencies += runs["acm_lossy_drafts"].latencies_ms
        per_session.append(row)
        console.print(
            f"session {i + 1}/{sessions} {kind}, {n} turns, {row['session_tokens']} tokens: retention "
            + ", ".join(f"{s} {_pct(row[s]['retained'], row[s]['current_facts'])} %" for s in names)
            + f" [{time.perf_counter() - t0:.0f} s]"
        )
    systems: dict[str, dict[str, Any]] = {
        name: {
            "retention_pct": _pct(t["retained"], t["current_facts"]),
            "stale_presented_as_current_pct": _pct(t["stale_presented"], t["changed_pairs"]),
            "current_facts": t["current_facts"],
            "retained": t["retained"],
            "changed_pairs": t["changed_pairs"],
            "stale_presented": t["stale_presented"],
            "mean_context_tokens": round(sum(tokens[name]) / len(tokens[name]), 1) if tokens[name] else None,
        }
        for name, t in totals.items()
    }
    if fetched is not None:
        systems[FETCHED]["max_prompt_tokens"] = max(tokens[FETCHED], default=None)
        systems[FETCHED]["ingest_errors"] = sum(f.errors for f in fetched)
    for name in SYSTEMS:
        rows = [row[name] for row in per_session]
        systems[name]["max_prompt_tokens"] = max((r["max_prompt_tokens"] for r in rows), default=None)
        if name.startswith("acm"):
            systems[name]["max_working_tokens"] = max((r["max_working_tokens"] for r in rows), default=None)
            systems[name]["sessions_working_within_budget"] = sum(r["working_within_budget"] for r in rows)
    systems["acm"]["compaction"] = compaction_stats(results, latencies)
    systems["acm_lossy_drafts"]["compaction"] = compaction_stats(lossy_results, lossy_latencies)
    result = {
        "systems": systems,
        "sessions": per_session,
        "run": {
            "budget_tokens": BUDGET,
            "generator": "toolsessions" if tool_heavy else "workflows",
            "scored": "by line, whole ids" if tool_heavy else "by segment",
            **({"acm_fetch": "the session context of a Fetch with no query, embedded ACM"} if fetched else {}),
            "sessions": sessions,
            "seed": seed,
            "rules": {
                k: getattr(rules, k)
                for k in ("soft_ratio", "hard_ratio", "recent_turns_verbatim", "target_ratio", "summary_ratio")
            },
            "encoding": "cl100k_base",
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "duration_s": round(time.perf_counter() - t0, 1),
        },
    }
    title = f"fact retention at a {BUDGET}-token context, {sessions} {'tool-heavy ' if tool_heavy else ''}sessions"
    table = Table(title=title)
    columns = ("system", "retention %", "stale as current %", "context tokens", "max prompt", "max working")
    for col in (*columns, "sessions working ≤ budget"):
        table.add_column(col, justify="left" if col == "system" else "right")
    for name in names:
        s = systems[name]
        table.add_row(
            name,
            str(s["retention_pct"]),
            str(s["stale_presented_as_current_pct"]),
            str(s["mean_context_tokens"]),
            str(s["max_prompt_tokens"]),
            str(s.get("max_working_tokens", "-")),
            f"{s['sessions_working_within_budget']}/{sessions}" if "sessions_working_within_budget" in s else "-",
        )
    console.width = max(console.width, 120)  # a pipe's 80 columns would cut the cells
    console.print(table)
    for name in ("acm", "acm_lossy_drafts"):
        c = systems[name]["compaction"]
        console.print(
            f"{name} compactions: {c['compactions']}, latency p50 {c['latency_p50_ms']} ms / p95 "
            f"{c['latency_p95_ms']} ms, verification failures {c['verification_failure_rate_pct']} %, first attempt "
            f"rejected {c['first_attempt_rejected_pct']} %, outcomes {c['outcomes']}"
        )
    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result, indent=2) + "\n")
        console.print(f"wrote {json_out}")
    return result
