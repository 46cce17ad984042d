"""Compact use cases: verified compaction of a session's working memory, and forgetting it.

The same CompactSession serves the compaction-request handler (off the critical path) and the gateway's
synchronous Compact RPC; both swap the result in with a compare-and-swap on the stored version, so two
concurrent compactions of one session cannot both win and no turn is lost (the loser's turns are still
after the winner's ``through`` mark, so the next compaction or fetch picks them up)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from opentelemetry import metrics
from pydantic import BaseModel, Field

from acm.domain.compaction.engine import (
    CompactionResult,
    WorkingMemory,
    compact,
    first_cut,
    pinned_text,
    summary_text,
    working_tokens,
)
from acm.domain.compaction.record import CompactionRecord
from acm.domain.compaction.summary import span_turn
from acm.domain.errors import InvalidRequest
from acm.domain.scope import ForgetLevel, Scope
from acm.domain.tokens import TokenCounter
from acm.ports.compactor import StoredWorkingMemory
from acm.ports.llm import Llm
from acm.ports.stores import Cache
from acm.ports.working_memory import WorkingMemoryRepo
from acm.read.session import LoadSession, SessionNotFound, SessionState
from acm.session_memory import touch_session
from acm.structured import StructuredAnswerFailed, ask_structured

log = logging.getLogger("acm.compact")
# OpenTelemetry instruments (no-ops until a MeterProvider is configured): every compaction's outcome,
# verification and ratio, beside the record in the store and the log line.
_meter = metrics.get_meter("acm.compact")
_COMPACTIONS = _meter.create_counter("acm.compactions", description="compactions by outcome and verification")
_RATIO = _meter.create_histogram("acm.compaction.ratio", description="tokens after / tokens before")
_LATENCY = _meter.create_histogram("acm.compaction.latency", unit="ms", description="compaction latency")


class _Draft(BaseModel):
    lines: list[str] = Field(description="episodic summary lines: condition → tool (key inputs) → effect")


_SYSTEM = (
    "You compact an agent's conversation. Write a causal-chain summary, one line per exchange: the condition "
    "(what was asked or stated) → the tool called with its key inputs → its effect. Keep every id, amount with "
    "currency, number with unit, date, name and status exactly as written; drop HTTP codes, raw JSON, debug "
    "fields and chatter. Never state anything the turns do not say."
)


@dataclass
class ReadWorkingMemory:
    """Implements acm.ports.compactor.WorkingMemorySource over compact's own store: what the gateway's session
    context reads (GetWorkingMemory), and what a compaction starts from."""

    working: WorkingMemoryRepo

    async def working_memory(self, scope: Scope) -> StoredWorkingMemory:
        if not scope.session_id:
            raise InvalidRequest("a working memory needs scope.session_id")
        memory = await self.working.get(scope)
        latest = await self.working.compactions(scope, 1)
        return StoredWorkingMemory(memory, latest[0] if latest else None)


def shows(state: SessionState, turn_id: str) -> bool:
    """The session as read holds the turn: in its tail, among the working memory's recent turns, or covered by
    its last compaction."""
    memory = state.memory
    return (
        any(t.turn_id == turn_id for t in state.tail)
        or any(r.turn_id == turn_id for r in memory.recent)
        or turn_id in memory.through_ids
    )


@dataclass
class CompactSession:
    load: LoadSession
    working: WorkingMemoryRepo
    cache: Cache
    tokens: TokenCounter
    llm: Llm | None = None
    llm_timeout_s: float = 20.0
    counts: Counter[str] = field(default_factory=Counter)  # outcomes, verifier failures, LLM fallbacks
    # How long a request waits for retrieve's projection to show the turn that triggered it, re-reading every
    # catch_up_poll_s (the request can arrive before the turn's memories are projected).
    catch_up_s: float = 5.0
    catch_up_poll_s: float = 0.2
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep  # injected: tests do not wait

    async def __call__(self, scope: Scope, budget_tokens: int = 0) -> tuple[CompactionRecord, WorkingMemory | None]:
        start = time.perf_counter()
        return await self._compact(scope, await self.load(scope, budget_tokens), start)

    async def if_due(self, scope: Scope, budget_tokens: int, turn_id: str = "") -> CompactionRecord | None:
        """A requested compaction: done only while the working context is over the soft limit (None, and nothing
        recorded, when it is not). Ingest asks while its running count of the session's tokens is over the soft
        limit, again every tenth of the budget; that count only grows (ingest owns it: compact does not reset
        it after a swap), so this check is what keeps a compacted session from being compacted on every
        request. ``turn_id``: the turn that triggered the request; while the session as read does not show it
        (retrieve's projection is behind), it is read again, for at most catch_up_s, before it is called not
        due: ingest asks again only after the session grew. SessionNotFound as __call__."""
        start = time.perf_counter()
        state = await self.load(scope, budget_tokens)
        size = await self._size(state)
        waited = 0.0
        # Under the limit (or nothing read yet) while the triggering turn is not shown: the projection is behind.
        while (size is None or size < state.rules.soft_limit) and turn_id and not shows(state, turn_id):
            if waited >= self.catch_up_s:
                break
            await self.sleep(self.catch_up_poll_s)
            waited += self.catch_up_poll_s
            state = await self.load(scope, budget_tokens)
            size = await self._size(state)
        if size is not None and size < state.rules.soft_limit:
            self.counts["not_due"] += 1
            log.debug("session %s: %d tokens, under the soft limit %d", scope.session_key, size, state.rules.soft_limit)
            return None
        record, _ = await self._compact(scope, state, start)
        return record

    async def _size(self, state: SessionState) -> int | None:
        """The working context's tokens; None when the session has neither turns nor a working memory."""
        if not (state.stored or state.tail):
            return None
        return await asyncio.to_thread(working_tokens, state.memory, state.tail, self.tokens, state.rules)

    async def _compact(
        self, scope: Scope, state: SessionState, start: float
    ) -> tuple[CompactionRecord, WorkingMemory | None]:
        if not state.stored and not state.tail:
            raise SessionNotFound(
                f"session {scope.session_id!r} has no turns and no working memory (never ingested, or forgotten)"
            )
        working = [*state.memory.recent, *state.tail]
        draft, summariser = None, "deterministic"
        if working and all(t.role == "system" for t in working):
            result = CompactionResult(
                "unchanged", None, 0, 0, True, 0, message="the session has only system messages; they stay verbatim"
            )
        else:
            if self.llm is not None and not state.local_only:
                draft = await self._draft(state)
                summariser = self.llm.model if draft is not None else "deterministic"
            result = await asyncio.to_thread(compact, state.memory, state.tail, state.rules, self.tokens, draft)
            if draft is not None and result.attempts > 1:
                summariser = "deterministic"  # the verifier rejected the model's draft; the fallback was kept
        record = CompactionRecord.of(result, (time.perf_counter() - start) * 1000, summariser)
        self.counts[result.outcome] += 1
        if not result.verified:
            self.counts["verification_failed"] += 1
        attributes: dict[str, str | bool] = {
            "outcome": result.outcome,
            "verified": result.verified,
            "summariser": summariser,
        }
        _COMPACTIONS.add(1, attributes)
        _LATENCY.record(record.latency_ms, attributes)
        if result.memory is not None:
            _RATIO.record(result.ratio, attributes)
        if result.memory is None:
            await self.working.record(scope, record)
            await touch_session(self.cache, scope)
            log.info("session %s: %s (%s)", scope.session_key, record.outcome, record.message)
            return record, None
        if not await self.working.swap(scope, result.memory, record):
            self.counts["superseded"] += 1
            lost = replace(
                CompactionRecord.of(result, record.latency_ms, summariser),
                outcome="superseded",
                message="another compaction of this session swapped first; its result stands",
            )
            await self.working.record(scope, lost)
            await touch_session(self.cache, scope)
            return lost, None
        await touch_session(self.cache, scope)
        log.info(
            "session %s: %s %d → %d tokens (ratio %.2f), verified after %d attempt(s), %.1f ms",
            scope.session_key,
            record.outcome,
            record.tokens_before,
            record.tokens_after,
            record.ratio,
            record.attempts,
            record.latency_ms,
        )
        return record, result.memory

    async def _draft(self, state: SessionState) -> list[str] | None:
        """The model's summary of the span the engine will pick first; None (deterministic) if it fails."""
        assert self.llm is not None
        cut = first_cut(state.memory, state.tail, state.rules, self.tokens)
        turns = [*state.memory.recent, *state.tail][:cut]
        if not turns:
            return None
        span = [span_turn(t.turn_id, t.role, t.tool_name, t.body, t.speaker) for t in turns]
        prompt = "\n".join(f"[{t.speaker or t.role}] {t.text}" for t in span)
        prompt += f"\n\nAlready pinned:\n{pinned_text(state.memory.pinned)}\n{summary_text(state.memory.episodes)}"
        try:
            async with asyncio.timeout(self.llm_timeout_s):
                answer = await ask_structured(self.llm, _Draft, system=_SYSTEM, prompt=prompt)
        except (StructuredAnswerFailed, TimeoutError) as exc:
            self.counts["llm_fallback"] += 1
            log.warning("LLM summary failed, deterministic summary instead: %s", exc)
            return None
        return [line.strip() for line in answer.lines if line.strip()]


@dataclass
class DropWorkingContext:
    cache: Cache
    working: WorkingMemoryRepo

    async def __call__(self, scope: Scope, level: ForgetLevel) -> int:
        erased = await self.working.forget(scope, level)
        return erased + await self.cache.clear(scope, level)
