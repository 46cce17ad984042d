"""What the HTTP/JSON API costs over gRPC: the same Fetch (a user with three memories, no session, prefetch
off) against one embedded ACM, alternately over gRPC (AcmClient) and over HTTP/JSON (httpx), both clients in
this process; medians and 95th percentiles of N calls each after 20 warm-up calls.

    .venv/bin/python scripts/bench/http_overhead.py [--calls 500]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from acm.client import AcmClient
from acm.v1 import common_pb2
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

FACTS = ("I moved to Lisbon in May.", "My sister lives in Porto.", "I work at the harbour office.")
QUERY = "where do I live?"


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


async def measure(calls: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = EmbeddedSettings(
            data_dir=Path(tmp), listen_addr="127.0.0.1:0", http_addr="127.0.0.1:0", prefetch=False
        )
        async with EmbeddedAcm(settings) as acm:
            scope = common_pb2.Scope(customer_id="acme", user_id="alice")
            body = {"scope": {"customerId": "acme", "userId": "alice"}, "query": QUERY}
            headers = {"Authorization": f"Bearer {acm.api_key}"}
            async with (
                AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as grpc_client,
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{acm.http_port}", headers=headers) as http,
            ):
                for fact in FACTS:
                    job = await grpc_client.ingest(scope, fact)
                    await grpc_client.wait_job(scope, job.job_id, timeout_s=60)
                for _ in range(20):
                    await grpc_client.fetch(scope, QUERY)
                    (await http.post("/v1/context:fetch", json=body)).raise_for_status()
                timings: dict[str, list[float]] = {"gRPC": [], "HTTP/JSON": []}
                for _ in range(calls):
                    start = time.perf_counter()
                    await grpc_client.fetch(scope, QUERY)
                    timings["gRPC"].append((time.perf_counter() - start) * 1000)
                    start = time.perf_counter()
                    (await http.post("/v1/context:fetch", json=body)).raise_for_status()
                    timings["HTTP/JSON"].append((time.perf_counter() - start) * 1000)
                return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500, help="calls over each API (default 500)")
    args = parser.parse_args()
    for name, values in asyncio.run(measure(args.calls)).items():
        print(f"{name:10s} Fetch n={len(values)} p50={statistics.median(values):.2f} ms p95={_p95(values):.2f} ms")


if __name__ == "__main__":
    main()
