"""How much slower this machine runs a small piece of work right after being idle: the context for every
latency figure measured here (a Fetch that follows a pause pays this, whatever the code).

For each idle gap (the process sleeps, then works), the median over repeats of:
  - a TCP echo round trip between two threads over loopback;
  - a gRPC unary round trip (standard health Check, grpc.aio server and client on one event loop, as the
    benchmarks' embedded ACM and its client are);
  - the same gRPC call from a client in another process (as an agent would call);
  - a fixed pure-Python loop, and a numpy sum over 50 MB.
Each row's ratio is against the same work with no gap. Prints a table; writes results/idle_penalty.json.

    .venv/bin/python scripts/bench/idle_penalty.py [--repeats 15] [--out results/idle_penalty.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import grpc
import numpy as np
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

GAPS_S = (0.0, 0.01, 0.05, 0.2, 1.0)
WORK = ("tcp_echo", "grpc_same_loop", "grpc_other_process", "python_loop", "numpy_sum_50mb")


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


class Echo:
    """A loopback TCP echo served by a thread."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._serve, daemon=True).start()
        self.client = socket.create_connection(self._server.getsockname())
        self.client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _serve(self) -> None:
        conn, _ = self._server.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while data := conn.recv(64):
            conn.sendall(data)

    def round_trip(self) -> float:
        start = time.perf_counter()
        self.client.sendall(b"x")
        self.client.recv(64)
        return _ms(start)


def _python_loop() -> float:
    start = time.perf_counter()
    sum(i * i for i in range(20_000))
    return _ms(start)


async def _measure(gap_s: float, repeats: int, work: Callable[[], Awaitable[float]]) -> float:
    await work()  # one unmeasured call at this gap's rhythm
    times = []
    for _ in range(repeats):
        if gap_s:
            await asyncio.sleep(gap_s)
        times.append(await work())
    return statistics.median(times)


def _other_process(addr: str, repeats: int) -> dict[str, float]:
    """The gRPC round trip from a separate client process (this script with --client), per gap."""
    out = subprocess.run(
        [sys.executable, __file__, "--client", addr, "--repeats", str(repeats)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return {k: float(v) for k, v in json.loads(out).items()}


def _client_main(addr: str, repeats: int) -> None:
    with grpc.insecure_channel(addr) as channel:
        stub = health_pb2_grpc.HealthStub(channel)

        def call() -> float:
            start = time.perf_counter()
            stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
            return _ms(start)

        result = {}
        for gap in GAPS_S:
            call()
            times = []
            for _ in range(repeats):
                time.sleep(gap)
                times.append(call())
            result[str(gap)] = statistics.median(times)
    print(json.dumps(result))


async def run(repeats: int) -> dict[str, dict[str, float]]:
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    echo = Echo()
    data = np.ones(50_000_000 // 8)
    medians: dict[str, dict[str, float]] = {w: {} for w in WORK}
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)

        async def grpc_call() -> float:
            start = time.perf_counter()
            await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
            return _ms(start)

        async def numpy_sum() -> float:
            start = time.perf_counter()
            data.sum()
            return _ms(start)

        async def tcp() -> float:
            return echo.round_trip()

        async def loop() -> float:
            return _python_loop()

        works: dict[str, Callable[[], Awaitable[float]]] = {
            "tcp_echo": tcp,
            "grpc_same_loop": grpc_call,
            "python_loop": loop,
            "numpy_sum_50mb": numpy_sum,
        }
        for gap in GAPS_S:
            for name, work in works.items():
                medians[name][str(gap)] = await _measure(gap, repeats, work)
            print(f"  idle {gap:>5} s measured", flush=True)
        medians["grpc_other_process"] = await asyncio.to_thread(_other_process, f"127.0.0.1:{port}", repeats)
    await server.stop(0)
    return medians


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--out", type=Path, default=Path("results/idle_penalty.json"))
    p.add_argument("--client", help=argparse.SUPPRESS)  # internal: run as the other-process client
    args = p.parse_args()
    if args.client:
        _client_main(args.client, args.repeats)
        return
    print(f"idle penalty: {args.repeats} repeats per gap, gaps {', '.join(str(g) for g in GAPS_S)} s")
    medians = asyncio.run(run(args.repeats))
    header = f"{'median ms after idle':<22}" + "".join(f"{g:>10}" for g in GAPS_S)
    print(header)
    for name in WORK:
        row = medians[name]
        print(f"{name:<22}" + "".join(f"{row[str(g)]:>10.3f}" for g in GAPS_S))
    print(f"{'ratio to no gap':<22}")
    for name in WORK:
        row = medians[name]
        print(f"{name:<22}" + "".join(f"{row[str(g)] / row['0.0']:>10.1f}" for g in GAPS_S))
    result = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "grpcio": grpc.__version__},
        "repeats": args.repeats,
        "gaps_s": list(GAPS_S),
        "median_ms": medians,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
