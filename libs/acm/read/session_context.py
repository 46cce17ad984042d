"""Fetch for a session: pinned state, retrieved memories, episodic summary, recent turns — in that order,
within the budget, each part with its exact token count (tiktoken, the request's encoding)."""

from __future__ import annotations

import functools
import json
import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from acm.domain.bundle import ContextBundle, ContextPart
from acm.domain.compaction.engine import (
    ContextDoesNotFit,
    ContextPlan,
    SessionTurn,
    clip,
    fill,
    plan_context,
)
from acm.domain.compaction.pinned import (
    CALL,
    MAX_VALUE_CHARS,
    MIN_TRUNCATED_TOKENS,
    PinnedEntity,
    RecordValues,
    fitting,
    record_values,
)
from acm.domain.compaction.record import CompactionRecord
from acm.domain.errors import Unavailable
from acm.domain.facts import RECORD_KIND
from acm.domain.identifiers import identifiers
from acm.domain.models import Role
from acm.domain.retrieved import Ranked, RetrievalQuery, RetrievedMemory
from acm.domain.tokens import DEFAULT_ENCODING, TokenCounter
from acm.ports.retriever import Retriever
from acm.read.kept_sessions import KeptSessions

log = logging.getLogger("acm.gateway")

SEPARATOR = "\n\n"
MEMORIES_HEADER = "Relevant memories:"
RECENT_HEADER = "Recent turns:"
MEMORY_SHARE = 0.5  # the most of what the pinned state leaves that the recent turns may take when there is a query
# Below this budget not even the headers and one clipped turn fit: RESOURCE_EXHAUSTED, naming it. At or above
# it, a session's context always comes back within the budget, degraded as far as needed (with a notice).
MIN_BUDGET_TOKENS = 64
# With no query, the newest turns are the query: what the user and the agent just said or called.
QUERY_TURNS = 3
QUERY_CHARS_PER_TURN = 240


QUERY_PIN_IDS = 8
# With no query, retrieval is asked for this many times the memories' room: the records the latest turns name
# are then put first and what the pins or recent turns already show is left out, before the part is fitted.
CANDIDATE_FACTOR = 3
CUT_SLACK = 8  # a cut record leaves this much of the room: a day's header, the count of lines joined
_CALL_LINE = re.compile(r"^([A-Za-z_][\w.-]{0,80})\((.*)\)$", re.DOTALL)


def implied_query(turns: Sequence[SessionTurn], pins: Sequence[PinnedEntity]) -> str:
    """The query a session-context Fetch without one retrieves for: the ids the agent acts on (the highest-ranked
    pins; retrieval returns what names an id first, so their records come with their current values), then the
    newest turns that are not tool output (the user's request, the agent's reply and calls), newest first."""
    named = [e.key for e in pins] + [v for e in pins if e.type == CALL for v in e.attributes.values()]
    ids = list(dict.fromkeys(i for text in named for i in identifiers(text)))[:QUERY_PIN_IDS]
    picked = [t.body[:QUERY_CHARS_PER_TURN] for t in reversed(turns) if t.role != "tool"][:QUERY_TURNS]
    return "\n".join([" ".join(ids), *picked] if ids else picked)


def named_ids(turns: Sequence[SessionTurn]) -> list[str]:
    """The ids the latest user and agent turns name (their text and their calls), newest turn first: what the
    agent's next call most likely reads the records of."""
    latest = [t.body for t in reversed(turns) if t.role != "tool"][:QUERY_TURNS]
    return list(dict.fromkeys(i for text in latest for i in identifiers(text)))


def _call_values(body: str) -> list[str] | None:
    """The leaf values of a turn that is nothing but tool calls ("name({json})", one a line); None otherwise."""
    values: list[str] = []
    for line in body.strip().splitlines():
        m = _CALL_LINE.match(line.strip())
        if m is None:
            return None
        try:
            args = json.loads(m.group(2)) if m.group(2).strip() else {}
        except json.JSONDecodeError:
            return None
        values += _leaves(args)
    return values


def _leaves(value: object) -> list[str]:
    if isinstance(value, dict):
        return [v for item in value.values() for v in _leaves(item)]
    if isinstance(value, list):
        return [v for item in value for v in _leaves(item)]
    return [] if value is None or isinstance(value, bool) else [str(value)]


