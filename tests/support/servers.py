"""Where the tests get each real server from, in order:

1. an address given in the environment (ACM_TEST_KAFKA_BOOTSTRAP, ACM_TEST_POSTGRES_DSN,
   ACM_TEST_NEO4J_URI, ACM_TEST_REDIS_URL);
2. testcontainers, where a Docker engine answers (developer laptops);
3. the native scripts in scripts/infra/ (here and in CI, where no engine runs).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INFRA_DIR = Path(os.environ.get("ACM_INFRA_DIR", "/var/tmp/acm-infra"))

ENV_VARS = {
    "kafka": "ACM_TEST_KAFKA_BOOTSTRAP",
    "postgres": "ACM_TEST_POSTGRES_DSN",
    "neo4j": "ACM_TEST_NEO4J_URI",
    "redis": "ACM_TEST_REDIS_URL",
}


def docker_answers() -> bool:
    try:
        import docker  # type: ignore[import-untyped]

        docker.from_env(timeout=2).ping()
        return True
    except Exception:
        return False


def _from_testcontainers(name: str, stack: ExitStack) -> str:
    if name == "kafka":
        from testcontainers.kafka import KafkaContainer

        kafka = stack.enter_context(KafkaContainer("confluentinc/cp-kafka:7.6.0").with_kraft())
        return str(kafka.get_bootstrap_server())
    if name == "postgres":
        from testcontainers.postgres import PostgresContainer

        pg = stack.enter_context(PostgresContainer("postgres:15", driver=None))
        return str(pg.get_connection_url())
    if name == "neo4j":
        from testcontainers.neo4j import Neo4jContainer

        neo = stack.enter_context(Neo4jContainer("neo4j:5.26").with_env("NEO4J_AUTH", "none"))
        return str(neo.get_connection_url())
    from testcontainers.redis import RedisContainer

    redis = stack.enter_context(RedisContainer("redis:7"))
    return f"redis://{redis.get_container_host_ip()}:{redis.get_exposed_port(6379)}/0"


def _from_native_scripts(name: str) -> str:
    subprocess.run(["bash", str(ROOT / "scripts/infra/up.sh"), name], check=True)
    env_file = INFRA_DIR / "env"
    values = dict(
        line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line and not line.startswith("#")
    )
    return values[ENV_VARS[name]]


def server_address(name: str, stack: ExitStack, docker_check: Callable[[], bool] = docker_answers) -> str:
    given = os.environ.get(ENV_VARS[name])
    if given:
        return given
    if docker_check():
        return _from_testcontainers(name, stack)
    return _from_native_scripts(name)
