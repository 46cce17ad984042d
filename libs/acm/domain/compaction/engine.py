"""Compaction with verification and back-off, and the assembly of a session's context in a budget.

Working memory = pinned state + episodic summary + recent turns kept verbatim. A compaction replaces the
oldest working turns (the span) by pinned facts and summary lines; the verifier must accept the result,
else it backs off (pins the missing atoms, then keeps more turns verbatim). The caller swaps the new
working memory in atomically, and only when the result is verified."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any

from acm.domain.compaction import atoms as A
from acm.domain.compaction import pinned as P
from acm.domain.compaction.summary import SpanTurn, span_turn, summarise
from acm.domain.compaction.verify import Verdict, verify
from acm.domain.errors import TooLarge
from acm.domain.tokens import TokenCounter


class ContextDoesNotFit(TooLarge):
    """Even the degraded context (the pinned state, which is never dropped) exceeds the budget."""

    def __init__(self, needed: int, budget: int, detail: str) -> None:
        super().__init__(f"the session's context needs at least {needed} tokens but the budget is {budget}: {detail}")
        self.needed = needed
        self.budget = budget


@dataclass(frozen=True, slots=True)
class SessionTurn:
    turn_id: str
    role: str  # user, assistant, tool, system
    text: str  # as stored (verbatim)
    tokens: int
    at: datetime
    tool_name: str = ""
    speaker: str = ""  # the "<speaker>: " prefix of text, when it has one

    @property
    def body(self) -> str:
        prefix = f"{self.speaker}: "
        return self.text[len(prefix) :] if self.speaker and self.text.startswith(prefix) else self.text


@dataclass(frozen=True, slots=True)
class Rules:
    budget_tokens: int = 4000
    soft_ratio: float = 0.7
    hard_ratio: float = 1.0
    recent_turns_verbatim: int = 6
    target_ratio: float = 0.45  # what a compaction aims for, leaving room for the next turns
    summary_ratio: float = 0.25  # above this share of the budget, summary lines already pinned are folded
    max_attempts: int = 3
    pinned_fields: tuple[str, ...] = ()  # the agent schema's fields pinned wherever a turn states them
    pinned_max_tokens: int = 600  # the pinned state's cap: lower-ranked pins are left to the memories
    pinned_max_entities: int = 40
    entity_types: tuple[str, ...] = ()  # the schema's entity types rank first among pins

    @property
    def soft_limit(self) -> int:
        return int(self.budget_tokens * self.soft_ratio)

    @property
    def hard_limit(self) -> int:
        return int(self.budget_tokens * self.hard_ratio)


@dataclass(frozen=True, slots=True)
class WorkingMemory:
    version: int = 0
    pinned: P.PinnedState = field(default_factory=P.PinnedState)
    episodes: tuple[str, ...] = ()
    recent: tuple[SessionTurn, ...] = ()
    through_at: datetime | None = None  # the newest turn this memory covers
    through_ids: tuple[str, ...] = ()  # covered turns stamped exactly through_at
    turns_compacted: int = 0

    def covers(self, turn: SessionTurn) -> bool:
        if self.through_at is None:
            return False
        return turn.at < self.through_at or (turn.at == self.through_at and turn.turn_id in self.through_ids)

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=_iso, sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> WorkingMemory:
        d = json.loads(raw)
        entities = {
            k: P.PinnedEntity(
                key=e["key"],
                type=e["type"],
                attributes=dict(e["attributes"]),
                source_turn_ids=tuple(e["source_turn_ids"]),
                updated_at=_dt(e["updated_at"]),
                acts=e.get("acts", 0),  # stored before pins counted acts
                stated_at={k: datetime.fromisoformat(t) for k, t in e.get("stated_at", {}).items()},
            )
            for k, e in d["pinned"]["entities"].items()
        }
        recent = tuple(SessionTurn(**{**t, "at": datetime.fromisoformat(t["at"])}) for t in d["recent"])
        return cls(
            version=d["version"],
            pinned=P.PinnedState(entities),
            episodes=tuple(d["episodes"]),
            recent=recent,
            through_at=_dt(d["through_at"]),
            through_ids=tuple(d["through_ids"]),
            turns_compacted=d["turns_compacted"],
        )


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


@dataclass(frozen=True, slots=True)
class CompactionResult:
    outcome: str  # compacted, unchanged, degraded, failed
    memory: WorkingMemory | None  # what to swap in (None: keep the current one)
    tokens_before: int
    tokens_after: int
    verified: bool
    attempts: int
    missing: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = ()
    turns_replaced: int = 0
    turns_verbatim: int = 0
    message: str = ""
    work_tokens: int = 0  # tokens read and written by the compaction (its cost if a model did it)
    folded: int = 0

    @property
    def ratio(self) -> float:
        return self.tokens_after / self.tokens_before if self.tokens_before else 1.0


def pinned_text(state: P.PinnedState) -> str:
    """Every pin, rendered: what the verifier checks (a pin left out of a context is still stored)."""
    return state.render()


def shown_pinned(
    state: P.PinnedState,
    rules: Rules,
    counter: TokenCounter,
    cap: int | None = None,
    hints: frozenset[str] = frozenset(),
) -> P.Shown:
    """The pins a context shows: the highest-ranked within the schema's cap (and ``cap``, when smaller)."""
    share = int(rules.budget_tokens * PINNED_SHARE)  # as a Fetch at the session's own budget shows them
    limit = min(share if cap is None else cap, rules.pinned_max_tokens)
    return state.within(counter.count, max(limit, 0), rules.pinned_max_entities, rules.entity_types, hints)


