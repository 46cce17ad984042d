"""The gateway's HTTP listener beside the API: /healthz and /readyz mirror the gRPC health (readiness follows the
dependency checks, liveness does not), CORS only for the origins ACM_CORS_ORIGINS names, and the console's files
and key check (an admin key in, an agent key out, nothing but the shipped files served)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from acm import topics
from acm.adapters.dead_letters_sql import SqlDeadLetterRepo
from acm.auth import create_api_key
from acm.domain.compaction.record import CompactionRecord
from acm.domain.errors import Unauthenticated
from acm.domain.models import Job, JobStatus, Layer, Memory
from acm.domain.scope import Grant, KeyRole, Scope, Tier
from acm.ports.stores import ApiKey
from acm.transport import LOOPBACK_ONLY
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_gateway.app import GatewayServer
from acm_gateway.http_api import HttpGateway, WebApp
from acm_gateway.http_server import HttpServer
from acm_gateway.settings import parse_origins
from tests.support.events import turn_envelope

OPS = "https://ops.example.com"


@pytest.fixture
async def acm(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    results = tmp_path / "results"
    results.mkdir()
    Image.new("RGB", (40, 30), "navy").save(results / "fleet.png")
    (results / "fleet.json").write_text("{}")
    (tmp_path / "secret.png").write_bytes(b"not for the console")
    settings = EmbeddedSettings(
        data_dir=tmp_path / "acm",
        listen_addr="127.0.0.1:0",
        http_addr="127.0.0.1:0",
        cors_origins=OPS,
        results_dir=results,
    )
    async with EmbeddedAcm(settings) as running:
        yield running


async def test_cors_answers_only_the_named_origins(acm: EmbeddedAcm) -> None:
    base = f"http://127.0.0.1:{acm.http_port}"
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        preflight = {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization"}
        allowed = await http.options("/v1/memories", headers={"Origin": OPS, **preflight})
        assert allowed.status_code == 200, allowed.text
        assert allowed.headers["access-control-allow-origin"] == OPS
        assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
        other = await http.options("/v1/memories", headers={"Origin": "https://evil.example", **preflight})
        assert "access-control-allow-origin" not in other.headers

        auth = {"Authorization": f"Bearer {acm.api_key}"}
        query = {"scope.customerId": "acme", "scope.userId": "alice"}
        listed = await http.get("/v1/memories", params=query, headers={"Origin": OPS, **auth})
        assert listed.status_code == 200 and listed.headers["access-control-allow-origin"] == OPS
        foreign = await http.get("/v1/memories", params=query, headers={"Origin": "https://evil.example", **auth})
        assert "access-control-allow-origin" not in foreign.headers


async def test_the_console_serves_its_files_and_checks_the_key(
    acm: EmbeddedAcm, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="acm.requests")
    agent_secret = (
        await create_api_key(acm.stores["gateway"].api_keys, "local", "agent", Grant(KeyRole.AGENT, ("acme",)))
    )[1]
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{acm.http_port}", timeout=30) as http:
        page = await http.get("/console/")
        assert page.status_code == 200 and "ACM console" in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert (await http.get("/console")).headers["location"] == "/console/"
        assert (await http.get("/console/console.js")).headers["content-type"].startswith("text/javascript")
        for path in ("/console/../pyproject.toml", "/console/%2e%2e/__init__.py", "/console/nope.html"):
            assert (await http.get(path)).status_code == 404, path
        assert (await http.post("/console/api/whoami")).status_code == 405

        whoami = "/console/api/whoami"
        admin = await http.get(whoami, headers={"Authorization": f"Bearer {acm.api_key}"})
        assert admin.status_code == 200 and admin.json()["role"] == "admin" and admin.json()["clientId"] == "local"
        agent = await http.get(whoami, headers={"Authorization": f"Bearer {agent_secret}"})
        assert agent.status_code == 403 and "admin key" in agent.json()["message"]
        assert (await http.get(whoami)).status_code == 401
    lines = [r.getMessage() for r in caplog.records if r.name == "acm.requests" and "/console/api/" in r.getMessage()]
    assert any(f"key={acm.api_key.split('_')[1]} 200" in line for line in lines), lines
    assert any("key=- 401" in line for line in lines), lines
    assert not any(acm.api_key in line or agent_secret in line for line in lines), lines


async def test_the_benchmark_plots_are_the_results_folders_pngs_for_an_admin_only(
    acm: EmbeddedAcm, tmp_path: Path
) -> None:
    agent_secret = (
        await create_api_key(acm.stores["gateway"].api_keys, "local", "agent", Grant(KeyRole.AGENT, ("acme",)))
    )[1]
    admin = {"Authorization": f"Bearer {acm.api_key}"}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{acm.http_port}", timeout=30) as http:
        assert (await http.get("/console/api/results", headers=admin)).json() == {"plots": ["fleet.png"]}
        plot = await http.get("/console/api/results/fleet.png", headers=admin)
        assert plot.headers["content-type"] == "image/png"
        assert plot.content == (tmp_path / "results" / "fleet.png").read_bytes()
        for name in ("fleet.json", "..%2Fsecret.png", "../secret.png", "nope.png"):
            assert (await http.get(f"/console/api/results/{name}", headers=admin)).status_code == 404, name
        agent = {"Authorization": f"Bearer {agent_secret}"}
        assert (await http.get("/console/api/results/fleet.png", headers=agent)).status_code == 403
        assert (await http.get("/console/api/results")).status_code == 401


async def test_list_keys_shows_an_admin_the_clients_keys_and_no_secret(acm: EmbeddedAcm) -> None:
    agent, agent_secret = await create_api_key(
        acm.stores["gateway"].api_keys, "local", "support bot", Grant(KeyRole.AGENT, ("acme",), ("alice",))
    )
    await create_api_key(acm.stores["gateway"].api_keys, "other-client", "theirs")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{acm.http_port}", timeout=30) as http:
        listed = await http.get("/v1/keys", headers={"Authorization": f"Bearer {acm.api_key}"})
        assert listed.status_code == 200, listed.text
        keys = {k["keyId"]: k for k in listed.json()["keys"]}
        assert set(keys) == {agent.key_id, acm.api_key.split("_")[1]}  # this client's only
        assert keys[agent.key_id] | {"createdAt": ""} == {
            "keyId": agent.key_id,
            "name": "support bot",
            "role": "agent",
            "customers": ["acme"],
            "users": ["alice"],
            "createdAt": "",
            "revoked": False,
        }
        assert agent.key_hash not in listed.text and agent_secret not in listed.text
        refused = await http.get("/v1/keys", headers={"Authorization": f"Bearer {agent_secret}"})
        assert refused.status_code == 403 and "admin key" in refused.json()["message"]


async def test_list_users_shows_an_admin_who_has_memories(acm: EmbeddedAcm) -> None:
    memories = acm.stores["retrieve"].memories  # retrieve's copy: what ListUsers reads
    await memories.upsert(
        [
            _memory("a1", Scope("local", "acme", "alice")),
            _memory("a2", Scope("local", "acme", "alice")),
            _memory("b1", Scope("local", "acme", "bob")),
            _memory("g1", Scope("local", "globex", "carol")),
            _memory("shared", Scope("local", "acme", "alice"), Tier.CUSTOMER),
            _memory("theirs", Scope("other", "acme", "zed")),
        ]
    )
    agent_secret = (
        await create_api_key(acm.stores["gateway"].api_keys, "local", "agent", Grant(KeyRole.AGENT, ("acme",)))
    )[1]
    admin = {"Authorization": f"Bearer {acm.api_key}"}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{acm.http_port}", timeout=30) as http:
        first = (await http.get("/v1/users", params={"pageSize": 2}, headers=admin)).json()
        assert first["users"] == [
            {"customerId": "acme", "userId": "alice", "memories": 2},
            {"customerId": "acme", "userId": "bob", "memories": 1},
        ]
        rest = await http.get("/v1/users", params={"pageToken": first["nextPageToken"]}, headers=admin)
        assert rest.json() == {
            "users": [{"customerId": "globex", "userId": "carol", "memories": 1}],
            "nextPageToken": "",
        }
        refused = await http.get("/v1/users", headers={"Authorization": f"Bearer {agent_secret}"})
        assert refused.status_code == 403 and "admin key" in refused.json()["message"]
        assert (await http.get("/v1/users", params={"pageToken": "zz"}, headers=admin)).status_code == 400


async def test_list_jobs_shows_an_admin_the_clients_jobs_with_a_failures_reason(acm: EmbeddedAcm) -> None:
    admin = {"Authorization": f"Bearer {acm.api_key}"}
    jobs = acm.stores["gateway"].jobs
    failed = Scope("local", "globex", "carol", "bot", "s9")
    await jobs.create(Job("broken", failed, "import", created_at=datetime(2026, 1, 1, tzinfo=UTC)))
    await jobs.finish(failed, "broken", JobStatus.FAILED, {"memories": 0}, "line 3 is not JSON")
    await jobs.create(Job("theirs", Scope("other", "acme", "zed"), "ingest"))
    agent_secret = (
        await create_api_key(acm.stores["gateway"].api_keys, "local", "agent", Grant(KeyRole.AGENT, ("acme",)))
    )[1]
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{acm.http_port}", timeout=30) as http:
        turn = {"role": "ROLE_USER", "content": "I moved to Lisbon.", "turnId": "t1"}
        body = {"scope": {"customerId": "acme", "userId": "alice"}, "turn": turn}
        accepted = (await http.post("/v1/turns", json=body, headers=admin)).json()
        first = await http.get("/v1/jobs", params={"pageSize": 1}, headers=admin)
        assert first.status_code == 200, first.text
        [newest] = first.json()["jobs"]
        assert newest["job"]["jobId"] == accepted["jobId"] and newest["job"]["kind"] == "ingest"
        assert (newest["customerId"], newest["userId"]) == ("acme", "alice")
        rest = (await http.get("/v1/jobs", params={"pageToken": first.json()["nextPageToken"]}, headers=admin)).json()
        assert [j["job"]["jobId"] for j in rest["jobs"]] == ["broken"] and rest["nextPageToken"] == ""  # not "theirs"
        only_failed = (await http.get("/v1/jobs", params={"status": "JOB_STATUS_FAILED"}, headers=admin)).json()
        assert only_failed["jobs"] == [
            {
                "job": only_failed["jobs"][0]["job"]
                | {"jobId": "broken", "kind": "import", "status": "JOB_STATUS_FAILED", "error": "line 3 is not JSON"},
                "customerId": "globex",
                "userId": "carol",
                "agentId": "bot",
                "sessionId": "s9",
            }
        ]
        refused = await http.get("/v1/jobs", headers={"Authorization": f"Bearer {agent_secret}"})
        assert refused.status_code == 403 and "admin key" in refused.json()["message"]
        assert (await http.get("/v1/jobs", params={"pageToken": "zz"}, headers=admin)).status_code == 400
        assert (await http.get("/v1/jobs", params={"pageSize": 501}, headers=admin)).status_code == 400


async def test_list_dead_letters_shows_a_malformed_events_reason_and_never_its_content(acm: EmbeddedAcm) -> None:
    alice = Scope("local", "acme", "alice", "bot", "s1")
    unsigned = turn_envelope(alice, "my card number is PLUGH-XYZZY", "t-unsigned", "j-unsigned").SerializeToString()
    await acm.bus.publish(topics.TURNS, alice.session_key, b"\x00\xffnot a protobuf")  # claims no client
    await acm.bus.publish(topics.TURNS, alice.session_key, unsigned)
    theirs = turn_envelope(Scope("other", "acme", "zed"), "theirs", "t-theirs", "j-theirs").SerializeToString()
    await acm.bus.publish(topics.TURNS, "other/acme/zed/", theirs)
    admin = {"Authorization": f"Bearer {acm.api_key}"}
    letters: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{acm.http_port}", timeout=30) as http:
        for _ in range(200):  # ingest and architect dead-letter it; the gateway keeps both
            listed = await http.get("/v1/dead-letters", headers=admin)
            assert listed.status_code == 200, listed.text
            letters = listed.json()["letters"]
            if {x["group"] for x in letters} >= {"ingest", "architect"}:
                break
            await asyncio.sleep(0.1)
        by_group = {x["group"]: x for x in letters}
        assert set(by_group) == {"ingest", "architect"}, letters  # neither the garbage's nor another client's
        ingest = by_group["ingest"]
        assert "signature" in ingest["reason"], ingest
        assert ingest["topic"] == topics.TURNS and ingest["key"] == alice.session_key
        # The size is the record's as the bus carried it: the bus sealed the unsigned turn, which only adds bytes.
        assert int(ingest["sizeBytes"]) >= len(unsigned) and ingest["failedAt"] and ingest["attempts"] >= 1
        assert "PLUGH" not in listed.text  # the event itself is never kept
        page = (await http.get("/v1/dead-letters", params={"pageSize": 1}, headers=admin)).json()
        rest = await http.get("/v1/dead-letters", params={"pageToken": page["nextPageToken"]}, headers=admin)
        assert [x["letterId"] for x in page["letters"] + rest.json()["letters"]] == [x["letterId"] for x in letters]
        # Forgetting alice deletes her letters (their keys name her) at once.
        forget = {"scope": {"customerId": "acme", "userId": "alice"}, "level": "user"}
        assert (await http.post("/v1/forget", json=forget, headers=admin)).status_code == 200
        assert (await http.get("/v1/dead-letters", headers=admin)).json()["letters"] == []
    unclaimed = await SqlDeadLetterRepo.of(acm.stores["gateway"]).of_client("", 10)
    assert sorted(x.group for x in unclaimed) == ["architect", "ingest"]  # the garbage: kept, listed to no client


async def test_list_compactions_shows_an_admin_every_sessions_outcome(acm: EmbeddedAcm) -> None:
    working = acm.stores["compact"].working  # compact's own records: what ListCompactions reads
    at = datetime(2026, 5, 1, tzinfo=UTC)
    failed = CompactionRecord("k1", "failed", 900, 900, 1.0, False, 3, ("PO-7",), message="missing PO-7", created_at=at)
    done = CompactionRecord("k2", "compacted", 900, 300, 0.33, True, 1, created_at=at + timedelta(minutes=1))
    await working.record(Scope("local", "acme", "alice", "bot", "s1"), failed)
    await working.record(Scope("local", "globex", "carol", "bot", "s2"), done)
    await working.record(Scope("other", "acme", "zed", "bot", "s1"), replace(done, compaction_id="theirs"))
    admin = {"Authorization": f"Bearer {acm.api_key}"}
    agent_secret = (
        await create_api_key(acm.stores["gateway"].api_keys, "local", "agent", Grant(KeyRole.AGENT, ("acme",)))
    )[1]
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{acm.http_port}", timeout=30) as http:
        first = await http.get("/v1/compactions", params={"pageSize": 1}, headers=admin)
        assert first.status_code == 200, first.text
        [newest] = first.json()["compactions"]
        assert (newest["customerId"], newest["userId"], newest["sessionId"]) == ("globex", "carol", "s2")
        assert newest["compaction"]["compactionId"] == "k2" and newest["compaction"]["verified"] is True
        rest = await http.get("/v1/compactions", params={"pageToken": first.json()["nextPageToken"]}, headers=admin)
        [older] = rest.json()["compactions"]  # not "theirs"
        assert rest.json()["nextPageToken"] == ""
        assert older["compaction"]["outcome"] == "failed" and older["compaction"].get("verified", False) is False
        assert older["compaction"]["missingAtoms"] == ["PO-7"] and older["compaction"]["message"] == "missing PO-7"
        refused = await http.get("/v1/compactions", headers={"Authorization": f"Bearer {agent_secret}"})
        assert refused.status_code == 403 and "admin key" in refused.json()["message"]
        assert (await http.get("/v1/compactions", params={"pageToken": "zz"}, headers=admin)).status_code == 400


def _memory(memory_id: str, scope: Scope, tier: Tier = Tier.USER) -> Memory:
    return Memory(memory_id, scope.owner(tier), f"memory {memory_id}", Layer.LONG, "fact", (), datetime.now(UTC))


class _NoKeys:
    async def authenticate(self, secret: str | None) -> ApiKey:
        raise Unauthenticated("no keys here")


class _Checks:
    def __init__(self) -> None:
        self.database_up = False

    async def database(self) -> None:
        if not self.database_up:
            raise ConnectionError("database down")


async def test_readyz_follows_the_dependency_checks_and_healthz_does_not() -> None:
    checks = _Checks()
    server = GatewayServer("127.0.0.1:0")
    server.watch({"database": checks.database}, every_s=0.05)
    app = WebApp(HttpGateway(object()), _NoKeys(), server.health)  # the probes ask for no key
    server.http = HttpServer(app, "127.0.0.1:0", LOOPBACK_ONLY)
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.http.port}", timeout=10) as http:
            ready = await http.get("/readyz")
            assert (ready.status_code, ready.json()) == (503, {"status": "NOT_SERVING"})
            assert (await http.get("/healthz")).json() == {"status": "SERVING"}
            checks.database_up = True
            for _ in range(100):
                ready = await http.get("/readyz")
                if ready.status_code == 200:
                    break
                await asyncio.sleep(0.05)
            assert ready.json() == {"status": "SERVING"}
    finally:
        await server.stop(0)


@pytest.mark.parametrize("bad", ["ops.example.com", "https://ops.example.com/path", "ftp://x", "https://a b"])
def test_an_origin_setting_that_is_not_an_origin_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="is not an origin"):
        parse_origins(f"{OPS},{bad}")
    assert parse_origins(f" {OPS}/ , http://127.0.0.1:3000") == (OPS, "http://127.0.0.1:3000")
    assert parse_origins("") == ()
