"""`acm bench ingest-stages`: where one turn's ingest time goes, stage by stage, on the real stores.

    set -a; source /var/tmp/acm-infra/env; set +a
    ACM_EMBEDDER=all-minilm-l6-v2 acm bench ingest-stages [--turns 200] --json results/ingest_stages.json

Signed turn envelopes (fleet dialogue and tool JSON) go one at a time through ingest's TurnsHandler, wired as
the ingest process wires it (acm_ingest.app.register), on a Postgres database of the run's own, Neo4j, Redis,
and Kafka for the published events. Every port the handler calls is wrapped here in a timer (no counter in the
product classes); the planning step (acm_ingest.pipeline.plan_turn) is timed the same way. What no port and
not the plan took is the handler's own CPU: decoding, the HMAC check, redaction, fact and entity logic.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Port attribute → the stage its calls count towards (method-level where one port serves two stages).
STAGES: dict[str, str] = {
    "api_keys": "verify (key lookup)",
    "processed.seen": "processed check",
    "processed.seen_among": "processed check",  # a micro-batch's, one query (acm_ingest.handlers.turns)
    "processed.mark": "processed mark",
    "processed.mark_all": "processed mark",
    "schemas": "schema read",
    "embedder": "embedding",
    "memories": "relational reads/writes",
    "audit": "relational reads/writes",
    "entities": "entity registry reads/writes",  # the graph is retrieve's (issue 19)
    "events": "publish events",
    "jobs": "job update",
    "cache": "cache (tokens, seen errors, prefetch gen.)",
    "tokens": "token count",
    "plan": "plan (gate, redaction, facts)",
}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "ingest-stages",
        help="time each stage of ingesting one turn on the real stores",
        description="Where one turn's ingest time goes, stage by stage, on the real stores (the test servers: "
        "ACM_TEST_POSTGRES_DSN, ACM_TEST_NEO4J_URI, ACM_TEST_REDIS_URL), one turn at a time, then in micro-batches.",
    )
    p.add_argument("--turns", type=int, default=200, help="turns to ingest, one at a time (200)")
    p.add_argument("--agents", type=int, default=16, help="sessions the turns are spread over (16)")
    p.add_argument("--seed", type=int, default=20, help="seed of the generated turns (default 20)")
    p.add_argument(
        "--concurrency",
        type=int,
        default=4,
        help="then as many other turns again in micro-batches of 100, this many sessions at a time, as the "
        "ingest consumer takes them (ACM_INGEST_CONCURRENCY; 4; 1: skip)",
    )
    p.add_argument("--json", dest="json_out", type=Path, help="write the result here")
    p.set_defaults(run=run)


class Timings:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def add(self, stage: str, seconds: float) -> None:
        self.seconds[stage] += seconds
        self.calls[stage] += 1


class Timed:
    """Wraps an object: each of its methods' calls (awaited or not) is added to the stage of ``label``."""

    def __init__(self, inner: Any, label: str, timings: Timings) -> None:
        self._inner, self._label, self._timings = inner, label, timings

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if not callable(value):
            return value
        stage = STAGES.get(f"{self._label}.{name}") or STAGES[self._label]
        timings = self._timings

        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            result = value(*args, **kwargs)
            if asyncio.iscoroutine(result):
                return _awaited(result, stage, started, timings)
            timings.add(stage, time.perf_counter() - started)
            return result

        return call


async def _awaited(coro: Any, stage: str, started: float, timings: Timings) -> Any:
    try:
        return await coro
    finally:
        timings.add(stage, time.perf_counter() - started)


async def run(args: argparse.Namespace) -> None:
    from rich.console import Console

    result = await measure(args.turns, args.agents, args.seed, args.concurrency)
    console = Console()
    print_table(console, result)
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(result, indent=2) + "\n")
        console.print(f"wrote {args.json_out}")


