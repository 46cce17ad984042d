"""Is this machine's idle penalty (results/idle_penalty.json) paging inside the guest? A gRPC health Check after
an idle gap, with the page faults counted around each call (the process's own from getrusage, the system's
from /proc/vmstat), once as is and once in a child process that has locked its memory (mlockall), which
no reclaim inside the guest can page out. Prints a table; writes results/idle_faults.json.

    .venv/bin/python scripts/bench/idle_faults.py [--repeats 8] [--out results/idle_faults.json]
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _results import write_results

GAPS_S = (0.0, 0.2, 1.0, 3.0)
MCL_CURRENT, MCL_FUTURE = 1, 2


def system_major_faults() -> int:
    for line in Path("/proc/vmstat").read_text().splitlines():
        if line.startswith("pgmajfault "):
            return int(line.split()[1])
    return 0


async def measure(repeats: int) -> list[dict[str, float]]:
    import grpc
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc

    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    rows = []
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            for _ in range(50):
                await stub.Check(health_pb2.HealthCheckRequest())
            for gap in GAPS_S:
                ms, own, system = [], 0, 0
                for _ in range(repeats):
                    await asyncio.sleep(gap)
                    before, sys_before = resource.getrusage(resource.RUSAGE_SELF), system_major_faults()
                    start = time.perf_counter()
                    await stub.Check(health_pb2.HealthCheckRequest())
                    ms.append((time.perf_counter() - start) * 1000)
                    after = resource.getrusage(resource.RUSAGE_SELF)
                    own += after.ru_majflt - before.ru_majflt
                    system += system_major_faults() - sys_before
                rows.append(
                    {
                        "idle_s": gap,
                        "median_ms": round(statistics.median(ms), 2),
                        "process_major_faults_per_call": own / repeats,
                        "system_major_faults_per_call": system / repeats,
                    }
                )
    finally:
        await server.stop(None)
    return rows


def child(repeats: int, lock: bool) -> None:
    if lock:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        if libc.mlockall(MCL_CURRENT | MCL_FUTURE) != 0:
            raise SystemExit(f"mlockall failed (errno {ctypes.get_errno()}): raise `ulimit -l`")
    print(json.dumps(asyncio.run(measure(repeats))))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--repeats", type=int, default=8)
    p.add_argument("--out", type=Path, default=Path("results/idle_faults.json"))
    p.add_argument("--child", choices=["plain", "locked"], help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.repeats, args.child == "locked")
        return
    results: dict[str, Any] = {}
    for mode in ("plain", "locked"):
        print(f"[{time.strftime('%H:%M:%S')}] {mode} ...", file=sys.stderr, flush=True)
        out = subprocess.run(
            [sys.executable, __file__, "--child", mode, "--repeats", str(args.repeats)],
            capture_output=True,
            text=True,
            check=True,
        )
        results[mode] = json.loads(out.stdout)
    print(f"{'idle s':>6} | {'plain ms':>8} | {'proc majflt':>11} | {'sys majflt':>10} | {'mlockall ms':>11}")
    for plain, locked in zip(results["plain"], results["locked"], strict=True):
        print(
            f"{plain['idle_s']:>6} | {plain['median_ms']:>8} | {plain['process_major_faults_per_call']:>11} | "
            f"{plain['system_major_faults_per_call']:>10} | {locked['median_ms']:>11}"
        )
    write_results(args.out, {"repeats": args.repeats, "plain": results["plain"], "mlockall": results["locked"]})


if __name__ == "__main__":
    main()
