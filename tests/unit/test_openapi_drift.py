"""docs/openapi.json must be what `make proto` generates from the gateway's google.api.http rules."""

from pathlib import Path

from acm.openapi import render

ROOT = Path(__file__).resolve().parents[2]


def test_openapi_document_matches_the_protos() -> None:
    committed = (ROOT / "docs" / "openapi.json").read_text()
    assert render(ROOT / "protos") == committed, "docs/openapi.json is out of date: run `make proto`"