def summary_text(lines: Sequence[str]) -> str:
    return ("Summary of earlier turns:\n" + "\n".join(f"- {line}" for line in lines)) if lines else ""


def working_tokens(
    memory: WorkingMemory, tail: Sequence[SessionTurn], counter: TokenCounter, rules: Rules | None = None
) -> int:
    """The working context's size: the pins shown (within the schema's cap), the summary and the turns."""
    pinned = shown_pinned(memory.pinned, rules or Rules(), counter).tokens
    fixed = pinned + counter.count(summary_text(memory.episodes))
    return fixed + sum(t.tokens for t in memory.recent) + sum(t.tokens for t in tail)


def _span(turns: Sequence[SessionTurn]) -> list[SpanTurn]:
    return [span_turn(t.turn_id, t.role, t.tool_name, t.body, t.speaker) for t in turns]


def _atoms(span: Sequence[SpanTurn]) -> set[A.Atom]:
    """The atoms the compacted context must keep. Of a tool's output only the tool → result pair: the records
    it returned are memories of their own (one per record, written by ingest), so the pinned state and the
    summary need not carry every SKU of an inventory."""
    out: set[A.Atom] = set()
    for t in span:
        if t.role == "tool":
            out |= {a for a in A.turn_atoms(t.role, t.tool_name, t.text) if a.kind == "tool"}
        else:
            out |= A.turn_atoms(t.role, t.tool_name, t.text)
    return out


def _said(span: Sequence[SpanTurn]) -> set[A.Atom]:
    """Every atom the span states, tool outputs included: what a summary may mention without inventing it."""
    out: set[A.Atom] = set()
    for t in span:
        out |= A.fact_atoms(t.text)
    return out


def _pin_span(
    state: P.PinnedState,
    span: Sequence[SpanTurn],
    turns: Sequence[SessionTurn],
    fields: Sequence[str] = (),
    acted: frozenset[str] | None = None,
) -> P.PinnedState:
    """The state after the span's turns, in order; ``acted``: the ids the user and agent name in the whole
    span (what a tool output may pin), when the caller has them."""
    if acted is None:
        acted = _acted(span, fields)
    for cleaned, turn in zip(span, turns, strict=True):
        state = P.update(state, cleaned.role, cleaned.text, turn.turn_id, turn.at, fields, acted)
    return state


def _covered(line: str, state: P.PinnedState) -> bool:
    """Every fact of the line is in the pinned line of an entity the line names (so a fact is never
    counted as kept because the same value belongs to another entity)."""
    line_ids = set(A.ids(line))
    pinned_norm = A.norm_text(pinned_text(state))
    if any(A.norm_text(goal) not in pinned_norm for goal in A.goal_sentences(line)):
        return False  # a goal that is no longer pinned lives on in this line
    rendered = [(e.key, A.fact_atoms(e.render())) for e in state.entities.values()]
    for atom in A.fact_atoms(line):
        if not any(atom in facts and (not line_ids or key in line_ids) for key, facts in rendered):
            return False
    return True


def _fold(state: P.PinnedState, lines: list[str], cap: int, counter: TokenCounter) -> tuple[list[str], int]:
    """Oldest summary lines whose every fact is already in the pinned state leave the summary (the pinned
    state keeps them), until the summary fits its share of the budget."""
    over = counter.count(summary_text(lines)) - cap
    if over <= 0:
        return lines, 0
    kept: list[str] = []
    folded = 0
    for i, line in enumerate(lines):
        if over > 0 and i < len(lines) - 1 and _covered(line, state):
            over -= counter.count(line) + 2
            folded += 1
            continue
        kept.append(line)
    return kept, folded


