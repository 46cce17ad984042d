"""Pick the embedded vector store by measurement: qdrant-client local mode (on disk) vs qdrant-edge.

For each size N, random normalised 256-d vectors owned across 2 clients / 10 customers / 50 users (80 %
user-tier, 15 % customer-tier, 5 % client-tier) go through the real adapters (QdrantVectorStore,
EdgeVectorStore), measuring:

- upsert throughput (points/s, batches of 256);
- filtered search latency p50/p95 over Q queries in a user's scope (k=20), and recall@20 against exact
  brute force over the visible points (a fast but wrong store must not win);
- open time of the existing store (construct + ensure), and the first search after it;
- RSS growth (VmRSS) from before the store opened to after the searches, and bytes on disk.

Each (adapter, N, repeat) runs in a fresh child process so memory numbers do not bleed between cases.
Medians over repeats go in the table and in results/vector_embedded.json.

    .venv/bin/python scripts/bench/vector_embedded.py [--sizes 2000,20000] [--repeats 3] [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from acm.adapters.edge_store import EdgeVectorStore
from acm.adapters.qdrant_store import QdrantVectorStore
from acm.domain.models import Layer
from acm.domain.scope import Owner, Scope, Tier, visible
from acm.ports.stores import VectorPoint, VectorStore

ROOT = Path(__file__).resolve().parents[2]
DIM = 256
BATCH = 256
K = 20
MODEL = "bench"  # every point and query of one (made-up) embedding model
ADAPTERS = ("qdrant-local", "edge")
CLIENTS, CUSTOMERS_PER_CLIENT, USERS_PER_CUSTOMER = 2, 5, 5  # 2 clients, 10 customers, 50 users
Metrics = dict[str, float]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def rss_kb() -> int:
    """Resident set size from /proc (psutil is not installed)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def disk_bytes(path: Path) -> int:
    """Allocated bytes: edge preallocates sparse mmap files, whose apparent size means little."""
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file())


def make_store(adapter: str, folder: Path) -> VectorStore:
    if adapter == "edge":
        return EdgeVectorStore(folder / "edge")
    # A generous timeout: local mode is brute force in Python, and we measure it rather than cut it off.
    return QdrantVectorStore.from_url(f"qdrant-local://{folder / 'qdrant'}", timeout_s=120.0)


def users() -> list[Scope]:
    return [
        Scope(f"client{c}", f"cust{c}-{k}", f"user{c}-{k}-{u}")
        for c in range(CLIENTS)
        for k in range(CUSTOMERS_PER_CLIENT)
        for u in range(USERS_PER_CUSTOMER)
    ]


def make_data(n: int, seed: int) -> tuple[np.ndarray, list[Owner], list[VectorPoint]]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    people = users()
    tier_draw = rng.random(n)
    who = rng.integers(0, len(people), n)
    owners: list[Owner] = []
    points: list[VectorPoint] = []
    now = datetime.now(UTC)
    for i in range(n):
        scope = people[who[i]]
        tier = Tier.USER if tier_draw[i] < 0.80 else Tier.CUSTOMER if tier_draw[i] < 0.95 else Tier.CLIENT
        owner = scope.owner(tier)
        owners.append(owner)
        session = f"s{i % 7}" if tier is Tier.USER else ""
        points.append(
            VectorPoint(uuid.UUID(bytes=rng.bytes(16)).hex, vectors[i].tolist(), owner, Layer.LONG, now, session, MODEL)
        )
    return vectors, owners, points


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


async def run_case(adapter: str, n: int, queries: int, seed: int, folder: Path) -> Metrics:
    vectors, owners, points = make_data(n, seed)
    id_index = {p.memory_id: i for i, p in enumerate(points)}
    people = users()
    rng = np.random.default_rng(seed + 1)
    qvecs = rng.standard_normal((queries, DIM)).astype(np.float32)
    qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
    readers = [people[int(i)] for i in rng.integers(0, len(people), queries)]
    qlists = [q.tolist() for q in qvecs]

    rss0 = rss_kb()
    store = make_store(adapter, folder)
    await store.ensure(DIM)
    t0 = time.perf_counter()
    for i in range(0, n, BATCH):
        await store.upsert(points[i : i + BATCH])
    upsert_s = time.perf_counter() - t0
    log(f"{adapter} N={n}: upserted {n} in {upsert_s:.2f}s")

    latencies: list[float] = []
    results: list[list[tuple[str, float]]] = []
    for q, reader in zip(qlists, readers, strict=True):
        t = time.perf_counter()
        results.append(await store.search(reader, q, K, model=MODEL))
        latencies.append(time.perf_counter() - t)
    rss1 = rss_kb()
    log(f"{adapter} N={n}: {queries} searches, p50 {percentile(latencies, 50) * 1e3:.3f} ms")

    # Exact answer over the visible points, outside the timed section.
    hits = 0.0
    masks: dict[Scope, np.ndarray] = {}
    for q, reader, got in zip(qvecs, readers, results, strict=True):
        if reader not in masks:
            masks[reader] = np.fromiter((visible(reader, o) for o in owners), dtype=bool, count=n)
        mask = masks[reader]
        scores = np.where(mask, vectors @ q, -np.inf)
        truth = set(np.argsort(-scores)[: min(K, int(mask.sum()))].tolist())
        hits += len(truth & {id_index[m] for m, _ in got}) / max(1, len(truth))
    recall = hits / queries

    await store.close()
    disk = disk_bytes(folder)

    t0 = time.perf_counter()
    reopened = make_store(adapter, folder)
    await reopened.ensure(DIM)
    open_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = await reopened.search(readers[0], qlists[0], K, model=MODEL)
    first_search_s = time.perf_counter() - t0
    await reopened.close()
    if [m for m, _ in again] != [m for m, _ in results[0]]:
        raise AssertionError(f"{adapter}: the reopened store answers differently")
    log(f"{adapter} N={n}: reopened in {open_s * 1e3:.1f} ms")

    return {
        "upsert_points_per_s": n / upsert_s,
        "search_p50_ms": percentile(latencies, 50) * 1e3,
        "search_p95_ms": percentile(latencies, 95) * 1e3,
        "recall_at_20": recall,
        "open_ms": open_s * 1e3,
        "first_search_after_open_ms": first_search_s * 1e3,
        "rss_delta_mb": (rss1 - rss0) / 1024,
        "disk_mb": disk / 2**20,
    }


