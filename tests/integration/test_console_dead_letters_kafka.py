"""Dead letters on real Kafka and Postgres: a consumer gives up on a malformed envelope (acm.envelopes.decode, every
consumer's first step), the delivery layer writes it to the group's dead-letter topic, and the gateway's handler,
subscribed as acm_gateway.app subscribes it, keeps it in a Postgres store with its reason: once, without the event."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest

from acm import topics
from acm.adapters.dead_letters_sql import SqlDeadLetterRepo
from acm.adapters.kafka_bus import KafkaBus
from acm.adapters.postgres_store import PostgresStore
from acm.envelopes import decode
from acm.ports.bus import Record
from acm.ports.stores import DeadLetterEntry
from acm.v1 import common_pb2, events_pb2
from acm_gateway.handlers.dead_letters import GROUP, DeadLetterHandler

pytestmark = pytest.mark.infra


@pytest.fixture
async def letters(postgres_dsn: str) -> AsyncIterator[SqlDeadLetterRepo]:
    schema = f"dlq_{uuid.uuid4().hex[:12]}"
    store = await PostgresStore.open(postgres_dsn, schema=schema)
    try:
        yield SqlDeadLetterRepo(store.executor)  # type: ignore[arg-type]
    finally:
        await store.close()
        async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as conn:
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


async def _consumer(record: Record) -> None:
    decode(record.value, "turn_received")  # raises PermanentError: this one is not a turn


async def test_a_malformed_event_on_kafka_is_kept_with_its_reason(
    kafka_bootstrap: str, letters: SqlDeadLetterRepo
) -> None:
    namespace = f"dlq-{uuid.uuid4().hex[:8]}."
    bus = KafkaBus(kafka_bootstrap, namespace=namespace, deliver_backoff_s=0.05)
    bus.subscribe(topics.TURNS, "ingest", _consumer)
    for group in topics.DEAD_LETTER_GROUPS:
        bus.subscribe(topics.dead_letter(group), GROUP, DeadLetterHandler(letters))
    env = events_pb2.Envelope(
        event_id="e-wrong-body", scope=common_pb2.Scope(client_id="local", customer_id="acme", user_id="alice")
    )
    env.forget_requested.job_id = "j1"  # a forget where a turn belongs
    await bus.start()
    try:
        await bus.publish(topics.TURNS, "local/acme/alice/", env.SerializeToString())
        found: list[DeadLetterEntry] = []
        for _ in range(600):
            found = await letters.of_client("local", 10)
            if found:
                break
            await asyncio.sleep(0.1)
    finally:
        await bus.stop()
    [letter] = found
    assert letter.reason.startswith("PermanentError: expected a turn_received body, got forget_requested"), letter
    # The topic as the broker names it (this deployment's namespace first).
    assert (letter.group, letter.topic, letter.key) == ("ingest", namespace + topics.TURNS, "local/acme/alice/")
    assert (letter.customer_id, letter.user_id, letter.event_id) == ("acme", "alice", "e-wrong-body")
    assert letter.size_bytes == len(env.SerializeToString()) and letter.attempts == 1