async def measure(count: int, agents: int, seed: int, concurrency: int) -> dict[str, Any]:
    import os

    import acm_ingest.usecases as usecases
    from acm import topics
    from acm.adapters.delivery import batch_size
    from acm.adapters.embedders import build_embedder
    from acm.adapters.kafka_bus import KafkaBus
    from acm.auth import create_api_key, key_id_of
    from acm.bootstrap import open_cache, open_relational
    from acm.ports.bus import Record
    from acm.settings import DEFAULT_EMBEDDER
    from acm_benchmarks.fleet_stack import Servers, create_database, delete_topics, drop_database
    from acm_benchmarks.fleet_turns import agent_turns
    from acm_ingest.app import register
    from acm_ingest.settings import IngestSettings

    servers = Servers.from_env()
    database = create_database(servers.postgres)
    namespace = f"ingest-stages-{uuid.uuid4().hex[:8]}."
    timings = Timings()
    real_plan = usecases.plan_turn
    rel = await open_relational(database)
    cache = await open_cache(servers.redis)
    bus = KafkaBus(servers.kafka, client_id="acm-bench-ingest-stages", namespace=namespace)
    embedder_name = os.environ.get("ACM_EMBEDDER", DEFAULT_EMBEDDER)
    try:
        client_id = f"stages-{uuid.uuid4().hex[:6]}"
        _, secret = await create_api_key(rel.api_keys, client_id, "acm bench ingest-stages")
        handler = _wired_handler(
            register, IngestSettings, bus, rel, cache, build_embedder(embedder_name), timings, database
        )

        def timed_plan(*a: Any, **kw: Any) -> Any:
            started = time.perf_counter()
            try:
                return real_plan(*a, **kw)
            finally:
                timings.add(STAGES["plan"], time.perf_counter() - started)

        usecases.plan_turn = timed_plan  # type: ignore[assignment]
        envelopes = _envelopes(client_id, secret, key_id_of(secret), count, agents, seed, agent_turns)
        await handler(Record(topics.TURNS, "warm-up", envelopes[0][1]))  # first calls open pools, load the model
        timings.seconds.clear()
        timings.calls.clear()
        total = 0.0
        cpu = time.process_time()
        for key, value in envelopes[1:]:
            started = time.perf_counter()
            await handler(Record(topics.TURNS, key, value))
            total += time.perf_counter() - started
        result = _result(timings, total, len(envelopes) - 1, embedder_name)
        # This process' CPU (every thread: the handler's and the embedder's), which a loaded machine's waits do not
        # inflate as they do the wall times: the figure to compare runs by. The servers' CPU is not in it.
        result["cpu_ms_per_turn"] = round((time.process_time() - cpu) * 1000 / (len(envelopes) - 1), 2)
        cpu = time.process_time()
        timings.seconds.clear()
        timings.calls.clear()
        batched = await _micro_batches(bus, handler, client_id, secret, count, agents, seed + 1, concurrency)
        batched_cpu_s = time.process_time() - cpu
    finally:
        usecases.plan_turn = real_plan
        await bus.stop()
        for closing in (rel, cache):
            await closing.close()
        await delete_topics(servers.kafka, namespace)
        drop_database(database)
    if batched is not None:
        turns = count + 1
        result["micro_batches"] = {
            "concurrency": concurrency,
            "batch": batch_size(concurrency, POLL),
            "turns": turns,
            "turns_per_s": round(batched, 2),
            "embedder_calls_per_turn": round(timings.calls[STAGES["embedder"]] / turns, 3),
            # Summed over the turns in flight at once: they overlap, so the sum exceeds the wall time.
            "stages": {
                stage: {
                    "ms_per_turn": round(seconds * 1000 / turns, 3),
                    "calls_per_turn": round(timings.calls[stage] / turns, 2),
                }
                for stage, seconds in sorted(timings.seconds.items(), key=lambda kv: -kv[1])
            },
            "wall_ms_per_turn": round(1000 / batched, 2),
            "cpu_ms_per_turn": round(batched_cpu_s * 1000 / turns, 2),
        }
    return result


POLL = 100  # KafkaBus's max_poll_records


async def _micro_batches(
    bus: Any, handler: Any, client_id: str, secret: str, count: int, agents: int, seed: int, concurrency: int
) -> float | None:
    """Turns/s when the turns come as the consumer hands them over with ``concurrency`` > 1 (deliver_batch)."""
    from acm import topics
    from acm.adapters.delivery import batch_size, deliver_batch
    from acm.auth import key_id_of
    from acm.ports.bus import Record
    from acm_benchmarks.fleet_turns import agent_turns
    from acm_ingest import GROUP

    if concurrency <= 1:
        return None
    envelopes = _envelopes(client_id, secret, key_id_of(secret), count, agents, seed, agent_turns)
    records = [Record(topics.TURNS, key, value, offset=i) for i, (key, value) in enumerate(envelopes)]
    started = time.perf_counter()
    size = batch_size(concurrency, POLL)
    for at in range(0, len(records), size):
        await deliver_batch(bus, GROUP, records[at : at + size], handler, system="kafka", concurrency=concurrency)
    return len(records) / (time.perf_counter() - started)


def _wired_handler(
    register: Callable[..., Any],
    settings_class: Any,
    bus: Any,
    rel: Any,
    cache: Any,
    embedder: Any,
    timings: Timings,
    database: str,
) -> Any:
    """ingest's turns handler as register() builds it, its ports wrapped in timers."""
    from acm import topics
    from acm.owners import Owners

    handlers: dict[str, Any] = {}

    class Capture:
        """Publishes to the real bus; keeps the handlers instead of subscribing them."""

        async def publish(self, topic: str, key: str, value: bytes) -> None:
            await bus.publish(topic, key, value)

        def subscribe(self, topic: str, group: str, handler: Any, **_: Any) -> None:
            handlers[topic] = handler

    timed_rel = type(rel)(**{name: Timed(getattr(rel, name), name, timings) for name in _fields(rel)})
    settings = settings_class(database_url=database, bus_url="-", cache_url="-")
    # One store for every service here: the keys and schemas read in-process, as the embedded process does.
    owners = Owners.in_process(timed_rel.api_keys, timed_rel.schemas)
    timed_cache = Timed(cache, "cache", timings)
    register(Capture(), timed_rel, timed_cache, embedder, settings, owners)
    turns = handlers[topics.TURNS]
    turns.ingest.embedder = Timed(embedder, "embedder", timings)
    if turns.ingest.meaning is not None:
        # The injection meaning check's embedder calls count too (before issue 20 it made its own, one a turn).
        turns.ingest.meaning.embedder = Timed(turns.ingest.meaning.embedder, "embedder", timings)
    turns.ingest.__post_init__()  # its embedding batches call the timed embedder
    turns.ingest.events = Timed(turns.ingest.events, "events", timings)
    turns.ingest.tokens = Timed(turns.ingest.tokens, "tokens", timings)
    return turns


