"""Trimming a session's working context to its budget (newest turns first)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from acm.domain.models import Memory
from acm.domain.scope import ForgetLevel, Scope
from acm.ports.stores import Cache, MemoryRepo

WORKING_CONTEXT_KEY = "working_context"
SESSION_TOKENS_KEY = "session_tokens"  # written by ingest as turns arrive


@dataclass(frozen=True, slots=True)
class WorkingContext:
    memory_ids: list[str]  # oldest first, as a prompt would read them
    tokens: int
    budget_tokens: int
    trimmed_turns: int  # left the working context (still retrievable as memories)
    trimmed_tokens: int


@dataclass
class TrimSession:
    memories: MemoryRepo
    cache: Cache
    target_ratio: float
    max_session_turns: int

    async def __call__(self, scope: Scope, budget_tokens: int) -> WorkingContext:
        newest_first = await self.memories.session_memories(scope, self.max_session_turns)
        target = int(budget_tokens * self.target_ratio)
        # Keep the newest run of turns that fits: a gap in the middle would break the conversation.
        kept: list[Memory] = []
        total = 0
        for memory in newest_first:
            if total + memory.token_count > target:
                break
            kept.append(memory)
            total += memory.token_count
        trimmed = newest_first[len(kept) :]
        result = WorkingContext(
            memory_ids=[m.memory_id for m in reversed(kept)],
            tokens=total,
            budget_tokens=budget_tokens,
            trimmed_turns=len(trimmed),
            trimmed_tokens=sum(m.token_count for m in trimmed),
        )
        await self.cache.set(scope, WORKING_CONTEXT_KEY, json.dumps(asdict(result)).encode())
        # The session's running count restarts from what stays, so the next crossing is detected.
        current = await self.cache.incr(scope, SESSION_TOKENS_KEY, 0)
        await self.cache.incr(scope, SESSION_TOKENS_KEY, result.tokens - current)
        return result

    async def working_context(self, scope: Scope) -> WorkingContext | None:
        raw = await self.cache.get(scope, WORKING_CONTEXT_KEY)
        return WorkingContext(**json.loads(raw)) if raw else None


@dataclass
class DropWorkingContext:
    cache: Cache

    async def __call__(self, scope: Scope, level: ForgetLevel) -> int:
        return await self.cache.clear(scope, level)