def child(adapter: str, n: int, queries: int, seed: int) -> None:
    warnings.simplefilter("ignore")  # local mode warns about its own size limits; we measure instead
    with tempfile.TemporaryDirectory(prefix="vector-bench-") as tmp:
        metrics = asyncio.run(run_case(adapter, n, queries, seed, Path(tmp)))
    print(json.dumps(metrics))


def run_child(adapter: str, n: int, queries: int, seed: int) -> Metrics:
    cmd = [sys.executable, __file__, "--case", adapter, str(n), str(queries), str(seed)]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


ROWS: list[tuple[str, str, str]] = [
    # (metric, label, which is better)
    ("upsert_points_per_s", "upsert (points/s)", "higher"),
    ("search_p50_ms", "search p50 (ms)", "lower"),
    ("search_p95_ms", "search p95 (ms)", "lower"),
    ("recall_at_20", "recall@20", "higher"),
    ("open_ms", "open existing (ms)", "lower"),
    ("first_search_after_open_ms", "1st search after open (ms)", "lower"),
    ("rss_delta_mb", "RSS delta (MB)", "lower"),
    ("disk_mb", "on disk (MB)", "lower"),
]


def fmt(x: float) -> str:
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.3f}"


def table(medians: dict[int, dict[str, Metrics]]) -> str:
    head = f"{'metric':<28}" + "".join(
        f"{'N=' + format(n, ','):>12}{'local':>11}{'edge':>11}{'edge/local':>12}" for n in medians
    )
    lines = [head, "-" * len(head)]
    for key, label, better in ROWS:
        line = f"{label:<28}"
        for by_adapter in medians.values():
            local, edge = by_adapter["qdrant-local"][key], by_adapter["edge"][key]
            ratio = edge / local if local else float("nan")
            line += f"{'':>12}{fmt(local):>11}{fmt(edge):>11}{ratio:>11.3g}x"
        lines.append(line + f"   ({better} is better)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="2000,20000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "vector_embedded.json")
    parser.add_argument("--case", nargs=4, metavar=("ADAPTER", "N", "QUERIES", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        adapter, n, queries, seed = args.case
        child(adapter, int(n), int(queries), int(seed))
        return

    sizes = [int(s) for s in args.sizes.split(",")]
    runs: dict[int, dict[str, list[Metrics]]] = {n: {a: [] for a in ADAPTERS} for n in sizes}
    for n in sizes:
        for rep in range(args.repeats):
            # Alternate the order so neither adapter always runs on a warmer machine.
            order = ADAPTERS if rep % 2 == 0 else tuple(reversed(ADAPTERS))
            for adapter in order:
                log(f"case {adapter} N={n} repeat {rep + 1}/{args.repeats}")
                runs[n][adapter].append(run_child(adapter, n, args.queries, args.seed + rep))

    medians = {
        n: {a: {key: statistics.median(r[key] for r in rs) for key in rs[0]} for a, rs in by_adapter.items()}
        for n, by_adapter in runs.items()
    }
    ratios = {
        n: {key: by["edge"][key] / by["qdrant-local"][key] for key in by["edge"] if by["qdrant-local"][key]}
        for n, by in medians.items()
    }
    print()
    print(f"median of {args.repeats} runs; {args.queries} queries per run, k={K}, dim={DIM}, batch={BATCH}")
    print(table(medians))

    report: dict[str, Any] = {
        "benchmark": "vector_embedded",
        "at": datetime.now(UTC).isoformat(),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "config": {
            "sizes": sizes,
            "repeats": args.repeats,
            "queries": args.queries,
            "k": K,
            "dim": DIM,
            "batch": BATCH,
            "owners": {
                "clients": 2,
                "customers": 10,
                "users": 50,
                "tiers": "80% user, 15% customer, 5% client",
            },
            "adapters": {
                "qdrant-local": "QdrantVectorStore, qdrant-client local mode on disk",
                "edge": "EdgeVectorStore",
            },
        },
        "medians": {str(n): m for n, m in medians.items()},
        "ratios_edge_over_local": {str(n): r for n, r in ratios.items()},
        "runs": {str(n): r for n, r in runs.items()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