def shown_elsewhere(memory: RetrievedMemory, pins: Sequence[PinnedEntity], shown: str) -> bool:
    """Whether the pins and recent turns already show everything the memory says: a record part whose every
    field a pin of its key shows with the same value, or a bare tool call whose every input value appears in
    ``shown`` (the pinned and recent text, lowered). Prose is never judged redundant."""
    if memory.kind == RECORD_KIND:
        at = memory.valid_from or memory.created_at
        rec = record_values(memory.text, at) if at is not None else None
        pin = next((e for e in pins if rec is not None and e.key.casefold() == rec.key.casefold()), None)
        if pin is None or rec is None:
            return False
        # A pin leaves out the field that only repeats its key, and holds a value cut at MAX_VALUE_CHARS.
        return all(v == rec.key or pin.attributes.get(k) == v[:MAX_VALUE_CHARS] for k, v in rec.fields.items())
    _, sep, body = memory.text.partition(": ")
    values = _call_values(body if sep else memory.text)
    return values is not None and all(v.lower() in shown for v in values)


def _record_of(memory: RetrievedMemory) -> RecordValues | None:
    at = memory.valid_from or memory.created_at
    return record_values(memory.text, at) if memory.kind == RECORD_KIND and at is not None else None


def record_line(memory: RetrievedMemory, rec: RecordValues, fields: dict[str, str]) -> RetrievedMemory:
    """The record memory showing only ``fields``, as one record (no "(part i/n)"), its speaker kept."""
    head = memory.text.split(" {", 1)[0]
    prefix = head[: head.rfind(rec.key)] if rec.key in head else ""
    body = ", ".join(f"{k}={v}" if v else k for k, v in fields.items())
    return replace(memory, text=f"{prefix}{rec.key} {{{body}}}")


def compact_record(memory: RetrievedMemory, pins: Sequence[PinnedEntity]) -> RetrievedMemory:
    """A record memory without the field that only repeats its key and without the fields a pin of its key
    already shows with the same value: only what the context does not show yet."""
    rec = _record_of(memory)
    if rec is None:
        return memory
    pin = next((e for e in pins if e.key.casefold() == rec.key.casefold()), None)
    shown = pin.attributes if pin is not None else {}
    rest = {k: v for k, v in rec.fields.items() if v != rec.key and shown.get(k) != v[:MAX_VALUE_CHARS]}
    return record_line(memory, rec, rest) if rest != rec.fields else memory


def cut_record(
    memory: RetrievedMemory, room: int, count: Callable[[str], int], hints: frozenset[str]
) -> RetrievedMemory | None:
    """A record memory cut to the fields whose line fits ``room`` tokens ("…" marks the cut; the fields the
    latest turns speak of and those naming ids first), None when too little fits to say anything."""
    rec = _record_of(memory)
    if rec is None or room < MIN_TRUNCATED_TOKENS:
        return None
    fields = {k: v for k, v in rec.fields.items() if v != rec.key}
    kept = fitting(fields, lambda trial: count(shown_line(record_line(memory, rec, trial))) <= room, hints)
    return record_line(memory, rec, kept) if kept else None


def asks(memory: RetrievedMemory) -> bool:
    """A question the user or agent asked ("Can you pull up INC-7 for me?"): it names what was wanted, not what
    is; the answer, when there is one, is a record or a statement of its own."""
    return memory.kind != RECORD_KIND and memory.text.rstrip().endswith(("?", "？"))


def named_first(memories: Sequence[Ranked], named: Sequence[str]) -> list[Ranked]:
    """The record memories whose key the latest turns name first (the newest-named first, a record's parts in
    order), then the rest in retrieval's order, questions after statements."""
    order = {i.casefold(): n for n, i in enumerate(named)}

    def rank(r: Ranked) -> tuple[int, bool]:
        rec = _record_of(r.memory)
        return (order.get(rec.key.casefold(), len(order)) if rec is not None else len(order), asks(r.memory))

    return sorted(memories, key=rank)  # stable: retrieval's order within each group


def current_records(memories: Sequence[Ranked]) -> list[RecordValues]:
    """The tool records among retrieved memories (retrieval returns no stale one), with when they were said."""
    out = []
    for r in memories:
        at = r.memory.valid_from or r.memory.created_at
        found = record_values(r.memory.text, at) if r.memory.kind == RECORD_KIND and at is not None else None
        if found is not None:
            out.append(found)
    return out


