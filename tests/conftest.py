from __future__ import annotations

import functools
import os
import random
import re
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.support.ports import refusing_port
from tests.support.servers import server_address

# `pytest -n N` (scripts/test.sh): tests are spread one by one over the workers, except that a file with a
# fixture wider than one test (module-, class- or package-scoped: a server, a loaded model) goes whole to one
# worker, so that fixture is built once; a file marked xdist_group("name") shares a worker with the other files
# of that name. The ids are read from the files' text because xdist 3.8's loadgroup marks no longer reach the
# ids under pytest 9 (it writes Item._nodeid; pytest 9 reads Item._id).
_SHARED_FIXTURE = re.compile(r"""scope\s*=\s*["'](?:module|class|package)["']""")
_NAMED_GROUP = re.compile(r"""xdist_group\(\s*(?:name\s*=\s*)?["']([^"']+)["']""")
# Another test file's fixtures can be imported (test_cli_memories uses test_cli's module-scoped `served`).
_TEST_IMPORT = re.compile(r"^from tests\.(\w+)(?:\.(test_\w+) import| import (test_\w+))", re.MULTILINE)


@functools.cache
def _shares_fixture(root: Path, path: str) -> bool:
    try:
        text = (root / path).read_text()
    except OSError:
        return False
    if _SHARED_FIXTURE.search(text):
        return True
    imported = (f"tests/{m[0]}/{m[1] or m[2]}.py" for m in _TEST_IMPORT.findall(text))
    return any(_shares_fixture(root, other) for other in imported if other != path)


# Files whose tests must not run at the same time on the shared servers, by group name (a test that can be
# made unique - a uuid in its ids, a database, schema or Kafka namespace of its own, port 0 - is made so
# instead; docs/testing.md):
# - neo4j-graph: Neo4j keeps entity_id and memory_id unique across clients; the graph contract's tests reuse
#   fixed ids ("sarah") in fresh clients and erase them afterwards, so its tests run one after the other.
_GROUPS = {
    "tests/contract/test_graph_contract.py": "neo4j-graph",
}


@functools.cache
def _file_group(root: Path, path: str) -> str | None:
    if path in _GROUPS:
        return _GROUPS[path]
    try:
        named = _NAMED_GROUP.search((root / path).read_text())
    except OSError:
        return None
    if named:
        return named.group(1)
    return path if _shares_fixture(root, path) else None


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # xdist is in the dev extra; without it pytest simply runs serially
    pass
else:

    class _FileWhenShared(LoadScopeScheduling):
        """One work unit per test, or per file (or named group) when the file shares a fixture. Units are
        handed out largest first (xdist's loadscope order): the server-backed files start early and the many
        short unit tests fill the end."""

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return _file_group(self.config.rootpath, path) or nodeid

    @pytest.hookimpl(optionalhook=True)  # `-p no:xdist` (xdist installed, not loaded) must not make it unknown
    def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadScopeScheduling | None:
        if config.getvalue("dist") in ("load", "loadgroup"):  # `-n N` alone means "load"
            return _FileWhenShared(config, log)
        return None  # --dist loadfile, each, ...: xdist's own


def pytest_configure(config: pytest.Config) -> None:
    """xdist requires every worker to collect the same ids; an id printed from a set follows the string hash
    seed, so the workers get one seed, drawn here per run (as random as a serial run's)."""
    if config.getoption("dist", "no") != "no" and not os.environ.get("PYTHONHASHSEED"):
        os.environ["PYTHONHASHSEED"] = str(random.randrange(1, 2**32))


def pytest_report_header(config: pytest.Config) -> str | None:
    seed = os.environ.get("PYTHONHASHSEED")
    return f"PYTHONHASHSEED={seed} (set it to repeat this run's set orders)" if seed else None


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port where connections are refused for the whole test, and which no other worker's server can
    be given meanwhile (tests/support/ports.py)."""
    with refusing_port() as port:
        yield port


@pytest.fixture(scope="session")
def _server_stack() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


@pytest.fixture(scope="session")
def kafka_bootstrap(_server_stack: ExitStack) -> str:
    return server_address("kafka", _server_stack)


@pytest.fixture(scope="session")
def postgres_dsn(_server_stack: ExitStack) -> str:
    return server_address("postgres", _server_stack)


@pytest.fixture(scope="session")
def neo4j_uri(_server_stack: ExitStack) -> str:
    return server_address("neo4j", _server_stack)


@pytest.fixture(scope="session")
def redis_url(_server_stack: ExitStack) -> str:
    return server_address("redis", _server_stack)
