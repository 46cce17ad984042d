"""Where a Fetch served from the prefetch pool spends its time, layer by layer (embedded mode, over gRPC).

Replays LoCoMo conversations as `acm bench prefetch` does. For every question the gateway serves from
the session's pool, it times two Fetches: the first one after the replay caught up with the turns (every
consumer, the gateway's warm-up included, is done), then the same Fetch again. Each layer is timed by
wrapping its method at run time (no product code changes): the client's round trip, the gateway's RPC
handler (authentication, tracing), FetchContext, SessionContext (assembly), KeptSessions (the session) and
PrefetchingRetriever (the pool). A trivial RPC (GetJob) gives the gRPC round trip without work. Medians
in a table; everything in results/fetch_layers.json.

    .venv/bin/python scripts/bench/fetch_layers.py --data ../shared/data/locomo-dev.json \
        [--limit-conversations 1] [--out results/fetch_layers.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import acm_benchmarks.prefetch as replay
from acm.read.kept_sessions import KeptSessions
from acm.read.prefetching import PrefetchingRetriever
from acm.read.session_context import SessionContext
from acm_gateway.api import GatewayServicer
from acm_gateway.usecases import FetchContext

LAYERS: dict[str, tuple[type, str]] = {
    "gateway_rpc": (GatewayServicer, "Fetch"),
    "fetch_context": (FetchContext, "__call__"),
    "session_context": (SessionContext, "__call__"),
    "kept_session": (KeptSessions, "__call__"),
    "pool": (PrefetchingRetriever, "retrieve"),
}
ROUNDS = ("first", "repeated")


class Timings:
    def __init__(self) -> None:
        self.last: dict[str, float] = {}
        self.rows: dict[str, list[dict[str, float]]] = {r: [] for r in ROUNDS}
        self.rpc_round_trip_ms: list[float] = []

    def wrap(self, name: str, cls: type, method: str) -> None:
        inner: Callable[..., Awaitable[Any]] = getattr(cls, method)

        async def timed(obj: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await inner(obj, *args, **kwargs)
            finally:
                self.last[name] = (time.perf_counter() - start) * 1000

        setattr(cls, method, timed)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    p.add_argument("--limit-conversations", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path("results/fetch_layers.json"))
    args = p.parse_args()
    timings = Timings()
    for name, (cls, method) in LAYERS.items():
        timings.wrap(name, cls, method)
    asked = replay._ask

    async def ask_and_time(scope: Any, question: Any, acm: Any, fetch: Any, *a: Any, **k: Any) -> None:
        # From the benchmark's own loop (Options.client below): the layers are timed in this process.
        for round_name in ROUNDS:
            timings.last.clear()
            response, client_ms = await fetch("prefetch", scope, question.text, replay.DEFAULT_BUDGET)
            if not response.from_prefetch:
                break
            timings.rows[round_name].append(
                {"client_round_trip": client_ms, **timings.last, "response_bytes": response.ByteSize()}
            )
        if last_job:
            # GetJob of the latest turn: one small row read, so about the bare gRPC round trip.
            client, job_scope, job_id = last_job[-1]
            start = time.perf_counter()
            await client.get_job(job_scope, job_id)
            timings.rpc_round_trip_ms.append((time.perf_counter() - start) * 1000)
        await asked(scope, question, acm, fetch, *a, **k)

    ingest = replay.ingest_turn
    last_job: list[tuple[Any, Any, str]] = []

    async def ingest_and_remember(client: Any, scope: Any, turn: Any) -> str:
        job_id = await ingest(client, scope, turn)
        last_job[:] = [(client, scope, job_id)]
        return job_id

    replay._ask = ask_and_time  # type: ignore[assignment]
    replay.ingest_turn = ingest_and_remember  # type: ignore[assignment]
    options = replay.Options(
        data=args.data,
        json_out=None,
        plot_out=None,
        limit_conversations=args.limit_conversations,
        budget=replay.DEFAULT_BUDGET,
        embedder="minilm",
        data_dir=None,
        client="in-process",
        ask_at=("evidence",),  # the placement these figures were first measured at
    )
    asyncio.run(replay.run_benchmark(options))

    columns = ["client_round_trip", *LAYERS, "response_bytes"]
    result: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "data": args.data.name,
        "conversations": args.limit_conversations,
        "served_fetches": len(timings.rows["first"]),
        "trivial_rpc_round_trip_ms_p50": _median(timings.rpc_round_trip_ms),
        "median_ms": {
            r: {c: _median([row[c] for row in timings.rows[r] if c in row]) for c in columns} for r in ROUNDS
        },
    }
    print(f"served from the pool: {result['served_fetches']} Fetches; medians in ms (bytes for the response)")
    print(f"{'layer':<20}" + "".join(f"{r:>12}" for r in ROUNDS))
    for c in columns:
        print(f"{c:<20}" + "".join(f"{result['median_ms'][r][c]!s:>12}" for r in ROUNDS))
    print(f"{'trivial RPC':<20}{result['trivial_rpc_round_trip_ms_p50']!s:>12}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
