from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from tests.support.servers import server_address


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