def _archive(lines: list[str], fresh: int, cap: int, counter: TokenCounter) -> tuple[list[str], int]:
    """The oldest lines out until the summary fits ``cap``; the ``fresh`` newest (this compaction's, just
    verified) always stay."""
    keep = list(lines)
    archived = 0
    while len(keep) > fresh and counter.count(summary_text(keep)) > cap:
        keep.pop(0)
        archived += 1
    return keep, archived


def first_cut(memory: WorkingMemory, tail: Sequence[SessionTurn], rules: Rules, counter: TokenCounter) -> int:
    """How many of the oldest working turns the first attempt replaces: all but the newest ones that fit
    the target with the pinned state and summary (at most ``recent_turns_verbatim`` of them). The newest turn
    stays verbatim whenever it alone fits the target: the exchange in progress is never only a summary line."""
    working = [*memory.recent, *tail]
    fixed = shown_pinned(memory.pinned, rules, counter).tokens + counter.count(summary_text(memory.episodes))
    target = int(rules.budget_tokens * rules.target_ratio)
    keep, used = 0, fixed
    for turn in reversed(working):
        first = keep == 0 and turn.tokens <= target
        if keep >= rules.recent_turns_verbatim or (used + turn.tokens > target and not first):
            break
        keep += 1
        used += turn.tokens
    return len(working) - keep


def compact(
    memory: WorkingMemory,
    tail: Sequence[SessionTurn],
    rules: Rules,
    counter: TokenCounter,
    draft: Sequence[str] | None = None,
) -> CompactionResult:
    """One verified compaction of ``memory`` plus the turns that arrived after it (``tail``, oldest first).

    ``draft``: summary lines written elsewhere (an LLM) for the span this function would pick first; the
    verifier guards them like its own, and a rejected draft falls back to the deterministic summary."""
    working = [*memory.recent, *tail]
    before = working_tokens(memory, tail, counter, rules)
    cut = first_cut(memory, tail, rules, counter)
    keep = len(working) - cut
    if cut == 0:
        return CompactionResult(
            "unchanged",
            None,
            before,
            before,
            True,
            0,
            turns_verbatim=keep,
            message="nothing to compact: every working turn is kept verbatim",
        )
    old_context = shown_pinned(memory.pinned, rules, counter).tokens + counter.count(summary_text(memory.episodes))
    work = 0
    verdict = Verdict((), ())
    state = memory.pinned
    lines: list[str] = []
    attempts = 0
    while attempts < rules.max_attempts and cut > 0:
        attempts += 1
        span_turns = working[:cut]
        span = _span(span_turns)
        atoms = _atoms(span)
        said = _said(span)
        state = _pin_span(memory.pinned, span, span_turns, rules.pinned_fields)
        if attempts == 1 and draft is not None:
            lines = list(draft)
        else:
            lines = summarise(span)
        if attempts >= 2 and verdict.unsupported:
            bad = set(verdict.unsupported)
            lines = [line for line in lines if not (A.fact_atoms(line) & bad)]
        if attempts >= 2 and verdict.missing:
            still = verify(atoms, pinned_text(state), lines, memory.episodes, pinned_text(memory.pinned)).missing
            state = state.pin_atoms(list(still), span_turns[-1].turn_id, span_turns[-1].at)
        verdict = verify(atoms, pinned_text(state), lines, memory.episodes, pinned_text(memory.pinned), said)
        # The cost if a model did this: it reads the old context and the span, writes the new state and lines.
        written = shown_pinned(state, rules, counter).tokens + counter.count(summary_text(lines))
        work += old_context + sum(t.tokens for t in span_turns) + written
        if verdict.ok:
            break
        if attempts >= 2:
            cut //= 2  # keep more turns verbatim: a smaller span to get right
    if not verdict.ok or cut == 0:
        return CompactionResult(
            "failed",
            None,
            before,
            before,
            False,
            attempts,
            missing=tuple(map(str, verdict.missing)),
            unsupported=tuple(map(str, verdict.unsupported)),
            message="the verifier rejected every attempt; working memory unchanged",
            work_tokens=work,
        )
    # The stored pins stay a few times what a context shows: the rest are memories (and the verifier checked
    # the span against every pin before this).
    state = state.trimmed(STORED_PINS_FACTOR * rules.pinned_max_entities, rules.entity_types)
    # Every working turn is now compacted or kept verbatim: the memory covers up to the newest one.
    newest = working[-1]
    through_ids = tuple(t.turn_id for t in working if t.at == newest.at)
    cap = int(rules.budget_tokens * rules.summary_ratio)
    new, after, folded = WorkingMemory(), before, 0
    # A compaction that does not shrink the context is no success: fold harder (a smaller summary share, the
    # lines whose facts are pinned leave first) before giving up.
    degraded = False
    for share in (1.0, 0.5, 0.25, 0.0):
        episodes, folded = _fold(state, [*memory.episodes, *lines], int(cap * max(share, 0.25)), counter)
        # Still over the summary's share: the oldest lines of earlier compactions leave the working memory
        # (archived; their turns' facts and records are memories, retrievable), so a long session stays bounded.
        # Last resort, when even that does not shrink the context (fact-dense turns: the summary restates them):
        # this compaction's own oldest lines go too, declared as a degraded compaction.
        degraded = share == 0.0
        episodes, archived = _archive(episodes, 1 if degraded else len(lines), int(cap * max(share, 0.25)), counter)
        new = WorkingMemory(
            version=memory.version + 1,
            pinned=state,
            episodes=tuple(episodes),
            recent=tuple(working[cut:]),
            through_at=newest.at,
            through_ids=through_ids,
            turns_compacted=memory.turns_compacted + cut,
        )
        after = working_tokens(new, (), counter, rules)
        if after < before:
            break
    if after >= before:
        return CompactionResult(
            "failed",
            None,
            before,
            before,
            True,
            attempts,
            message=f"the compacted context ({after} tokens) is not smaller than before ({before}); unchanged",
            work_tokens=work,
        )
    outcome, message = "compacted", f"replaced {cut} turns, kept {len(working) - cut} verbatim"
    if archived:
        message += f"; {archived} older summary lines archived (their facts stay retrievable as memories)"
    if degraded:
        outcome = "degraded"
        message += "; lines of this span archived too, to shrink the context"
    if after > rules.hard_limit:
        outcome = "degraded"
        message += f"; still {after} tokens, over the hard limit {rules.hard_limit}: fetches degrade"
    return CompactionResult(
        outcome, new, before, after, True, attempts, (), (), cut, len(working) - cut, message, work, folded
    )


