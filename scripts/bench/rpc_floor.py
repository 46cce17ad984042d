"""How much of a pool-served Fetch is gRPC itself? From a client in its own process, against one embedded
ACM: a bare echo RPC served by the same process (a generic handler answering 17 KB, about a Fetch
response), GetJob (one small row read), and Fetch of the questions the session's pool serves; the
gateway's own handler time of those Fetches is timed in the server. Medians of repeated calls, 3 ms apart.

    .venv/bin/python scripts/bench/rpc_floor.py --data ../shared/data/locomo-dev.json \
        [--calls 300] [--out results/rpc_floor.json]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc


async def client_process() -> None:
    """The client side (``--client``, in its own process): the configuration comes as one JSON line on stdin,
    the medians go back as one JSON line on stdout."""
    from acm.client import AcmClient
    from acm.v1 import common_pb2

    cfg = json.loads(sys.stdin.readline())
    scope = common_pb2.Scope.FromString(base64.b64decode(cfg["scope"]))
    client = AcmClient(cfg["addr"], cfg["key"], timeout_s=60)
    channel = grpc.aio.insecure_channel(cfg["echo"])
    echo = channel.unary_unary("/probe.Echo/Echo")
    out: dict[str, dict[str, Any]] = {}
    for name in ("echo", "get_job", "fetch"):
        times: list[float] = []
        for i in range(cfg["warmup"] + cfg["calls"]):
            start = time.perf_counter()
            if name == "echo":
                await echo(b"q")
            elif name == "get_job":
                await client.get_job(scope, cfg["job"])
            else:
                response = await client.fetch(scope, cfg["queries"][i % len(cfg["queries"])], 1000, "")
                if not response.from_prefetch:
                    continue
            ms = (time.perf_counter() - start) * 1000
            if i >= cfg["warmup"]:
                times.append(ms)
            await asyncio.sleep(0.003)
        out[name] = {"p50_ms": round(statistics.median(times), 3) if times else None, "n": len(times)}
    print(json.dumps(out), flush=True)
    await client.close()
    await channel.close()


ECHO_BYTES = 17_000


async def run(data: Path, calls: int) -> dict[str, Any]:
    from acm.client import AcmClient
    from acm_benchmarks.locomo import ingest_turn, load_conversations, wait_until_indexed
    from acm_benchmarks.prefetch import _scope
    from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
    from acm_gateway.api import GatewayServicer

    handler_ms: list[float] = []
    inner = GatewayServicer.Fetch

    async def timed(self: Any, request: Any, context: Any) -> Any:
        start = time.perf_counter()
        response = await inner(self, request, context)
        if response.from_prefetch:
            handler_ms.append((time.perf_counter() - start) * 1000)
        return response

    GatewayServicer.Fetch = timed  # type: ignore[method-assign]

    async def echo(_request: bytes, _context: Any) -> bytes:
        return b"x" * ECHO_BYTES

    conv = load_conversations(data, 1)[0]
    with tempfile.TemporaryDirectory(prefix="acm-rpc-floor-") as tmp:
        settings = EmbeddedSettings(data_dir=Path(tmp), listen_addr="127.0.0.1:0", embedder="minilm")
        async with EmbeddedAcm(settings) as acm:
            server = grpc.aio.server()
            handlers = {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
            server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("probe.Echo", handlers),))
            echo_port = server.add_insecure_port("127.0.0.1:0")
            await server.start()
            client = AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60)
            try:
                turns = [t for t in conv.turns if t.session == 1]
                scope = _scope(conv.sample_id, 1)
                job = ""
                for turn in turns:
                    job = await ingest_turn(client, scope, turn)
                await client.wait_job(scope, job, timeout_s=300)
                await wait_until_indexed(acm)
                print(f"{conv.sample_id}: {len(turns)} turns of session 1 ingested; asking from a client process")
                config = {
                    "addr": f"127.0.0.1:{acm.port}",
                    "key": acm.api_key,
                    "echo": f"127.0.0.1:{echo_port}",
                    "job": job,
                    "scope": base64.b64encode(scope.SerializeToString()).decode(),
                    "queries": [q.text for q in conv.questions][:40],
                    "calls": calls,
                    "warmup": 20,
                }
                child = await asyncio.create_subprocess_exec(
                    sys.executable, __file__, "--client", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
                )
                stdout, _ = await child.communicate(json.dumps(config).encode() + b"\n")
                if child.returncode:
                    raise SystemExit(f"the client process failed (exit {child.returncode})")
                measured: dict[str, Any] = json.loads(stdout.decode().strip().splitlines()[-1])
            finally:
                await client.close()
                await server.stop(None)
    served = handler_ms[-measured["fetch"]["n"] :] if measured["fetch"]["n"] else []
    measured["fetch_handler"] = {"p50_ms": round(statistics.median(served), 3) if served else None, "n": len(served)}
    return measured


def main() -> None:
    if sys.argv[1:] == ["--client"]:
        asyncio.run(client_process())
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file (its first conversation)")
    p.add_argument("--calls", type=int, default=300, help="calls per kind, after 20 to warm up")
    p.add_argument("--out", type=Path, default=Path("results/rpc_floor.json"))
    args = p.parse_args()
    measured = asyncio.run(run(args.data, args.calls))
    labels = {
        "echo": f"bare gRPC echo ({ECHO_BYTES} B), same server process",
        "get_job": "GetJob (auth, one row)",
        "fetch": "Fetch served from the pool",
        "fetch_handler": "  of which the gateway's handler",
    }
    print(f"{'call (client in its own process)':<46}{'p50 ms':>10}{'n':>6}")
    for key, label in labels.items():
        print(f"{label:<46}{measured[key]['p50_ms']!s:>10}{measured[key]['n']:>6}")
    result = {"when": datetime.now(UTC).isoformat(timespec="seconds"), "data": args.data.name, "median": measured}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
