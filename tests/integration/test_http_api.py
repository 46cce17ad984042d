"""The HTTP/JSON API of a running embedded ACM, with a real HTTP client: a turn in, its job, the context out,
and the errors a caller can meet (each a google.rpc.Status with its HTTP status and an error id)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from acm.auth import create_api_key
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from tests.support.acm_serve import ACM, acm_serve
from tests.support.ports import unused_ports

ALICE = {"customerId": "acme", "userId": "alice", "sessionId": "s1"}


@pytest.fixture
async def acm(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    settings = EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0", http_addr="127.0.0.1:0")
    async with EmbeddedAcm(settings) as running:
        yield running


@pytest.fixture
async def http(acm: EmbeddedAcm) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {acm.api_key}"}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{acm.http_port}", headers=headers, timeout=30) as client:
        yield client


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    """The google.rpc.Status body of a failed call, checked for its HTTP status and error id."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()
    (info,) = body["details"]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert len(info["metadata"]["error_id"]) == 16
    return body


async def test_a_turn_in_its_job_and_the_context_out(http: httpx.AsyncClient) -> None:
    turn = {"role": "ROLE_USER", "content": "I moved to Lisbon in May.", "occurredAt": "2026-06-01T10:00:00Z"}
    accepted = await http.post("/v1/turns", json={"scope": ALICE, "turn": turn})
    assert accepted.status_code == 200, accepted.text
    job_id = accepted.json()["jobId"]

    job: dict[str, Any] = {}
    for _ in range(120):
        got = await http.get(f"/v1/jobs/{job_id}", params={"scope.customerId": "acme", "scope.userId": "alice"})
        assert got.status_code == 200, got.text
        job = got.json()
        if job["status"] != "JOB_STATUS_PENDING":
            break
        await asyncio.sleep(0.5)
    assert job["status"] == "JOB_STATUS_DONE", job
    assert job["jobId"] == job_id and job["kind"]

    fetched = await http.post("/v1/context:fetch", json={"scope": ALICE, "query": "where do I live?"})
    assert fetched.status_code == 200, fetched.text
    bundle = fetched.json()
    assert any("Lisbon" in m["text"] for m in bundle["memories"]), bundle
    assert "Lisbon" in bundle["context"]
    assert bundle["dropped"] == 0  # fields at their default are written too
    assert 0 < bundle["contextTokens"] <= bundle["budgetTokens"]

    listed = await http.get("/v1/memories", params=[("scope.customerId", "acme"), ("scope.userId", "alice")])
    assert listed.status_code == 200, listed.text
    memory_id = next(m["memory"]["memoryId"] for m in listed.json()["memories"] if "Lisbon" in m["memory"]["text"])
    one = await http.get(f"/v1/memories/{memory_id}", params={"scope.customerId": "acme", "scope.userId": "alice"})
    assert one.status_code == 200 and one.json()["memory"]["memoryId"] == memory_id


async def test_the_api_key_is_required_and_checked(acm: EmbeddedAcm, http: httpx.AsyncClient) -> None:
    base = f"http://127.0.0.1:{acm.http_port}"
    body = {"scope": ALICE, "query": "q"}
    async with httpx.AsyncClient(base_url=base) as anonymous:
        _error(await anonymous.post("/v1/context:fetch", json=body), 401)
        wrong = await anonymous.post("/v1/context:fetch", json=body, headers={"Authorization": "Bearer acm_no_secret"})
        assert _error(wrong, 401)["message"]
        # The gRPC API's other header works here too.
        keyed = await anonymous.post("/v1/context:fetch", json=body, headers={"x-api-key": acm.api_key})
        assert keyed.status_code == 200, keyed.text

    other_client = await http.post("/v1/context:fetch", json={"scope": {**ALICE, "clientId": "someone-else"}})
    assert _error(other_client, 403)["code"] == 7  # PERMISSION_DENIED

    _, other_key = await create_api_key(acm.stores["gateway"].api_keys, "c2", "another client")
    accepted = await http.post("/v1/turns", json={"scope": ALICE, "turn": {"role": "ROLE_USER", "content": "hi"}})
    job_id = accepted.json()["jobId"]
    theirs = await http.get(
        f"/v1/jobs/{job_id}",
        params={"scope.customerId": "acme", "scope.userId": "alice"},
        headers={"Authorization": f"Bearer {other_key}"},
    )
    _error(theirs, 404)  # another client's job is not there for them


async def test_bad_requests_and_missing_things(http: httpx.AsyncClient) -> None:
    no_customer = await http.post("/v1/turns", json={"scope": {"userId": "alice"}, "turn": {"content": "hi"}})
    assert "customer_id is required" in _error(no_customer, 400)["message"]
    assert "not JSON" in _error(await http.post("/v1/turns", content=b"{oops"), 400)["message"]
    unknown_field = await http.post("/v1/context:fetch", json={"scope": ALICE, "question": "q"})
    assert "question" in _error(unknown_field, 400)["message"]
    bad_bool = await http.get("/v1/memories", params={"scope.customerId": "acme", "includeStale": "maybe"})
    _error(bad_bool, 400)

    missing_job = await http.get("/v1/jobs/no-such-job", params={"scope.customerId": "acme", "scope.userId": "alice"})
    assert _error(missing_job, 404)["code"] == 5  # NOT_FOUND
    missing_memory = await http.get("/v1/memories/nope", params={"scope.customerId": "acme", "scope.userId": "alice"})
    _error(missing_memory, 404)
    _error(await http.get("/v2/nothing"), 404)
    _error(await http.put("/v1/turns", json={}), 501)  # the path is there, not with this verb


async def test_acm_serve_serves_the_http_api_where_acm_http_addr_says(tmp_path: Path) -> None:
    [port] = unused_ports(1)
    with acm_serve(tmp_path / "acm", {"ACM_HTTP_ADDR": f"127.0.0.1:{port}"}) as served:
        assert f"HTTP/JSON API on http://127.0.0.1:{port}" in (tmp_path / "acm.serve.log").read_text()
        params = {"scope.customerId": "acme", "scope.userId": "alice"}
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            _error(await client.get("/v1/jobs/j1", params=params), 401)
            keyed = await client.get("/v1/jobs/j1", params=params, headers={"x-api-key": served.api_key})
            _error(keyed, 404)


def test_acm_serve_refuses_a_taken_http_address_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        addr = f"127.0.0.1:{taken.getsockname()[1]}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACM_")} | {"ACM_HTTP_ADDR": addr}
        done = subprocess.run(
            [str(ACM), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path)],
            env=env,
            capture_output=True,
            timeout=60,
        )
    err = done.stderr.decode()
    assert done.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert addr in err and "ACM_HTTP_ADDR" in err, err