# --- assembly -------------------------------------------------------------------------------------------


STORED_PINS_FACTOR = 4
PINNED_SHARE = 0.6  # the most of a context's budget the pins take: turns and memories need the rest
MIN_CLIPPED_TOKENS = 24  # a newest turn too long for the room left is shown clipped, if this much fits
CLIP_MARK = " … [clipped; the rest is in memories]"


@dataclass
class ContextPlan:
    pinned_text: str
    pinned_tokens: int
    budget: int
    total_turns: int
    total_lines: int
    pinned_state: P.PinnedState = field(default_factory=P.PinnedState)
    summary_lines: list[str] = field(default_factory=list)  # oldest first
    summary_tokens: int = 0
    recent: list[SessionTurn] = field(default_factory=list)  # oldest first
    recent_tokens: int = 0
    reserved: int = 0  # tokens taken by retrieved memories
    pins: tuple[P.PinnedEntity, ...] = ()  # the pins shown, highest-ranked first
    pins_dropped: int = 0  # pins left out to fit (they stay retrievable as memories)
    clipped: int = 0  # turns shown clipped
    pins_cap: int = 0  # the tokens the pins may take (the schema's cap, PINNED_SHARE of the budget)
    hints: frozenset[str] = frozenset()  # words of the latest turns (a cut pin keeps the attributes they name)

    @property
    def summary(self) -> str:
        return summary_text(self.summary_lines)

    @property
    def used(self) -> int:
        return self.pinned_tokens + self.summary_tokens + self.recent_tokens + self.reserved

    @property
    def memory_budget(self) -> int:
        return self.budget - self.used

    @property
    def omitted_turns(self) -> int:
        return self.total_turns - len(self.recent)

    @property
    def omitted_lines(self) -> int:
        return self.total_lines - len(self.summary_lines)

    def drop_pin(self, counter: TokenCounter) -> bool:
        """Leave out the lowest-ranked pin shown; False when none is left."""
        if not self.pins:
            return False
        self.pins = self.pins[:-1]
        self.pins_dropped += 1
        self.pinned_text = P.render_entities(self.pins)
        self.pinned_tokens = counter.count(self.pinned_text) if self.pinned_text else 0
        return True

    def hydrate(self, records: Sequence[P.RecordValues], rules: Rules, counter: TokenCounter) -> None:
        """The pins with the current values of their records' memories (PinnedState.hydrated), shown again
        within the same cap: a Fetch's retrieval returns the records of the ids the pins name."""
        state = self.pinned_state.hydrated(records)
        if state is self.pinned_state:
            return
        shown = shown_pinned(state, rules, counter, self.pins_cap, self.hints)
        self.pinned_state, self.pins, self.pins_dropped = state, shown.entities, shown.dropped
        self.pinned_text, self.pinned_tokens = shown.text, shown.tokens

    def notice(self) -> str:
        left = [
            f"{n} {what}"
            for n, what in (
                (self.omitted_turns, "older working turns"),
                (self.omitted_lines, "summary lines"),
                (self.pins_dropped, "lower-ranked pins"),
            )
            if n
        ]
        if not left and not self.clipped:
            return ""
        text = f"context degraded to fit {self.budget} tokens: "
        text += (", ".join(left) + " left out (still retrievable as memories)") if left else ""
        if self.clipped:
            text += ("; " if left else "") + f"{self.clipped} turn(s) clipped"
        return text


