"""A turn's metadata reaches its memories (redacted as the turn is) through ingest and retrieve's projection, and
ListMemories filters by it: `metadata=key=value` in the HTTP query (the proto's repeated field), every pair must
match (and `acm memories list --metadata` the same); a filter that is not key=value is a 400."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from acm_cli.embedded import EmbeddedAcm
from tests.integration import test_http_api
from tests.support.acm_serve import ACM

ALICE = {"customerId": "acme", "userId": "alice", "sessionId": "s1"}
QUERY = {"scope.customerId": "acme", "scope.userId": "alice"}


# An embedded ACM serving HTTP, and a client with its admin key: test_http_api's fixtures.
acm, http = test_http_api.acm, test_http_api.http


async def _ingest(http: httpx.AsyncClient, turn_id: str, content: str, metadata: dict[str, str]) -> None:
    turn = {"turnId": turn_id, "role": "ROLE_USER", "content": content, "metadata": metadata}
    accepted = await http.post("/v1/turns", json={"scope": ALICE, "turn": turn})
    assert accepted.status_code == 200, accepted.text
    for _ in range(300):
        job = (await http.get(f"/v1/jobs/{accepted.json()['jobId']}", params=QUERY)).json()
        if job["status"] != "JOB_STATUS_PENDING":
            assert job["status"] == "JOB_STATUS_DONE", job
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"turn {turn_id} still pending")


async def _texts(http: httpx.AsyncClient, *metadata: str) -> list[dict[str, Any]]:
    got = await http.get("/v1/memories", params=[*QUERY.items(), *(("metadata", m) for m in metadata)])
    assert got.status_code == 200, got.text
    return list(got.json()["memories"])


async def test_memories_carry_their_turns_metadata_and_filter_by_it(acm: EmbeddedAcm, http: httpx.AsyncClient) -> None:
    await _ingest(http, "t1", "I moved to Lisbon in May.", {"ticket": "T-1", "channel": "email"})
    await _ingest(http, "t2", "My favourite colour is green.", {"ticket": "T-2", "channel": "chat"})
    await _ingest(http, "t3", "Call me at +1 415 555 0100 please.", {"ticket": "T-3", "phone": "+1 415 555 0100"})

    t1 = await _texts(http, "ticket=T-1")
    assert t1 and all("Lisbon" in m["memory"]["text"] for m in t1), t1
    assert {m["memory"]["kind"] for m in t1} >= {"turn"}  # the turn's memory and its facts
    assert all(m["metadata"] == {"ticket": "T-1", "channel": "email"} for m in t1)
    assert await _texts(http, "ticket=T-1", "channel=email") == t1
    assert await _texts(http, "ticket=T-1", "channel=chat") == []
    assert all("green" in m["memory"]["text"] for m in await _texts(http, "channel=chat"))
    assert len(await _texts(http)) > len(t1)

    # Metadata is redacted like the rest of the turn: the phone number is not stored, and not findable.
    t3 = await _texts(http, "ticket=T-3")
    assert t3 and all("555 0100" not in m["metadata"]["phone"] for m in t3), t3
    assert await _texts(http, "phone=+1 415 555 0100") == []

    # The CLI's flag is the same filter.
    cli = await asyncio.create_subprocess_exec(
        str(ACM),
        "memories",
        "list",
        "--addr",
        f"127.0.0.1:{acm.port}",
        "--api-key",
        acm.api_key,
        "-c",
        "acme",
        "-u",
        "alice",
        "--metadata",
        "ticket=T-1",
        "--metadata",
        "channel=email",
        "--json",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(cli.communicate(), 60)
    assert cli.returncode == 0, err.decode()
    listed = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    assert sorted(m["memory"]["memory_id"] for m in listed) == sorted(m["memory"]["memoryId"] for m in t1)

    for bad in ("ticket", "=T-1"):
        refused = await http.get("/v1/memories", params={**QUERY, "metadata": bad})
        assert refused.status_code == 400 and "key=value" in refused.json()["message"], refused.text
