"""The consolidator's expiry sweep: memories whose schema TTL has passed leave every store.

Promotion (MID → LONG when a fact comes back in another session) and dedup (one memory per fact, with a
mention count) happen as turns are written (usecases.IngestTurn). Expiry runs in two places, both through
ExpireMemories: after each turn for the writing user (at most once per `every_s` per user, so its cost
follows the traffic), and periodically (SweepIdle) for every user holding an expired memory, so a user who
stopped writing does not keep them forever. The vector index and the entity graph live in the retrieve service:
expired ids are published on the memories topic for it (it unlinks them from the graph)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from opentelemetry import metrics

from acm.domain.models import stable_id
from acm.domain.retention import expiry_cutoffs
from acm.domain.schema import Retention
from acm.domain.scope import Scope, Tier
from acm.ports.owners import SchemaSource
from acm.ports.stores import Cache, MemoryRepo
from acm.prefetch_state import bump_generations

log = logging.getLogger("acm.ingest.consolidate")
# OpenTelemetry instruments (no-ops until a MeterProvider is configured), beside each run's log line.
_meter = metrics.get_meter("acm.ingest")
_IDLE_USERS = _meter.create_counter("acm.expiry.idle_sweep.users", description="users swept, by outcome")
_IDLE_EXPIRED = _meter.create_counter("acm.expiry.idle_sweep.memories", description="memories the idle sweep erased")

LAST_SWEEP_KEY = "consolidator_last_sweep"


class ExpiryEvents(Protocol):
    """Where erased memories' ids go (acm_ingest.events.BusEvents: the memories topic, for their vectors)."""

    async def memories_expired(
        self, scope: Scope, memory_ids: Sequence[str], event_id: str, traceparent: str = ""
    ) -> None: ...


@dataclass
class ExpireMemories:
    memories: MemoryRepo
    cache: Cache
    events: ExpiryEvents
    every_s: float = 3600.0
    batch: int = 500

    async def __call__(self, scope: Scope, retention: Retention, now: datetime, traceparent: str = "") -> int:
        """Expired memories of the scope's user and agent, erased; returns how many (0 if swept recently)."""
        user = Scope(scope.client_id, scope.customer_id, scope.user_id, scope.agent_id)
        if await self.cache.get(user, LAST_SWEEP_KEY):
            return 0
        await self.cache.set(user, LAST_SWEEP_KEY, now.isoformat().encode(), self.every_s)
        expired = await self.sweep(user, retention, now, traceparent)
        if expired == self.batch:
            await self.cache.delete(user, LAST_SWEEP_KEY)  # more to do: the next turn sweeps again
        return expired

    async def sweep(self, scope: Scope, retention: Retention, now: datetime, traceparent: str = "") -> int:
        """The same without the per-user throttle (the idle sweep lists only users with work); at most
        ``batch`` memories; returns how many."""
        user = Scope(scope.client_id, scope.customer_id, scope.user_id, scope.agent_id)
        expired = await self.memories.expire(user, expiry_cutoffs(retention, now), self.batch)
        if not expired:
            return 0
        # Prefetched bundles and assembled sessions of this user may hold what just expired.
        await bump_generations(self.cache, user, (Tier.USER,))
        await self.events.memories_expired(user, expired, stable_id("expired", *expired), traceparent)
        return len(expired)


# The holder ids of the scope the idle sweep reads a client with: the maintenance reads look at its
# client (and agent) only, but a Scope always names a customer and a user.
_SWEEPER = "0expiry-sweep"
PROGRESS_EVERY = 100  # users between two progress lines of a long run


@dataclass(frozen=True)
class SweepReport:
    users: int = 0  # users found with expired memories
    expired: int = 0  # memories erased
    failed: int = 0  # users whose sweep raised (logged; the next run retries them)
    capped: bool = False  # stopped at max_users; the next run goes on


@dataclass
class SweepIdle:
    """Expiry for every user, writing or not: client → agent (its latest schema's TTLs) → each user with
    an expired memory, at most ``max_users`` users per run, each through ExpireMemories.sweep.

    Several ingest replicas may run it at once without an election: expire() deletes with RETURNING, so a
    memory is erased (and its id published) by exactly one of them, and the rest find nothing to do."""

    memories: MemoryRepo
    schemas: SchemaSource  # the architect's (acm.ports.owners)
    expire: ExpireMemories
    max_users: int = 1000

    async def __call__(self, now: datetime) -> SweepReport:
        report = await self._run(now)
        _IDLE_USERS.add(report.users - report.failed, {"outcome": "swept"})
        _IDLE_USERS.add(report.failed, {"outcome": "failed"})
        _IDLE_EXPIRED.add(report.expired)
        if report.capped:
            log.info("idle expiry sweep stopped at %d users (the next run goes on): %s", report.users, report)
        else:
            log.info("idle expiry sweep: %s", report)
        return report

    async def _run(self, now: datetime) -> SweepReport:
        users = expired = failed = 0
        for client_id in await self.memories.clients_with_memories():
            for agent_id in await self.memories.agents(Scope(client_id, _SWEEPER, _SWEEPER)):
                scope = Scope(client_id, _SWEEPER, _SWEEPER, agent_id)
                schema = await self.schemas.latest(scope)
                cutoffs = expiry_cutoffs(schema.retention, now)
                for user in await self.memories.expiry_due(scope, cutoffs, self.max_users - users):
                    users += 1
                    if users % PROGRESS_EVERY == 0:
                        log.info(
                            "idle expiry sweep: %d users, %d memories so far (at client %s)", users, expired, client_id
                        )
                    try:
                        expired += await self.expire.sweep(user, schema.retention, now)
                    except Exception:
                        # One user's failure must not stall everyone sorted after them.
                        failed += 1
                        log.exception(
                            "expiry sweep of %s/%s/%s/%s failed", client_id, user.customer_id, user.user_id, agent_id
                        )
                if users >= self.max_users:
                    return SweepReport(users, expired, failed, capped=True)
        return SweepReport(users, expired, failed)