def _fields(rel: Any) -> list[str]:
    import dataclasses

    return [f.name for f in dataclasses.fields(rel)]


def _envelopes(
    client_id: str, secret: str, key_id: str, count: int, agents: int, seed: int, agent_turns: Callable[..., Any]
) -> list[tuple[str, bytes]]:
    from acm.convert import ROLE_TO_PB
    from acm.domain.models import Role, new_id
    from acm.domain.scope import Scope
    from acm.envelopes import envelope, key_hash, sign
    from acm.v1 import common_pb2

    per_agent = [agent_turns(a, count // agents + 1, seed) for a in range(agents)]
    out: list[tuple[str, bytes]] = []
    for i in range(count + 1):
        agent = i % agents
        turn = per_agent[agent][i // agents]
        scope = Scope(
            client_id, f"customer-{agent % 4}", f"user-{agent}", agent_id="fleet-agent", session_id=f"s{agent}"
        )
        env = envelope(scope)
        env.turn_received.job_id = new_id()
        env.turn_received.turn.CopyFrom(
            common_pb2.Turn(
                turn_id=new_id(),
                role=ROLE_TO_PB[Role(turn.role)],
                content=turn.content,
                metadata={"speaker": turn.speaker} if turn.speaker else {},
                tool_name=turn.tool_name,
            )
        )
        sign(env, key_id, key_hash(secret))
        out.append((scope.session_key, env.SerializeToString()))
    return out


def _result(timings: Timings, total: float, turns: int, embedder: str) -> dict[str, Any]:
    stages = {
        stage: {
            "ms_per_turn": round(seconds * 1000 / turns, 3),
            "calls_per_turn": round(timings.calls[stage] / turns, 2),
        }
        for stage, seconds in sorted(timings.seconds.items(), key=lambda kv: -kv[1])
    }
    accounted = sum(timings.seconds.values())
    stages["handler CPU (decode, HMAC, facts, entities)"] = {
        "ms_per_turn": round((total - accounted) * 1000 / turns, 3),
        "calls_per_turn": 0.0,
    }
    return {
        "turns": turns,
        "embedder": embedder,
        "ms_per_turn": round(total * 1000 / turns, 2),
        "turns_per_s_one_at_a_time": round(turns / total, 2) if total else None,
        "stages": stages,
        "note": "one turn at a time (no micro-batch), Postgres, Neo4j, Redis and Kafka on this machine",
    }


def print_table(console: Any, result: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"ingest, {result['turns']} turns one at a time ({result['embedder']})")
    table.add_column("stage")
    table.add_column("ms / turn", justify="right")
    table.add_column("share", justify="right")
    table.add_column("calls / turn", justify="right")
    for stage, row in result["stages"].items():
        share = 100 * row["ms_per_turn"] / result["ms_per_turn"] if result["ms_per_turn"] else 0.0
        table.add_row(stage, f"{row['ms_per_turn']:.2f}", f"{share:.0f} %", f"{row['calls_per_turn']:.2f}")
    table.add_row("total", f"{result['ms_per_turn']:.2f}", "100 %", "")
    console.print(table)
    batches = result.get("micro_batches")
    if batches:
        batched = Table(title=f"in micro-batches of {batches['batch']} (stage time summed over turns in flight)")
        batched.add_column("stage")
        batched.add_column("ms / turn", justify="right")
        batched.add_column("calls / turn", justify="right")
        for stage, row in batches["stages"].items():
            batched.add_row(stage, f"{row['ms_per_turn']:.2f}", f"{row['calls_per_turn']:.2f}")
        batched.add_row("wall time", f"{batches['wall_ms_per_turn']:.2f}", "")
        console.print(batched)
        console.print(
            f"this process' CPU a turn: {result['cpu_ms_per_turn']} ms one at a time, "
            f"{batches['cpu_ms_per_turn']} ms in micro-batches"
        )
        console.print(
            f"one at a time: {result['turns_per_s_one_at_a_time']} turns/s; in micro-batches of {batches['batch']}, "
            f"{batches['concurrency']} sessions at a time: {batches['turns_per_s']} turns/s "
            f"({batches['embedder_calls_per_turn']} embedder calls per turn)"
        )