DAY_S = 86400


@functools.lru_cache(maxsize=4096)
def day_header(day: int) -> str:
    at = datetime.fromtimestamp(day * DAY_S, UTC)
    return f"[{at.day} {at:%B %Y}]\n"


def said_at(memory: RetrievedMemory) -> int | None:
    """When it was said (whole seconds since the epoch), None when unknown."""
    return None if memory.created_at is None else math.floor(memory.created_at.timestamp())


def said_day(memory: RetrievedMemory) -> int | None:
    """The UTC day it was said (days since the epoch), None when unknown."""
    at = said_at(memory)
    return None if at is None else at // DAY_S


_ROLE_NAMES = frozenset(r.value for r in Role)


def shown_line(memory: RetrievedMemory) -> str:
    """A retrieved memory as the context shows it: one "- text" line, under the header of its day. A doubtful
    one (an authority or policy claim, acm.domain.instruction) is marked with who said it, unless its text
    starts by naming them: "- [unverified, from user] Sam: management decided ...", "- [unverified]
    tool[kb]: ..."; a tool's output whose text does not name its tool says which: "- [from tool:kb] ..."."""
    doubtful = memory.trust != "normal"  # untrusted, instruction, or a level this reader does not know
    if not doubtful and not memory.tool_name:
        return f"- {memory.text}\n"
    if memory.tool_name:
        said_by, source = f"tool[{memory.tool_name}]:", f"tool:{memory.tool_name}"
    else:
        source = memory.role if memory.role in _ROLE_NAMES else ""
        said_by = f"{source}:"
    if memory.text.startswith(said_by):
        source = ""  # the text names who said it
    mark = ("unverified" + (f", from {source}" if source else "")) if doubtful else (f"from {source}" if source else "")
    return f"- [{mark}] {memory.text}\n" if mark else f"- {memory.text}\n"


