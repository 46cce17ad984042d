"""Run one generated session through three context strategies, turn by turn, as an agent would:

- ``truncation``: the newest turns that fit the window (a sliding window);
- ``summary_unverified``: a rolling summary with no pinned state and no verifier (each older turn cut to
  its gist: its first sentence, a tool output to "called <tool>"), capped like ACM's summary, plus the
  newest turns;
- ``acm_lossy_drafts``: the same, but every first attempt is the lossy gist summary (standing in for an
  unfaithful LLM), so the verifier must reject it and back off;
- ``acm``: ACM's compaction engine (acm.domain.compaction) at the agent schema's defaults: soft limit →
  verified compaction; the context is assembled by the same code Fetch uses (without retrieved memories).

Each returns the context the model would see after the last turn (as segments: pinned lines, summary
lines, turns) and the tokens of every prompt along the way."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from acm.domain.compaction import atoms as A
from acm.domain.compaction.engine import (
    CompactionResult,
    Rules,
    SessionTurn,
    WorkingMemory,
    compact,
    fill,
    first_cut,
    plan_context,
    summary_text,
    working_tokens,
)
from acm.domain.compaction.noise import clean
from acm.domain.identifiers import identifiers
from acm.domain.models import Role
from acm.domain.records import tool_records
from acm.domain.tokens import TokenCounter
from acm_benchmarks.workflows import GenTurn
from acm_ingest.pipeline import stored_view
from acm_ingest.usecases import COMPACTION_STEP

T0 = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)


@dataclass
class Run:
    segments: list[str] = field(default_factory=list)  # the final context, in prompt order
    context_tokens: int = 0
    prompt_tokens: list[int] = field(default_factory=list)  # per turn
    extra_tokens: int = 0  # compaction / summarisation work (what a model would read and write)
    compactions: list[CompactionResult] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    notice: str = ""
    # The session's working context (pins shown, summary, turns) after each turn, compaction done: what must
    # stay within the budget for the whole session. Empty for the systems that keep no working memory.
    working_tokens: list[int] = field(default_factory=list)
    notices: int = 0  # turns whose assembled context had to degrade


def session_turns(turns: Sequence[GenTurn], counter: TokenCounter) -> list[SessionTurn]:
    out = []
    for i, t in enumerate(turns):
        speaker = t.role if t.role != "tool" else f"tool[{t.tool_name}]"
        text = f"{speaker}: {t.text}"
        out.append(
            SessionTurn(f"t{i}", t.role, text, counter.count(text), T0 + timedelta(minutes=i), t.tool_name, speaker)
        )
    return out


def as_stored(turn: SessionTurn, counter: TokenCounter, named: frozenset[str] = frozenset()) -> SessionTurn:
    """The turn as ACM's ingest keeps it in the session (acm_ingest.pipeline.shown_turn): a tool's JSON as its
    records one a line, at most MAX_TURN_WEIGHT characters (every record and sentence is also a memory, which
    this simulation, having no stores, leaves out)."""
    body = turn.body
    role = Role(turn.role) if turn.role in {r.value for r in Role} else Role.USER
    view = stored_view(role, body, tool_records(body) if role is Role.TOOL else [], named)
    text = f"{turn.speaker}: {view}" if turn.speaker else view
    return replace(turn, text=text, tokens=counter.count(text))


def truncation(turns: Sequence[SessionTurn], budget: int) -> Run:
    run = Run()
    window: list[SessionTurn] = []
    for turn in turns:
        window.append(turn)
        while window and sum(t.tokens for t in window) > budget:
            window.pop(0)
        run.prompt_tokens.append(sum(t.tokens for t in window))
    run.segments = [t.text for t in window]
    run.context_tokens = run.prompt_tokens[-1] if run.prompt_tokens else 0
    return run


def append_all(turns: Sequence[SessionTurn]) -> Run:
    run = Run()
    total = 0
    for turn in turns:
        total += turn.tokens
        run.prompt_tokens.append(total)
    run.segments = [t.text for t in turns]
    run.context_tokens = total
    return run


def _gist(turn: SessionTurn) -> str:
    if turn.role == "tool":
        return f"called {turn.tool_name or 'a tool'}"
    first = A.sentences(clean(turn.body))[:1]
    words = first[0].split()[:25] if first else []
    return f"{turn.speaker or turn.role}: {' '.join(words)}" if words else ""


def summary_unverified(turns: Sequence[SessionTurn], rules: Rules, counter: TokenCounter) -> Run:
    run = Run()
    lines: list[str] = []
    window: list[SessionTurn] = []
    cap = int(rules.budget_tokens * rules.summary_ratio)
    for turn in turns:
        window.append(turn)
        if counter.count(summary_text(lines)) + sum(t.tokens for t in window) >= rules.soft_limit:
            start = time.perf_counter()
            target = int(rules.budget_tokens * rules.target_ratio)
            keep: list[SessionTurn] = []
            for t in reversed(window):
                if len(keep) >= rules.recent_turns_verbatim or sum(k.tokens for k in keep) + t.tokens > target:
                    break
                keep.insert(0, t)
            old = window[: len(window) - len(keep)]
            run.extra_tokens += sum(t.tokens for t in old) + counter.count(summary_text(lines))
            lines += [g for g in (_gist(t) for t in old) if g]
            while lines and counter.count(summary_text(lines)) > cap:
                lines.pop(0)  # a rolling summary forgets its oldest part
            run.extra_tokens += counter.count(summary_text(lines))
            window = keep
            run.latencies_ms.append((time.perf_counter() - start) * 1000)
        shown = list(window)
        while shown and counter.count(summary_text(lines)) + sum(t.tokens for t in shown) > rules.budget_tokens:
            shown.pop(0)
        run.prompt_tokens.append(counter.count(summary_text(lines)) + sum(t.tokens for t in shown))
        run.segments = [*lines, *(t.text for t in shown)]
    run.context_tokens = run.prompt_tokens[-1] if run.prompt_tokens else 0
    return run


def lossy_draft(memory: WorkingMemory, tail: Sequence[SessionTurn], rules: Rules, counter: TokenCounter) -> list[str]:
    """What an unfaithful summariser would write for the first span: the gist lines of summary_unverified."""
    span = [*memory.recent, *tail][: first_cut(memory, tail, rules, counter)]
    return [g for g in (_gist(t) for t in span) if g]


def acm(turns: Sequence[SessionTurn], rules: Rules, counter: TokenCounter, lossy_drafts: bool = False) -> Run:
    """ACM's engine; with ``lossy_drafts`` every first attempt is a lossy draft (as a careless LLM would write),
    so the verifier has to catch it and back off."""
    run = Run()
    memory = WorkingMemory()
    tail: list[SessionTurn] = []
    due = 0  # as ingest asks: over the soft limit, again each time the context grew by a tenth of the budget
    for i, raw in enumerate(turns):
        # As ingest reads a tool output against the session's latest user and agent turns.
        named = frozenset(x for t in turns[max(0, i - 8) : i] if t.role != "tool" for x in identifiers(t.text))
        turn = as_stored(raw, counter, named)
        tail.append(turn)
        working = working_tokens(memory, tail, counter, rules)
        if working >= max(rules.soft_limit, due):
            start = time.perf_counter()
            draft = lossy_draft(memory, tail, rules, counter) if lossy_drafts else None
            result = compact(memory, tail, rules, counter, draft)
            run.latencies_ms.append((time.perf_counter() - start) * 1000)
            run.compactions.append(result)
            run.extra_tokens += result.work_tokens
            due = working + max(int(rules.budget_tokens * COMPACTION_STEP), 1)
            if result.memory is not None:
                memory, tail, due = result.memory, [], 0
        plan = fill(plan_context(memory, tail, rules.budget_tokens, counter, rules=rules), memory, tail, 0, counter)
        run.prompt_tokens.append(plan.used)
        run.working_tokens.append(working_tokens(memory, tail, counter, rules))
        run.segments = [
            *(e.render() for e in plan.pins),  # the pins the context shows (within the cap)
            *plan.summary_lines,
            *(t.text for t in plan.recent),
        ]
        run.notice = plan.notice()
        run.notices += bool(run.notice)
    run.context_tokens = run.prompt_tokens[-1] if run.prompt_tokens else 0
    return run
