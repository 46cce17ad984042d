"""The gateway redacts every string of a turn before it reaches the bus: content (JSON tool output decoded,
Chinese cue words \\uXXXX-escaped), tool_name, metadata keys and values. Checked on the bytes a real Kafka
topic holds, read back by a consumer."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import grpc
import pytest

from acm import topics
from acm.adapters.kafka_bus import KafkaBus
from acm.adapters.memory_cache import MemoryCache
from acm.auth import create_api_key
from acm.bootstrap import open_relational
from acm.domain.retrieved import Retrieval, RetrievalQuery
from acm.ports.bus import Record
from acm.schemas import RepoSchemaSource
from acm.v1 import common_pb2, events_pb2, gateway_pb2, gateway_pb2_grpc
from acm_gateway.app import build_server, build_servicer
from acm_gateway.settings import GatewaySettings

SECRETS = {
    "card": "4539 1488 0343 6467",
    "unionpay": "6217 0033 1000 2233 441",
    "iban": "fr14 2004 1010 0505 0001 3m02 606",
    "key": "sk-live9Qm2Xr7Lp4Vt8Wz1Nb6Hc3Jd5Kf0",
    "otp": "830164",
    "password": "Pelican-77!",
    "email": "h.tanaka@kyoto-mail.example",
}


class _NoRetriever:
    """Ingest never retrieves."""

    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        raise AssertionError("Ingest must not call retrieve")

    async def keyword_ids(self, query: RetrievalQuery, limit: int) -> list[str]:
        raise AssertionError("Ingest must not call retrieve")


def _turn() -> common_pb2.Turn:
    tool_output = json.dumps(
        {"客户": {"验证码": SECRETS["otp"], "银行卡号": SECRETS["unionpay"]}, "status": "ok"}
    )  # \\uXXXX-escaped keys
    return common_pb2.Turn(
        role=common_pb2.ROLE_TOOL,
        content=tool_output,
        tool_name=f"mail.send:{SECRETS['email']}",
        metadata={
            "payment_card": SECRETS["card"],
            "payout_iban": SECRETS["iban"],
            "x-api-key": SECRETS["key"],
            SECRETS["email"]: "reply-to",
            "args": json.dumps({"pwd": SECRETS["password"]}),
            "speaker": "billing-bot",
        },
    )


@pytest.mark.timeout(120)
async def test_gateway_publishes_only_redacted_strings(tmp_path: Path, kafka_bootstrap: str) -> None:
    namespace = f"redact-{uuid.uuid4().hex[:8]}."
    db = f"sqlite:///{tmp_path / 'acm.db'}"
    rel = await open_relational(db)
    bus = KafkaBus(kafka_bootstrap, client_id="gateway-test", namespace=namespace)
    probe = KafkaBus(kafka_bootstrap, client_id="probe", namespace=namespace)
    received: list[Record] = []
    arrived = asyncio.Event()

    async def collect(record: Record) -> None:
        received.append(record)
        arrived.set()

    probe.subscribe(topics.TURNS, "probe", collect)
    settings = GatewaySettings(
        database_url=db, bus_url="kafka://unused", retrieve_addr="unused:1", architect_addr="unused:1",
        cache_url="memory://",
    )  # fmt: skip
    server = build_server(
        build_servicer(rel, bus, _NoRetriever(), MemoryCache(), settings, RepoSchemaSource(rel.schemas)),
        "127.0.0.1:0",
    )
    await server.start()
    try:
        _, secret = await create_api_key(rel.api_keys, "c1", "test")
        scope = common_pb2.Scope(customer_id="acme", user_id="alice", session_id="s1")
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as gw:
            stub = gateway_pb2_grpc.GatewayStub(gw)
            await stub.Ingest(
                gateway_pb2.IngestRequest(scope=scope, turn=_turn()), metadata=(("authorization", f"Bearer {secret}"),)
            )
        await probe.start()
        async with asyncio.timeout(60):
            await arrived.wait()
    finally:
        await server.stop()
        await probe.stop()
        await bus.stop()
        await rel.close()

    raw = received[0].value
    env = events_pb2.Envelope.FromString(raw)
    turn = env.turn_received.turn
    for name, value in SECRETS.items():
        for form in {value, value.replace(" ", ""), json.dumps(value)[1:-1]}:
            assert form.encode() not in raw, name  # not in any field, escaped or not
    assert turn.tool_name == "mail.send:[REDACTED:email]"
    assert dict(turn.metadata) == {
        "payment_card": "[REDACTED:card]",
        "payout_iban": "[REDACTED:iban]",
        "x-api-key": "[REDACTED:secret]",
        "[REDACTED:email]": "reply-to",
        "args": json.dumps({"pwd": "[REDACTED:secret]"}),
        "speaker": "billing-bot",
    }
    content = json.loads(turn.content)
    assert content == {"客户": {"验证码": "[REDACTED:otp]", "银行卡号": "[REDACTED:card]"}, "status": "ok"}
    assert turn.content.isascii()  # re-encoded the way it came
