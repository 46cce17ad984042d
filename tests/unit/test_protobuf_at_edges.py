"""Protobuf stays at the edges (issue 19): ports, use cases, the session context, the prefetch pool and its
retriever speak domain types; the servicers, clients and bus adapters convert, and the conversion loses
nothing. And each service keeps to its own package: another's is reached through the bus or its gRPC API
(only the CLI's embedded runner, the composition root, wires them all)."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

import pytest

from acm.convert import query_from_pb, query_to_pb, retrieval_from_pb, retrieval_to_pb
from acm.domain.errors import InvalidRequest
from acm.domain.models import Layer
from acm.domain.retrieved import Ranked, Retrieval, RetrievalQuery, RetrievedMemory
from acm.domain.scope import ALL_TIERS, Scope, Tier
from acm.v1 import retrieve_pb2

ROOT = Path(__file__).resolve().parents[2]
INNER = [
    *sorted((ROOT / "libs/acm/ports").glob("*.py")),
    *sorted((ROOT / "libs/acm/domain").rglob("*.py")),
    *sorted(ROOT.glob("services/*/usecases.py")),
    *sorted((ROOT / "libs/acm/read").glob("*.py")),  # the read path: pool, its serving, the session context
    ROOT / "services/acm_gateway/agents.py",
    ROOT / "services/acm_gateway/memories.py",  # the Memory API's use cases (gateway, retrieve, ingest)
    ROOT / "services/acm_retrieve/memories.py",
    ROOT / "services/acm_ingest/memory_edits.py",
    ROOT / "libs/acm/prefetch_state.py",
    ROOT / "services/acm_ingest/consolidate.py",
]
SERVICES = sorted(p for p in (ROOT / "services").glob("acm_*") if p.is_dir() and p.name != "acm_cli")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_use_cases_are_all_checked() -> None:
    checked = {p.relative_to(ROOT).as_posix() for p in INNER}
    assert {"services/acm_ingest/usecases.py", "services/acm_compact/usecases.py"} <= checked
    assert {p.name for p in SERVICES} >= {"acm_gateway", "acm_ingest", "acm_compact", "acm_retrieve"}


@pytest.mark.parametrize("path", INNER, ids=lambda p: str(p.relative_to(ROOT)))
def test_inner_code_imports_no_protobuf(path: Path) -> None:
    wire = sorted(m for m in _imports(path) if m == "acm.v1" or m.startswith(("acm.v1.", "google.protobuf")))
    assert not wire, f"{path.relative_to(ROOT)} imports {wire}: convert in the servicer, client or handler"


@pytest.mark.parametrize("service", SERVICES, ids=lambda p: p.name)
def test_a_service_imports_no_other_services_package(service: Path) -> None:
    others = {p.name for p in (ROOT / "services").glob("acm_*") if p.is_dir()} - {service.name}
    found = sorted(
        f"{path.relative_to(ROOT)}: {module}"
        for path in sorted(service.rglob("*.py"))
        for module in _imports(path)
        if module.split(".")[0] in others
    )
    assert not found, f"{service.name} imports another service's package (use its gRPC API or events): {found}"


SCOPE = Scope("c1", "acme", "alice", "bot", "s1")
SAID = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)


def test_a_query_crosses_the_wire_unchanged() -> None:
    query = RetrievalQuery(SCOPE, "Where does Jane live?", 300, "o200k_base", (Tier.CUSTOMER,), SAID, True)
    assert query_from_pb(query_to_pb(query)) == query
    plain = RetrievalQuery(SCOPE, "Where?", 300)  # defaults: every tier, now, the default encoding
    assert query_from_pb(query_to_pb(plain)) == plain and plain.tiers == ALL_TIERS


def test_a_retrieval_crosses_the_wire_unchanged() -> None:
    memories = [
        RetrievedMemory("m1", Tier.USER, Layer.MID, "fact", "Jane lives in Porto", ("t1", "t2"), 6, SAID),
        RetrievedMemory(
            "m2",
            Tier.CLIENT,
            Layer.LONG,
            "policy",
            "refunds in 30 days",
            (),
            5,
            SAID,
            SAID,
            "s9",
            "tool",
            "kb",
            "untrusted",
        ),
    ]
    retrieval = Retrieval([Ranked(memories[0], 0.75), Ranked(memories[1], 0.5)], 11, 3, from_prefetch=True)
    back = retrieval_from_pb(retrieval_to_pb(retrieval))
    assert (list(back.items), back.total_tokens, back.dropped, back.from_prefetch) == (
        list(retrieval.items),
        11,
        3,
        True,
    )


def test_unknown_tiers_are_the_callers_mistake() -> None:
    request = retrieve_pb2.RetrieveRequest(query="x", budget_tokens=10)
    request.tiers.append(99)  # type: ignore[arg-type]
    request.scope.client_id, request.scope.customer_id, request.scope.user_id = "c1", "acme", "alice"
    with pytest.raises(InvalidRequest, match="unknown tier"):
        query_from_pb(request)