@dataclass
class ShownMemories:
    """The retrieved memories as the context shows them: a header, then the memories by the day they were said,
    oldest day first, each day under one "[25 May 2023]" line (undated ones first, under none), so the model
    can place them in time. A date on every line cost a quarter of the part's tokens (a day holds several of
    the memories a question finds), room for that many more memories.

    Which memories are shown is decided in rank order: ``memories`` stays best first, and the lowest-ranked go
    first when the part must shrink. Each line and day header is rendered and counted once, so dropping costs
    no re-rendering."""

    memories: list[Ranked]
    count: Callable[[str], int]
    lines: list[str] = field(init=False)  # rank order, each "- text\n"
    sizes: list[int] = field(init=False)
    days: list[int | None] = field(init=False)
    _per_day: Counter[int | None] = field(init=False)
    _sum: int = field(init=False)  # the lines' and the present days' headers' counts
    _order: list[int] = field(init=False)  # indices of ``lines`` as shown (may still hold dropped ones)
    _pieces: list[str] | None = field(init=False, default=None)  # rendered once until the next pop

    def __post_init__(self) -> None:
        self.lines = [shown_line(r.memory) for r in self.memories]
        self.sizes = [self.count(line) for line in self.lines]
        said = [said_at(r.memory) for r in self.memories]
        self.days = [None if s is None else s // DAY_S for s in said]
        self._per_day = Counter(self.days)
        self._sum = sum(self.sizes) + sum(self._header_size(day) for day in self._per_day)
        # By when said (undated first; days follow), then rank.
        self._order = sorted(range(len(said)), key=lambda i: (0, 0, i) if said[i] is None else (1, said[i], i))

    def _header_size(self, day: int | None) -> int:
        return 0 if day is None else self.count(day_header(day))

    def _shown_order(self) -> list[int]:
        """Indices of the lines still shown, as shown (a pop leaves its index here until the next look)."""
        if len(self._order) != len(self.lines):
            self._order = [i for i in self._order if i < len(self.lines)]
        return self._order

    def pieces(self) -> list[str]:
        """The part's text in pieces that join to it (the last line without its newline)."""
        if not self.lines:
            return []
        if self._pieces is not None:
            return list(self._pieces)
        out = [MEMORIES_HEADER + "\n"]
        current: int | None = None
        for i in self._shown_order():
            day = self.days[i]
            if day is not None and day != current:
                out.append(day_header(day))
                current = day
            out.append(self.lines[i])
        out[-1] = out[-1][:-1]
        self._pieces = out
        return list(out)

    def text(self) -> str:
        return "".join(self.pieces())

    def lines_tokens(self) -> int:
        """The lines' and day headers' exact count, without the part's header (see joined_count)."""
        if not self.lines:
            return 0
        last = self.lines[self._shown_order()[-1]]
        return self._sum - self.count(last) + self.count(last[:-1])

    def pop(self) -> None:
        """Drop the lowest-ranked memory (and its day's header when it was the day's last)."""
        self._pieces = None
        self.memories.pop()
        self.lines.pop()
        day = self.days.pop()
        self._sum -= self.sizes.pop()
        self._per_day[day] -= 1
        if not self._per_day[day]:
            del self._per_day[day]
            self._sum -= self._header_size(day)

    def fit(self, budget: int) -> int:
        """Drop the lowest-ranked lines until the lines fit ``budget``; returns how many were dropped. While
        even the lines but the longest exceed it, they go without counting the last line afresh (that count
        is the one not remembered between Fetches: the last line is shown without its newline)."""
        dropped = 0
        largest = max(self.sizes, default=0)
        while self.lines and self._sum - largest > budget:
            self.pop()
            dropped += 1
        while self.lines and self.lines_tokens() > budget:
            self.pop()
            dropped += 1
        return dropped


def packed(
    memories: Sequence[Ranked],
    budget: int,
    count: Callable[[str], int],
    named: Sequence[str] = (),
    hints: frozenset[str] = frozenset(),
) -> list[Ranked]:
    """Best first, each memory whose line still fits ``budget`` (a smaller one may use the room a larger one
    left); then the highest-ranked record the latest turns name (``named``) that did not fit whole is shown cut
    to the room left, at its rank. ShownMemories.fit then makes the count exact with the day headers."""
    wanted = {i.casefold() for i in named}
    sizes = [count(shown_line(r.memory)) for r in memories]
    kept: list[int] = []
    used = 0
    for i, size in enumerate(sizes):
        if used + size <= budget:
            kept.append(i)
            used += size
    room = budget - used - CUT_SLACK
    for i, r in enumerate(memories):
        rec = _record_of(r.memory)
        if i in kept or rec is None or rec.key.casefold() not in wanted:
            continue
        cut = cut_record(r.memory, room, count, hints)
        if cut is not None:
            memories = [*memories[:i], replace(r, memory=cut), *memories[i + 1 :]]
            kept = sorted([*kept, i])
        break
    out = []
    for i in kept:
        r = memories[i]
        if r.memory.kind == RECORD_KIND:  # compacted or cut: its count as shown
            r = replace(r, memory=replace(r.memory, tokens=count(r.memory.text)))
        out.append(r)
    return out


def joined_count(pieces: Sequence[str], count: Callable[[str], int]) -> int:
    """The exact token count of "".join(pieces), from the counts of its pieces, when every piece but the first
    starts with a character that is neither whitespace nor part of a word carried over: tiktoken's encodings
    split their input at such a point before merging (a newline run ends a pre-token; "-" or a letter starts
    one), so no token spans two pieces. The pieces here each end in a newline and start with "-", "[" (a
    day) or a header's capital. Counting pieces lets the counts of what repeats between Fetches be remembered."""
    return sum(count(piece) for piece in pieces)


# The mark a session's kept turn ends with when it was cut (acm_ingest.pipeline.shown_turn): what follows the cut
# is in memories only, so a recent turn that ends with it does not show them all.
_CUT_MARK = re.compile(r"\n… \[[^\]\n]* in memories\]\s*$")


def shown_whole(turn: SessionTurn) -> bool:
    """Whether the recent part shows the turn's every memory (its kept text was not cut)."""
    return _CUT_MARK.search(turn.text) is None


def shown_by_recent(memory: RetrievedMemory, recent: Sequence[SessionTurn], visible: str) -> bool:
    """Whether the recent turns show the memory: it comes from them, and from a turn cut short only when its
    line is there before the cut (``visible``: the context's shown text, lower-cased)."""
    sources = set(memory.source_turn_ids)
    if not sources or not sources <= {t.turn_id for t in recent}:
        return False
    if sources <= {t.turn_id for t in recent if shown_whole(t)}:
        return True
    return memory.text.split(": ", 1)[-1].lower() in visible


def recent_text(turns: Sequence[SessionTurn]) -> str:
    return (RECENT_HEADER + "\n" + "\n".join(t.text for t in turns)) if turns else ""


def recent_pieces(turns: Sequence[SessionTurn]) -> list[str]:
    """The recent turns' part in pieces that join to it, one per turn when joined_count may sum them (every
    turn starts with a visible character), so that only a new turn is counted afresh; else in one piece."""
    if not turns:
        return []
    if all(t.text[:1] and not t.text[0].isspace() for t in turns):
        return [RECENT_HEADER + "\n", *(t.text + "\n" for t in turns[:-1]), turns[-1].text]
    return [recent_text(turns)]


@dataclass
class SessionContext:
    retriever: Retriever
    tokens: TokenCounter
    sessions: KeptSessions

    async def __call__(self, request: RetrievalQuery) -> ContextBundle | None:
        """The assembled context for the session of ``request.scope``, within ``request.budget_tokens``, or None
        when the session has nothing yet (the caller fetches memories only). Raises ContextDoesNotFit when not
        even the pinned state fits. When the session's owners cannot be reached (compact for the working memory,
        retrieve for the turns), the memories retrieved for the question, with a notice saying so."""
        scope, budget, encoding = request.scope, request.budget_tokens, request.encoding
        if budget < MIN_BUDGET_TOKENS:
            raise ContextDoesNotFit(
                MIN_BUDGET_TOKENS, budget, f"a session's context needs a budget of at least {MIN_BUDGET_TOKENS} tokens"
            )
        try:
            state, latest = await self.sessions(scope)
        except Unavailable as exc:
            # A Fetch still answers while compact (or retrieve's Memories API) is down: what it can, said so.
            log.warning("session %s: context unavailable, memories only: %s", scope.session_key, exc)
            answer = await self.retriever.retrieve(request)
            notice = f"the session's context is unavailable ({exc}); memories only"
            return ContextBundle(
                answer.items, answer.total_tokens, budget, answer.dropped, encoding, answer.from_prefetch, notice=notice
            )
        if not state.stored and not state.tail:
            return None
        counted: dict[str, int] = {}

        def count(text: str) -> int:
            # The same strings (the joined context, each part, the headers) are counted several times.
            if text not in counted:
                counted[text] = self.tokens.count(text, encoding)
            return counted[text]

        # Headers and separators are paid from the budget up front, so the parts can use the rest.
        overhead = 3 * count(SEPARATOR) + count(MEMORIES_HEADER + "\n") + count(RECENT_HEADER + "\n")
        inner = max(budget - overhead, 0)
        working = [*state.memory.recent, *state.tail]
        share = MEMORY_SHARE if request.text or working else 0.0
        rules = state.rules
        # With a question, the memories retrieved for it come before the summary: a summary line is a lossy
        # digest of older turns, and those turns stay retrievable as memories. The summary gets what the
        # memories leave (fill).
        plan = plan_context(
            state.memory,
            state.tail,
            inner,
            self.tokens,
            share,
            lines_first=share == 0.0,
            rules=rules,
            pinned=state.pins(),
        )
        query = request.text or implied_query(working, plan.pinned_state.ranked(rules.entity_types))
        memories: list[Ranked] = []
        dropped = 0
        from_prefetch = False
        if query and plan.memory_budget > 0:
            asked = plan.memory_budget * (1 if request.text else CANDIDATE_FACTOR)
            answer = await self.retriever.retrieve(
                replace(
                    request,
                    text=query,
                    budget_tokens=asked,
                    # Chosen in the stored counts (so the prefetch pool, counted in the default encoding, can
                    # serve any request); the lines are then counted and fitted in the request's own encoding.
                    encoding=DEFAULT_ENCODING,
                    from_context=not request.text,
                )
            )
            dropped = answer.dropped
            memories = list(answer.items)
            # The pins whose records came back take the records' current values (merged by ingest from every
            # tool output for the id; a pin read them from turns, which show a long output clipped).
            plan.hydrate(current_records(memories), rules, self.tokens)
            if not request.text:
                # Retrieved for the latest turns, not asked for: what the recent turns already show is not
                # shown twice, its room goes to other memories.
                visible = (plan.pinned_text + "\n" + recent_text(plan.recent)).lower()
                memories = [
                    replace(r, memory=compact_record(r.memory, plan.pins))
                    for r in memories
                    if not shown_by_recent(r.memory, plan.recent, visible)
                    and not shown_elsewhere(r.memory, plan.pins, visible)
                ]
                named = named_ids(working)
                memories = packed(named_first(memories, named), plan.memory_budget, count, named, plan.hints)
            from_prefetch = answer.from_prefetch
        # The memories as shown (with their dates) stay within their budget: the lowest ranked go first. What
        # they leave goes to older summary lines and turns. The header was paid for up front.
        shown = ShownMemories(memories, count)
        dropped += shown.fit(plan.memory_budget)
        fill(plan, state.memory, state.tail, shown.lines_tokens(), self.tokens)
        return self._bundle(plan, shown, dropped, budget, encoding, count, from_prefetch, latest)

    def _bundle(
        self,
        plan: ContextPlan,
        shown: ShownMemories,
        dropped: int,
        budget: int,
        encoding: str,
        count: Callable[[str], int],
        from_prefetch: bool,
        latest: CompactionRecord | None,
    ) -> ContextBundle:
        texts = {
            "pinned": plan.pinned_text,
            "memories": shown.text(),
            "summary": plan.summary,
            "recent": recent_text(plan.recent),
        }

        def in_pieces(name: str, text: str) -> list[str]:
            return recent_pieces(plan.recent) if name == "recent" else [text]

        def total() -> int:
            present = [(name, t) for name, t in texts.items() if t]
            pieces: list[str] = []
            for i, (name, text) in enumerate(present):
                # The memories change with every question, their lines do not: count them line by line; and
                # the recent turns turn by turn, as one more arrives after every write.
                pieces.extend(shown.pieces() if name == "memories" else in_pieces(name, text))
                if i < len(present) - 1:
                    pieces[-1] += SEPARATOR
            return joined_count(pieces, count)

        # Exact count in the request's encoding; if the plan's estimate was short, shed the least needed
        # first: the lowest-ranked memory, the oldest summary line, the oldest turn but the last, the
        # lowest-ranked pin, then the last turn is clipped further. Never an error at MIN_BUDGET_TOKENS or more.
        context_tokens = total()
        while context_tokens > budget:
            over = context_tokens - budget
            if shown.memories:
                shown.pop()
                dropped += 1
                texts["memories"] = shown.text()
            elif plan.summary_lines:
                plan.summary_lines.pop(0)
                texts["summary"] = plan.summary
            elif len(plan.recent) > 1:
                plan.recent.pop(0)
                texts["recent"] = recent_text(plan.recent)
            elif plan.drop_pin(self.tokens):
                texts["pinned"] = plan.pinned_text
            elif plan.recent and (cut := clip(plan.recent[0], plan.recent[0].tokens - over - 2, self.tokens)):
                plan.recent[0] = cut
                plan.clipped = max(plan.clipped, 1)
                texts["recent"] = recent_text(plan.recent)
            elif plan.recent:
                plan.recent.pop(0)
                texts["recent"] = recent_text(plan.recent)
            else:
                detail = f"nothing of the session fits {budget} {encoding} tokens"
                raise ContextDoesNotFit(context_tokens, budget, detail)
            context_tokens = total()
        parts = [
            ContextPart(n, joined_count(shown.pieces() if n == "memories" else in_pieces(n, t), count), t)
            for n, t in texts.items()
            if t
        ]
        context = SEPARATOR.join(t for t in texts.values() if t)
        return ContextBundle(
            memories=shown.memories,
            # As without a session: the memories' tokens. The whole context's count is context_tokens.
            total_tokens=sum(r.memory.tokens for r in shown.memories),
            budget_tokens=budget,
            dropped=dropped,
            encoding=encoding,
            from_prefetch=from_prefetch,
            context_tokens=context_tokens,
            pinned=list(plan.pins),
            summary=plan.summary,
            recent_turns=list(plan.recent),
            parts=parts,
            context=context,
            notice=plan.notice(),
            last_compaction=latest,
        )
