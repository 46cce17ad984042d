"""The entity graph has one owner, retrieve (acm.ownership.GRAPH_OWNER): Neo4j Community has no per-label rights,
so the rule holds by design. Only the owner's Settings has a graph URL, only its wiring opens a graph, and ingest
resolves entities in its own registry (its register() takes no GraphStore)."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

from acm.ownership import GRAPH_OWNER, SERVICES
from acm.ports.stores import GraphStore

SERVICES_DIR = Path(__file__).resolve().parents[2] / "services"
SETTINGS = {
    "gateway": "GatewaySettings",
    "ingest": "IngestSettings",
    "retrieve": "RetrieveSettings",
    "architect": "ArchitectSettings",
    "compact": "CompactSettings",
    "anticipate": "AnticipateSettings",
}


def test_only_the_owner_has_a_graph_url() -> None:
    assert set(SETTINGS) == set(SERVICES)
    with_url = {
        service
        for service, name in SETTINGS.items()
        if "graph_url" in getattr(importlib.import_module(f"acm_{service}.settings"), name).model_fields
    }
    assert with_url == {GRAPH_OWNER}


def test_no_other_service_opens_or_takes_a_graph() -> None:
    touching = {
        service
        for service in SERVICES
        for path in (SERVICES_DIR / f"acm_{service}").rglob("*.py")
        if re.search(r"\bopen_graph\b|\bGraphStore\b|\bneo4j\b|\bsqlite_graph\b", path.read_text())
    }
    assert touching == {GRAPH_OWNER}


def test_ingest_registers_without_a_graph() -> None:
    from acm_ingest.app import register

    assert not [
        p for p in inspect.signature(register).parameters.values() if p.annotation in (GraphStore, "GraphStore")
    ]
    assert "rel" in inspect.signature(register).parameters  # entities: rel.entities, ingest's registry
