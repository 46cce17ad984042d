"""The pure parts of `acm bench fleet`: the agents' schedule, what is recorded while it runs, and the summary
(the issue's output shape, a per-second timeline, CPU and RSS per service). No IO here."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from acm_benchmarks.locomo import percentile

# ---------------------------------------------------------------------------------------------------
# Schedule


@dataclass
class Pacer:
    """When one agent's turns are due, for a fleet rate of ``rate`` turns/s shared by ``agents`` agents.

    Agent ``agent``'s k-th slot is at (agent + k·agents) / rate seconds from the start: each agent publishes
    every agents/rate seconds, staggered so the fleet's turns are evenly spread. An agent that falls more
    than one period behind (its calls took longer than its period) skips the slots it missed instead of
    bursting to catch up, so what is offered never exceeds the target rate; the skipped slots are counted.
    Slots at or after ``duration_s`` are not due: the loop ends by itself."""

    agent: int
    agents: int
    rate: float
    duration_s: float
    k: int = 0
    skipped: int = 0

    def __post_init__(self) -> None:
        if self.agents < 1 or not 0 <= self.agent < self.agents:
            raise ValueError(f"agent {self.agent} out of 0..{self.agents - 1}")
        if self.rate <= 0 or self.duration_s <= 0:
            raise ValueError("rate and duration must be positive")

    @property
    def period_s(self) -> float:
        return self.agents / self.rate

    def slot(self, k: int) -> float:
        return (self.agent + k * self.agents) / self.rate

    def next_due(self, now: float) -> float | None:
        """The time (from the start) of this agent's next turn, given it is ``now``; None when the run is
        over. Call once per turn."""
        late_by = now - self.slot(self.k)
        if late_by > self.period_s:  # missed whole periods: drop them, keep the phase
            missed = math.floor(late_by / self.period_s)
            self.k += missed
            self.skipped += missed
        due = self.slot(self.k)
        if due >= self.duration_s:
            return None
        self.k += 1
        return due


def planned_turns(agent: int, agents: int, rate: float, duration_s: float) -> int:
    """How many slots agent ``agent`` has in the run (an upper bound on its turns)."""
    period = agents / rate
    first = agent / rate
    return 0 if first >= duration_s else math.ceil((duration_s - first) / period)


# ---------------------------------------------------------------------------------------------------
# Recording


def pcts(values: Sequence[float]) -> dict[str, float | None]:
    """p50 / p95 / p99 in milliseconds, rounded; None each when nothing was measured."""
    return {
        name: (round(percentile(values, q), 1) if values else None)
        for name, q in (("p50", 50), ("p95", 95), ("p99", 99))
    }


@dataclass(frozen=True, slots=True)
class ProcSample:
    """One reading of a process: cumulative CPU seconds (user + system) and resident memory."""

    t: float
    cpu_s: float
    rss_bytes: int


@dataclass
class Recorder:
    """Everything the run observed, with times in seconds from the start of the load."""

    accepted: list[float] = field(default_factory=list)
    processed: list[float] = field(default_factory=list)  # when a job was seen DONE
    failed: int = 0  # jobs seen FAILED
    fetches: list[tuple[float, float]] = field(default_factory=list)  # (completed at, ms)
    freshness: list[tuple[float, float]] = field(default_factory=list)  # (probe accepted at, ms to fetched)
    probes_sent: int = 0
    probes_timed_out: int = 0
    probe_fetches: int = 0  # the probes' own Fetches (load on top of the agents'; not in the agents' figures)
    errors: Counter[str] = field(default_factory=Counter)  # "Rpc:CODE" → count
    lag: list[tuple[float, int, dict[str, int]]] = field(default_factory=list)  # (t, total, by group)
    procs: dict[str, list[ProcSample]] = field(default_factory=dict)
    in_flight: int = 0  # agent Fetches in flight now
    max_in_flight: int = 0
    skipped: int = 0  # slots the agents skipped, being behind (Pacer.skipped summed)

    def fetch_started(self) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def fetch_ended(self, t: float, ms: float | None) -> None:
        self.in_flight -= 1
        if ms is not None:
            self.fetches.append((t, ms))

    def error(self, rpc: str, code: str) -> None:
        self.errors[f"{rpc}:{code}"] += 1


# ---------------------------------------------------------------------------------------------------
# Summary


def timeline(rec: Recorder, seconds: int) -> list[dict[str, Any]]:
    """Per second of the run: turns accepted and processed in it, the consumer lag last sampled in it (the
    previous one when none was), the p95 of the Fetches that completed in it, and each process's CPU % over
    the sampling span that ended in it."""
    accepted = Counter(int(t) for t in rec.accepted)
    processed = Counter(int(t) for t in rec.processed)
    fetches: dict[int, list[float]] = {}
    for t, fetch_ms in rec.fetches:
        fetches.setdefault(int(t), []).append(fetch_ms)
    lag_at: dict[int, int] = {}
    for t, total, _ in rec.lag:
        lag_at[int(t)] = total
    cpu: dict[int, dict[str, float]] = {}
    for name, samples in rec.procs.items():
        for t, pct in cpu_points(samples):
            cpu.setdefault(int(t), {})[name] = round(pct, 1)
    rows: list[dict[str, Any]] = []
    lag: int | None = None
    for s in range(seconds):
        lag = lag_at.get(s, lag)
        in_second = fetches.get(s, [])
        rows.append(
            {
                "t": s,
                "accepted": accepted[s],
                "processed": processed[s],
                "lag": lag,
                "fetch_p95_ms": round(percentile(in_second, 95), 1) if in_second else None,
                "fetches": len(in_second),
                "cpu_pct": cpu.get(s, {}),
            }
        )
    return rows


def cpu_points(samples: Sequence[ProcSample]) -> list[tuple[float, float]]:
    """(time, CPU % between the previous sample and this one; 100 = one core) for each sample after the first."""
    return [(b.t, 100 * (b.cpu_s - a.cpu_s) / (b.t - a.t)) for a, b in itertools.pairwise(samples) if b.t > a.t]


def proc_usage(samples: Mapping[str, Sequence[ProcSample]]) -> dict[str, dict[str, float | None]]:
    """Per process: mean CPU % over the sampled span (100 = one core), the highest CPU % between two
    consecutive samples, and the highest and last resident memory in MiB."""
    out: dict[str, dict[str, float | None]] = {}
    for name, s in samples.items():
        if not s:
            continue
        spans = [pct for _, pct in cpu_points(s)]
        whole = s[-1].t - s[0].t
        out[name] = {
            "cpu_pct_mean": round(100 * (s[-1].cpu_s - s[0].cpu_s) / whole, 1) if whole > 0 else None,
            "cpu_pct_max": round(max(spans), 1) if spans else None,
            "rss_mb_max": round(max(x.rss_bytes for x in s) / 2**20, 1),
            "rss_mb_last": round(s[-1].rss_bytes / 2**20, 1),
        }
    return out


def summarise(
    rec: Recorder,
    *,
    mode: str,
    agents: int,
    duration_s: float,
    replicas: int,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The issue's output shape first (mode … replicas), then the details: rates, the timeline, errors by
    gRPC code, the probes, CPU and RSS per service, and ``extra`` (run settings, the machine)."""
    in_window = [t for t in rec.processed if t < duration_s]
    seconds = math.ceil(max([duration_s, *rec.processed, *rec.accepted], default=duration_s))
    return {
        "mode": mode,
        "agents": agents,
        "duration_s": round(duration_s, 1),
        # Sustained: jobs done while the load ran, per second of load (the drain after it is not counted).
        "ingest_turns_per_s": round(len(in_window) / duration_s, 2),
        "freshness_ms": pcts([ms for _, ms in rec.freshness]),
        "fetch_ms": pcts([ms for _, ms in rec.fetches]),
        "fetch_concurrency": agents,  # one Fetch client per agent, each with at most one call in flight
        "errors": sum(rec.errors.values()),
        "accepted": len(rec.accepted),
        "processed": len(rec.processed),
        "max_lag": max((total for _, total, _ in rec.lag), default=None),
        "replicas": replicas,
        "accepted_turns_per_s": round(sum(t < duration_s for t in rec.accepted) / duration_s, 2),
        "processed_in_window": len(in_window),
        "failed": rec.failed,
        "skipped_slots": rec.skipped,
        "fetches": len(rec.fetches),
        "fetch_max_in_flight": rec.max_in_flight,
        "errors_by_code": dict(sorted(rec.errors.items())),
        "freshness_samples": [[round(t, 1), round(ms, 1)] for t, ms in rec.freshness],  # (accepted at s, ms)
        "freshness_probes": {
            "sent": rec.probes_sent,
            "found": len(rec.freshness),
            "timed_out": rec.probes_timed_out,
            "fetches": rec.probe_fetches,
        },
        "lag_by_group_max": _max_by_group(rec.lag),
        "services": proc_usage(rec.procs),
        **(extra or {}),
        "timeline": timeline(rec, seconds),
    }


def _max_by_group(lag: Sequence[tuple[float, int, Mapping[str, int]]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, _, by_group in lag:
        for group, n in by_group.items():
            out[group] = max(out.get(group, 0), n)
    return dict(sorted(out.items()))


SHAPE_KEYS = (
    "mode",
    "agents",
    "duration_s",
    "ingest_turns_per_s",
    "freshness_ms",
    "fetch_ms",
    "fetch_concurrency",
    "errors",
    "accepted",
    "processed",
    "max_lag",
    "replicas",
)
