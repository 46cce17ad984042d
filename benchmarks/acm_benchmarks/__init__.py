"""`acm bench <name>`: benchmarks that drive ACM the way an agent does (gRPC against embedded ACM).

Each benchmark is a module here with ``add_parser(sub)``: it adds its subcommand and sets ``run`` (an async
function of the parsed arguments), like every other `acm` command. Adding one = a module + a line in
BENCHMARKS. Modules keep heavy imports (models, stores) inside their runner so `acm --help` stays fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from acm_benchmarks.coverage import add_parser as add_coverage
from acm_benchmarks.fetch_load import add_parser as add_fetch_load
from acm_benchmarks.fleet import add_parser as add_fleet
from acm_benchmarks.ingest_stages import add_parser as add_ingest_stages
from acm_benchmarks.locomo import add_parser as add_locomo
from acm_benchmarks.prefetch import add_parser as add_prefetch
from acm_benchmarks.retention import add_parser as add_retention
from acm_benchmarks.safety import add_parser as add_safety
from acm_benchmarks.scale import add_parser as add_scale
from acm_benchmarks.tokens import add_parser as add_tokens
from acm_benchmarks.traces import add_parser as add_traces

AddParser = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

# name → the module's add_parser.
BENCHMARKS: dict[str, AddParser] = {
    "locomo": add_locomo,
    "tokens": add_tokens,
    "retention": add_retention,
    "coverage": add_coverage,
    "prefetch": add_prefetch,
    "safety": add_safety,
    "traces": add_traces,
    "fleet": add_fleet,
    "fetch-load": add_fetch_load,
    "ingest-stages": add_ingest_stages,
    "scale": add_scale,
}


def add_bench_parsers(bench: argparse.ArgumentParser) -> None:
    """Fill the `acm bench` parser with one subcommand per benchmark."""
    sub = bench.add_subparsers(dest="bench_command", required=True, metavar="BENCHMARK")
    for add_parser in BENCHMARKS.values():
        add_parser(sub)
