"""CPU of ingest's redaction, two passes against one (issue 20): redact_turn then plan_turn's own scan of the
content (before), or redacted_turn then plan_turn(redacted=counts) (after); and the turns whose job counts differ.

    .venv/bin/python scripts/bench/redaction_passes.py

Turns: the fleet's (acm_benchmarks.fleet_turns, seed 20, 16 agents, as `acm bench ingest-stages`) and the PII
corpora (tests/data/safety/pii*.jsonl). CPU is time.process_time, the least of 5 alternated rounds."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from acm.domain.models import Role, Turn
from acm.domain.pii import redact_turn
from acm.domain.schema import default_schema
from acm.domain.scope import Scope
from acm_benchmarks.fleet_turns import agent_turns
from acm_ingest.pipeline import pii_rules, plan_turn, redacted_turn

SCHEMA = default_schema("bench")
RULES = pii_rules(SCHEMA, True)
SCOPE = Scope("c", "k", "u", "bench", "s")
ROUNDS = 5


def _turn(content: str, role: str, tool: str = "", metadata: dict[str, str] | None = None) -> Turn:
    return Turn(
        turn_id="t",
        scope=SCOPE,
        role=Role(role) if role in ("user", "assistant", "tool") else Role.USER,
        content=content,
        tool_name=tool,
        metadata=metadata or {},
        occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def two_passes(turn: Turn) -> dict[str, int]:
    """The job's redaction counts as ingest made them before (a dropped turn counts none)."""
    redacted, counts = redact_turn(turn, RULES)
    plan = plan_turn(redacted, SCHEMA, frozenset())
    return dict(Counter(plan.redactions) + Counter(counts)) if plan.gate.keep else {}


def one_pass(turn: Turn) -> dict[str, int]:
    redacted, counts = redacted_turn(turn, RULES)
    plan = plan_turn(redacted, SCHEMA, frozenset(), redacted=counts)
    return plan.redactions if plan.gate.keep else {}


def _cpu_ms(run: Callable[[Turn], dict[str, int]], turns: list[Turn]) -> float:
    started = time.process_time()
    for turn in turns:
        run(turn)
    return (time.process_time() - started) * 1000 / len(turns)


def main() -> None:
    root = Path(__file__).resolve().parents[2]
    pii = [json.loads(line) for f in sorted((root / "tests/data/safety").glob("pii*.jsonl")) for line in f.open()]
    fleet = [
        _turn(t.content, t.role, t.tool_name, {"speaker": t.speaker} if t.speaker else {})
        for agent in range(16)
        for t in agent_turns(agent, 13, 20)
    ]
    sets = {
        "fleet turns (seed 20)": fleet,
        "PII corpora, tool JSON": [
            _turn(r["content"], "tool", r["tool_name"]) for r in pii if r["channel"] == "tool_json"
        ],
        "PII corpora, all": [_turn(r["content"], r["role"], r["tool_name"], r["metadata"]) for r in pii],
    }
    for name, turns in sets.items():
        best = {"two passes": float("inf"), "one pass": float("inf")}
        for _ in range(ROUNDS):
            best["two passes"] = min(best["two passes"], _cpu_ms(two_passes, turns))
            best["one pass"] = min(best["one pass"], _cpu_ms(one_pass, turns))
        differ = sum(two_passes(t) != one_pass(t) for t in turns)
        print(
            f"{name}: {len(turns)} turns, CPU ms a turn: two passes {best['two passes']:.3f}, "
            f"one pass {best['one pass']:.3f}; job counts differ on {differ}"
        )


if __name__ == "__main__":
    main()
