"""The HTTP/JSON transcoding's pure parts: path templates, routes from the descriptors, requests from the path,
query and body, and the error body."""

from __future__ import annotations

import json

import grpc
import pytest

from acm.openapi import document
from acm.v1 import common_pb2, gateway_pb2, memories_pb2
from acm_gateway.http_api import (
    GATEWAY,
    HTTP_STATUS,
    HttpError,
    Route,
    build_request,
    compile_template,
    routes_of,
    status_body,
)
from tests.unit.test_openapi_drift import ROOT


def _route(name: str) -> Route:
    (route,) = [r for r in routes_of(GATEWAY) if r.method.name == name]
    return route


def test_templates_match_literals_variables_and_custom_verbs() -> None:
    pattern, variables = compile_template("/v1/memories/{memory_id}/history")
    found = pattern.match("/v1/memories/m-1/history")
    assert found and found.groups() == ("m-1",) and variables == ("memory_id",)
    assert pattern.match("/v1/memories/a/b/history") is None  # one segment only

    fetch, none = compile_template("/v1/context:fetch")
    assert fetch.match("/v1/context:fetch") and not fetch.match("/v1/context") and none == ()

    wide, names = compile_template("/v1/{name=things/*/parts/**}:get")
    found = wide.match("/v1/things/t1/parts/a/b:get")
    assert found and found.groups() == ("things/t1/parts/a/b",) and names == ("name",)


def test_every_gateway_rpc_has_one_route_and_each_route_is_in_the_openapi_document() -> None:
    routes = routes_of(GATEWAY)
    assert sorted(r.method.name for r in routes) == sorted(m.name for m in GATEWAY.methods)
    assert len({(r.verb, r.pattern.pattern) for r in routes}) == len(routes)  # no two on the same verb and path
    doc = document(ROOT / "protos")
    operations = {op["operationId"] for path in doc["paths"].values() for op in path.values()}
    assert operations == {f"Gateway_{r.method.name}" for r in routes}


def test_a_get_takes_the_path_and_the_query_by_json_or_proto_names() -> None:
    route = _route("ListMemories")
    query = [
        ("scope.customerId", "acme"),
        ("scope.user_id", "alice"),
        ("tiers", "TIER_USER"),
        ("tiers", "TIER_CUSTOMER"),
        ("includeStale", "true"),
        ("pageSize", "20"),
        ("createdAfter", "2026-05-01T00:00:00Z"),
    ]
    request = build_request(route, (), query, b"")
    assert isinstance(request, memories_pb2.ListMemoriesRequest)
    assert request.scope == common_pb2.Scope(customer_id="acme", user_id="alice")
    assert list(request.tiers) == [common_pb2.TIER_USER, common_pb2.TIER_CUSTOMER]
    assert request.include_stale and request.page_size == 20
    assert request.created_after.ToJsonString() == "2026-05-01T00:00:00Z"

    get_agent = _route("GetAgent")
    found = get_agent.pattern.match("/v1/agents/billing%20bot")
    assert found
    request = build_request(get_agent, found.groups(), [("scope.customerId", "acme")], b"")
    assert request == gateway_pb2.GetAgentRequest(scope=common_pb2.Scope(customer_id="acme", agent_id="billing bot"))


def test_a_body_fills_the_request_and_the_path_wins() -> None:
    body = json.dumps({"scope": {"customerId": "acme"}, "memoryId": "from-body", "text": "new", "source": "ticket 1"})
    request = build_request(_route("UpdateMemory"), ("m-9",), [], body.encode())
    assert request == gateway_pb2.UpdateMemoryRequest(
        scope=common_pb2.Scope(customer_id="acme"), memory_id="m-9", text="new", source="ticket 1"
    )
    turn = {"scope": {"customerId": "acme", "userId": "alice"}, "turn": {"role": "ROLE_USER", "content": "hi"}}
    ingest = build_request(_route("Ingest"), (), [], json.dumps(turn).encode())
    assert isinstance(ingest, gateway_pb2.IngestRequest)
    assert ingest.turn.role == common_pb2.ROLE_USER and ingest.turn.content == "hi"


@pytest.mark.parametrize(
    ("route", "query", "body", "says"),
    [
        ("Ingest", [], b"{not json", "not JSON"),
        ("Ingest", [], b'{"scope": {"nope": 1}}', "nope"),
        ("Fetch", [], b'{"budgetTokens": "many"}', "budgetTokens"),
        ("ListMemories", [("includeStale", "perhaps")], b"", "not true or false"),
        ("ListMemories", [("scope.nope", "x")], b"", "no field 'nope'"),
        ("ListMemories", [("pageSize.x", "1")], b"", "not a message field"),
    ],
)
def test_a_request_that_cannot_be_read_is_invalid_argument(
    route: str, query: list[tuple[str, str]], body: bytes, says: str
) -> None:
    with pytest.raises(HttpError) as err:
        build_request(_route(route), (), query, body)
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT and says in err.value.message


def test_the_error_body_is_a_google_rpc_status_with_the_error_id() -> None:
    body = json.loads(status_body(grpc.StatusCode.NOT_FOUND, "no job j1", "0123456789abcdef"))
    assert body["code"] == grpc.StatusCode.NOT_FOUND.value[0] and body["message"] == "no job j1"
    (info,) = body["details"]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert info["reason"] == "NOT_FOUND" and info["metadata"] == {"error_id": "0123456789abcdef"}
    assert set(HTTP_STATUS) == set(grpc.StatusCode)