def plan_context(
    memory: WorkingMemory,
    tail: Sequence[SessionTurn],
    budget: int,
    counter: TokenCounter,
    memory_share: float = 0.0,
    verbatim: int = 6,
    fields: Sequence[str] = (),
    lines_first: bool = True,
    rules: Rules | None = None,
    pinned: P.PinnedState | None = None,
) -> ContextPlan:
    """The pins first (the highest-ranked that fit the schema's cap and PINNED_SHARE of the budget), then up to
    ``verbatim`` newest turns (the newest clipped if it alone is too long) and (with ``lines_first``) the newest
    summary lines within ``1 - memory_share`` of what is left; the rest is for retrieved memories, after which
    ``fill`` spends what they did not use on summary lines and older turns. What does not fit is left out and
    counted in the notice (it stays retrievable as memories). Never fails: a budget too small for anything
    gets an empty plan. ``pinned``: pins_as_of(memory, tail, rules.pinned_fields).state when the caller kept it."""
    rules = rules or Rules(recent_turns_verbatim=verbatim, pinned_fields=tuple(fields))
    working = [*memory.recent, *tail]
    state = pinned if pinned is not None else pins_as_of(memory, tail, rules.pinned_fields).state
    latest = [t.body for t in reversed(working) if t.role != "tool"][:3]
    pins_cap, hints = int(budget * PINNED_SHARE), P.hint_words(latest)
    shown = shown_pinned(state, rules, counter, pins_cap, hints)
    plan = ContextPlan(
        shown.text,
        shown.tokens,
        budget,
        len(working),
        len(memory.episodes),
        state,
        pins=shown.entities,
        pins_dropped=shown.dropped,
        pins_cap=pins_cap,
        hints=hints,
    )
    cap = int((budget - shown.tokens) * (1 - memory_share))
    whole = {e.key for e in shown.entities if "…" not in e.attributes}
    working = [pinned_stub(t, whole, counter) for t in working]
    _add_turns(plan, working, cap, rules.recent_turns_verbatim, counter)
    if lines_first:
        _add_lines(plan, memory.episodes, cap, counter)
    return plan


def _acted(span: Sequence[SpanTurn], fields: Sequence[str]) -> frozenset[str]:
    return frozenset(i for t in span for i in P.acted_on(t.role, t.text, fields))


@dataclass(frozen=True, slots=True)
class PinsAsOf:
    """The pinned state after a working memory's turns and the first ``turns`` working turns, and the ids the
    user and agent named in those turns (``acted``: what _pin_span read every turn with)."""

    state: P.PinnedState
    acted: frozenset[str]
    turns: int


def pins_as_of(
    memory: WorkingMemory, tail: Sequence[SessionTurn], fields: Sequence[str] = (), since: PinsAsOf | None = None
) -> PinsAsOf:
    """The pinned state as of the newest turn: turns not compacted yet update it too (never the reverse).

    ``since``: what this returned for the same memory and fields and the first ``since.turns`` of these working
    turns (the caller checks that). When the newer turns name no id the earlier ones did not, the pins are
    the earlier ones updated with the newer turns only: the same fold over the same turns with the same
    ``acted``. Else every turn is read again (a newly named id may pin a record of an earlier tool output)."""
    working = [*memory.recent, *tail]
    if since is not None and since.turns <= len(working):
        newer = working[since.turns :]
        span = _span(newer)
        if _acted(span, fields) <= since.acted:
            return PinsAsOf(_pin_span(since.state, span, newer, fields, since.acted), since.acted, len(working))
    span = _span(working)
    acted = _acted(span, fields)
    return PinsAsOf(_pin_span(memory.pinned, span, working, fields, acted), acted, len(working))


