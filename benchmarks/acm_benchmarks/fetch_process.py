"""A Fetch client in a process of its own: Fetch latency as an agent sees it, not slowed by the benchmark's
own work (ingest calls, evidence checks) sharing the server's event loop and interpreter lock.

The parent starts ``python -m acm_benchmarks.fetch_process ADDR [ADDR ...]`` (the API key comes through the
environment, not the command line) and exchanges one JSON line per Fetch over the pipes:

    → {"target": 0, "scope": "<base64 Scope>", "query": "...", "budget": 1000, "encoding": ""}
    ← {"ms": 4.2, "response": "<base64 FetchResponse>"}   or   {"error": "<status>: <details>"}

Only the gRPC call is timed, in the child: reading the request and writing the answer are outside it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import time
from types import TracebackType
from typing import Any

API_KEY_ENV = "ACM_BENCH_API_KEY"


class FetchProcess:
    """The parent's side: one child process, its gRPC channels open to each address it was given."""

    def __init__(self, child: asyncio.subprocess.Process) -> None:
        self._child = child
        self._lock = asyncio.Lock()  # one request in flight: answers come back in order

    @classmethod
    async def start(cls, addrs: list[str], api_key: str) -> FetchProcess:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "acm_benchmarks.fetch_process",
            *addrs,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, API_KEY_ENV: api_key},
        )
        return cls(child)

    async def __aenter__(self) -> FetchProcess:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def fetch(self, target: int, scope: Any, query: str, budget: int, encoding: str = "") -> tuple[Any, float]:
        """(FetchResponse, milliseconds the gRPC call took in the child)."""
        from acm.v1 import gateway_pb2

        assert self._child.stdin is not None and self._child.stdout is not None
        request = {
            "target": target,
            "scope": base64.b64encode(scope.SerializeToString()).decode(),
            "query": query,
            "budget": budget,
            "encoding": encoding,
        }
        async with self._lock:
            self._child.stdin.write(json.dumps(request).encode() + b"\n")
            await self._child.stdin.drain()
            line = await asyncio.wait_for(self._child.stdout.readline(), timeout=120)
        if not line:
            raise RuntimeError(f"the Fetch client process exited (code {await self._child.wait()})")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"Fetch failed in the client process: {answer['error']}")
        return gateway_pb2.FetchResponse.FromString(base64.b64decode(answer["response"])), float(answer["ms"])

    async def close(self) -> None:
        if self._child.returncode is None:
            assert self._child.stdin is not None
            self._child.stdin.close()
            try:
                await asyncio.wait_for(self._child.wait(), timeout=10)
            except TimeoutError:
                self._child.kill()
                await self._child.wait()


async def _serve(addrs: list[str], api_key: str) -> None:
    import grpc

    from acm.client import AcmClient
    from acm.v1 import common_pb2

    clients = [AcmClient(addr, api_key, timeout_s=60) for addr in addrs]
    try:
        while True:
            line = await asyncio.to_thread(sys.stdin.buffer.readline)
            if not line:
                return
            request = json.loads(line)
            scope = common_pb2.Scope.FromString(base64.b64decode(request["scope"]))
            client = clients[int(request["target"])]
            try:
                began = time.perf_counter()
                response = await client.fetch(scope, request["query"], int(request["budget"]), request["encoding"])
                ms = (time.perf_counter() - began) * 1000
                answer = {"ms": ms, "response": base64.b64encode(response.SerializeToString()).decode()}
            except grpc.aio.AioRpcError as exc:
                answer = {"error": f"{exc.code().name}: {exc.details()}"}
            sys.stdout.buffer.write(json.dumps(answer).encode() + b"\n")
            sys.stdout.buffer.flush()
    finally:
        for client in clients:
            await client.close()


def main() -> None:
    if len(sys.argv) < 2 or API_KEY_ENV not in os.environ:
        raise SystemExit(f"usage: {API_KEY_ENV}=<key> python -m acm_benchmarks.fetch_process ADDR [ADDR ...]")
    asyncio.run(_serve(sys.argv[1:], os.environ[API_KEY_ENV]))


if __name__ == "__main__":
    main()
