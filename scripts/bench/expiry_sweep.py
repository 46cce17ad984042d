"""Idle expiry sweep benchmark: the cost of finding the work (the three maintenance reads) on a large table.

Seeds the same synthetic user-tier memories (clients × users × agents, a small share past the TTLs) into
SQLite (a temporary file) and Postgres (a private schema, dropped afterwards; skipped without a DSN), then
times, side by side, each MemoryRepo read the sweep makes against the plain query it replaces:

- clients:  clients_with_memories() (one index seek per client)  vs  SELECT DISTINCT client_id;
- agents:   agents(scope) (one index seek per agent)             vs  SELECT DISTINCT agent_id of a client;
- due:      expiry_due(scope, cutoffs) (a range per layer)       vs  expire()'s predicate as one OR.

Both sides must return the same rows (checked). Medians over --repeats; table to stdout, everything to
results/expiry_sweep.json.

    .venv/bin/python scripts/bench/expiry_sweep.py [--memories 200000] [--repeats 20]
        [--postgres-dsn $ACM_TEST_POSTGRES_DSN] [--out results/expiry_sweep.json] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from acm.adapters.postgres_store import PostgresStore
from acm.adapters.sqlite_store import SqliteStore, _ts
from acm.domain.models import Layer, Memory
from acm.domain.retention import expiry_cutoffs
from acm.domain.schema import Retention
from acm.domain.scope import Scope, Tier

ROOT = Path(__file__).resolve().parents[2]
RETENTION = Retention(short_ttl_days=2, mid_ttl_days=30, long_ttl_days=365)
OLD_SHARE = 0.01  # memories past their layer's TTL
Store = SqliteStore | PostgresStore


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def synthetic(n: int, clients: int, users: int, agents: int, now: datetime) -> list[Memory]:
    rnd = random.Random(7)
    out = []
    for i in range(n):
        layer = rnd.choice(list(Layer))
        ttl = {Layer.SHORT: 2, Layer.MID: 30, Layer.LONG: 365}[layer]
        age = ttl * (1.5 if rnd.random() < OLD_SHARE else rnd.random() * 0.9)
        owner = Scope(f"client{i % clients}", "acme", f"user{rnd.randrange(users)}").owner(Tier.USER)
        created = now - timedelta(days=age)
        out.append(Memory(f"m{i}", owner, "t", layer, "fact", (), created, f"agent{rnd.randrange(agents)}"))
    return out


async def seed(store: Store, memories: list[Memory], name: str) -> None:
    for start in range(0, len(memories), 5000):
        await store.memories.upsert(memories[start : start + 5000])
        if (start // 5000) % 10 == 0:
            log(f"{name}: seeded {start + min(5000, len(memories) - start)}/{len(memories)}")
    if isinstance(store, SqliteStore):
        await store.executor.execute("ANALYZE")
    else:
        await store.executor.execute("ANALYZE memories")


def baselines(store: Store, scope: Scope, cutoffs: dict[Layer, datetime]) -> dict[str, Callable[[], Awaitable[Any]]]:
    pg = isinstance(store, PostgresStore)
    ph = "%s" if pg else "?"
    ex = store.executor

    async def clients() -> list[str]:
        rows = await ex.fetch("SELECT DISTINCT client_id FROM memories WHERE tier = 'user' ORDER BY client_id")
        return [r["client_id"] for r in rows]

    async def agents() -> list[str]:
        sql = f"SELECT DISTINCT agent_id FROM memories WHERE tier = 'user' AND client_id = {ph} ORDER BY agent_id"
        return [r["agent_id"] for r in await ex.fetch(sql, [scope.client_id])]

    async def due() -> list[Scope]:
        by_layer = " OR ".join(f"(layer = {ph} AND COALESCE(updated_at, created_at) < {ph})" for _ in cutoffs)
        params: list[Any] = [scope.client_id, scope.agent_id]
        for layer, cutoff in cutoffs.items():
            params += [str(layer), cutoff if pg else _ts(cutoff)]
        rows = await ex.fetch(
            f"SELECT DISTINCT customer_id, user_id FROM memories WHERE tier = 'user' AND client_id = {ph} "
            f"AND agent_id = {ph} AND ({by_layer}) ORDER BY customer_id, user_id LIMIT {ph}",
            [*params, 1000],
        )
        return [Scope(scope.client_id, r["customer_id"], r["user_id"], scope.agent_id) for r in rows]

    return {"clients": clients, "agents": agents, "due": due}


async def median_ms(fn: Callable[[], Awaitable[Any]], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        await fn()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 3)


async def measure(store: Store, name: str, repeats: int, now: datetime) -> dict[str, Any]:
    scope = Scope("client1", "0bench", "0bench", "agent1")
    cutoffs = expiry_cutoffs(RETENTION, now)
    ours: dict[str, Callable[[], Awaitable[Any]]] = {
        "clients": store.memories.clients_with_memories,
        "agents": lambda: store.memories.agents(scope),
        "due": lambda: store.memories.expiry_due(scope, cutoffs, 1000),
    }
    base = baselines(store, scope, cutoffs)
    out: dict[str, Any] = {}
    for read in ours:
        got, expected = await ours[read](), await base[read]()
        if got != expected:
            raise SystemExit(f"{name} {read}: the sweep's read and the plain query disagree")
        ours_ms, base_ms = await median_ms(ours[read], repeats), await median_ms(base[read], repeats)
        out[read] = {"rows": len(got), "ours_ms": ours_ms, "baseline_ms": base_ms, "speedup": _ratio(base_ms, ours_ms)}
        log(f"{name} {read}: {ours_ms} ms vs {base_ms} ms ({len(got)} rows)")
    return out


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 1) if b else None


def table(backends: dict[str, dict[str, Any]]) -> str:
    head = f"{'backend':<9} {'read':<8} {'rows':>5} {'sweep ms':>9} {'plain ms':>9} {'ratio':>6}"
    lines = [head, "-" * len(head)]
    for backend, reads in backends.items():
        for read, r in reads.items():
            lines.append(
                f"{backend:<9} {read:<8} {r['rows']:>5} {r['ours_ms']:>9.3f} {r['baseline_ms']:>9.3f} "
                f"{r['speedup'] if r['speedup'] is not None else '-':>6}"
            )
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    now = datetime.now(UTC)
    memories = synthetic(args.memories, args.clients, args.users, args.agents, now)
    backends: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="expiry-sweep-", dir=args.tmp_dir) as tmp:
        sqlite = await SqliteStore.open(Path(tmp) / "acm.db")
        try:
            await seed(sqlite, memories, "sqlite")
            backends["sqlite"] = await measure(sqlite, "sqlite", args.repeats, now)
        finally:
            await sqlite.close()
    if args.postgres_dsn:
        schema = f"bench_expiry_{uuid.uuid4().hex[:8]}"
        pg = await PostgresStore.open(args.postgres_dsn, schema=schema, timeout_s=60)
        try:
            await seed(pg, memories, "postgres")
            backends["postgres"] = await measure(pg, "postgres", args.repeats, now)
        finally:
            await pg.executor.execute(f"DROP SCHEMA {schema} CASCADE")
            await pg.close()
    else:
        log("postgres skipped (no --postgres-dsn / ACM_TEST_POSTGRES_DSN)")
    return {
        "benchmark": "expiry_sweep",
        "date": now.isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "data": {
            "memories": args.memories,
            "clients": args.clients,
            "users": args.users,
            "agents": args.agents,
            "old_share": OLD_SHARE,
        },
        "repeats": args.repeats,
        "backends": backends,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--memories", type=int, default=200_000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--users", type=int, default=2000, help="user ids per client")
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--postgres-dsn", default=os.environ.get("ACM_TEST_POSTGRES_DSN", ""))
    parser.add_argument("--tmp-dir", default=None, help="where the SQLite file goes (default: the system's)")
    parser.add_argument("--out", type=Path, default=ROOT / "results/expiry_sweep.json")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args(argv)
    if args.quick:
        args.memories, args.clients, args.users, args.repeats = 2000, 4, 50, 3
    result = asyncio.run(run(args))
    print(f"median of {args.repeats} runs; {args.memories} user-tier memories, {OLD_SHARE:.0%} past their TTL")
    print(table(result["backends"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