@functools.lru_cache(maxsize=8192)
def _record_keys(body: str) -> tuple[str, ...]:
    """The keys of a tool output that is nothing but records, in order; () otherwise (the same turns are
    stubbed again at every Fetch: cached)."""
    records, rest = P.record_lines(body)
    return () if rest.strip() else tuple(key for key, _ in records)


def pinned_stub(turn: SessionTurn, pinned: set[str], counter: TokenCounter) -> SessionTurn:
    """A tool output whose every record is shown whole among the pins, as a line naming them: the pins hold the
    same fields, current, and the room goes to other turns."""
    if turn.role != "tool" or not pinned:
        return turn
    keys = _record_keys(turn.body)
    if not keys or any(key not in pinned for key in keys):
        return turn
    text = f"{turn.speaker or 'tool'}: {', '.join(keys)} (current values pinned above)"
    return replace(turn, text=text, tokens=counter.count(text))


def clip(turn: SessionTurn, max_tokens: int, counter: TokenCounter) -> SessionTurn | None:
    """The turn cut to at most ``max_tokens`` (its start, and a mark saying the rest is in memories); None
    when not even MIN_CLIPPED_TOKENS fit."""
    if turn.tokens <= max_tokens:
        return turn
    room = max_tokens - counter.count(CLIP_MARK)
    if room < MIN_CLIPPED_TOKENS:
        return None
    text = turn.text[: max(room * 3, 16)]
    size = counter.count(text)
    while size > room and len(text) > 16:
        text = text[: int(len(text) * room / size * 0.95)]
        size = counter.count(text)
    cut = text.rstrip() + CLIP_MARK
    return replace(turn, text=cut, tokens=counter.count(cut))


def _add_turns(
    plan: ContextPlan, working: Sequence[SessionTurn], cap: int, limit: int, counter: TokenCounter | None = None
) -> None:
    """Newest turns not shown yet, while the session part stays within ``cap`` and the whole within budget.
    With ``counter``, the newest turn (when none is shown yet) is clipped to the room left instead of left out."""
    for turn in reversed(working[: len(working) - len(plan.recent)]):
        if len(plan.recent) >= limit:
            break
        room = min(cap - plan.recent_tokens - plan.summary_tokens, plan.budget - plan.used)
        if turn.tokens > room:
            shown = clip(turn, room, counter) if counter is not None and not plan.recent else None
            if shown is None:
                break
            plan.clipped += 1
            turn = shown
        plan.recent.insert(0, turn)
        plan.recent_tokens += turn.tokens


def _add_lines(plan: ContextPlan, lines: Sequence[str], cap: int, counter: TokenCounter) -> None:
    """Newest summary lines first. Line sizes add up (each line ends in a newline, where BPE never merges);
    the final text is counted exactly and trimmed if the sum was short."""
    chosen = list(plan.summary_lines)
    remaining = list(lines[: len(lines) - len(chosen)])
    total = plan.summary_tokens or counter.count(summary_text(["x"])) - counter.count("- x\n")
    while remaining:
        size = counter.count(f"- {remaining[-1]}\n")
        if plan.recent_tokens + total + size > cap or plan.used - plan.summary_tokens + total + size > plan.budget:
            break
        chosen.insert(0, remaining.pop())
        total += size
    exact = counter.count(summary_text(chosen)) if chosen else 0
    while chosen and plan.used - plan.summary_tokens + exact > plan.budget:
        chosen.pop(0)
        exact = counter.count(summary_text(chosen)) if chosen else 0
    plan.summary_lines = chosen
    plan.summary_tokens = exact


def fill(
    plan: ContextPlan,
    memory: WorkingMemory,
    tail: Sequence[SessionTurn],
    memory_tokens: int,
    counter: TokenCounter,
) -> ContextPlan:
    """After retrieval took ``memory_tokens``: older summary lines, then older turns, in what is left."""
    plan.reserved = memory_tokens
    _add_lines(plan, memory.episodes, plan.budget, counter)
    _add_turns(plan, [*memory.recent, *tail], plan.budget, len(memory.recent) + len(tail))
    return plan
