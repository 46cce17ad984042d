"""deploy/grafana/acm-dashboard.json parses as a Grafana dashboard and queries only metrics the code exports.

The exported names are not listed here: every OpenTelemetry instrument created in libs/ and services/ (found in
the source) is made again on a private MeterProvider with the Prometheus exporter, so the names are the ones
Prometheus scrapes (units and _total / _bucket suffixes added by the exporter)."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.sdk.metrics import MeterProvider
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy/grafana/acm-dashboard.json"
CREATE = re.compile(r"create_(counter|up_down_counter|histogram|gauge|observable_gauge|observable_counter)$")
METRIC = re.compile(r"\bacm_[a-z0-9_]+")
# What the issue asks the dashboard to show, as exported families (each must be queried by some panel).
REQUIRED = {
    "acm_consumer_lag",
    "acm_bus_handler_duration_milliseconds_bucket",
    "acm_fetch_duration_milliseconds_bucket",
    "acm_bus_dead_letters_total",
    "acm_jobs_transitions_total",
    "acm_compactions_total",
}


def _instruments() -> list[tuple[str, str, str]]:
    """(kind, name, unit) of every instrument the source creates with a literal name."""
    found = []
    for path in [*ROOT.glob("libs/acm/**/*.py"), *ROOT.glob("services/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            kind = CREATE.match(node.func.attr)
            if kind is None or not node.args or not isinstance(node.args[0], ast.Constant):
                continue
            unit = next(
                (k.value.value for k in node.keywords if k.arg == "unit" and isinstance(k.value, ast.Constant)), ""
            )
            found.append((kind.group(1), str(node.args[0].value), str(unit)))
    return found


def _one(options: CallbackOptions) -> Iterable[Observation]:
    yield Observation(1)


def _exported_names() -> set[str]:
    """The sample names Prometheus reads for each instrument, from the exporter itself."""
    registry = CollectorRegistry()
    reader = PrometheusMetricReader(registry=registry)
    meter = MeterProvider(metric_readers=[reader]).get_meter("dashboard-test")
    for kind, name, unit in _instruments():
        if kind.startswith("observable"):
            getattr(meter, f"create_{kind}")(name, callbacks=[_one], unit=unit)
        elif kind in ("counter", "up_down_counter"):
            getattr(meter, f"create_{kind}")(name, unit=unit).add(1)
        elif kind == "histogram":
            meter.create_histogram(name, unit=unit).record(1)
        else:
            meter.create_gauge(name, unit=unit).set(1)
    text = generate_latest(registry).decode()
    return {s.name for family in text_string_to_metric_families(text) for s in family.samples}


def _panels(dashboard: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for panel in dashboard["panels"]:
        yield panel
        yield from panel.get("panels", [])  # a collapsed row keeps its panels inside


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    data = json.loads(DASHBOARD.read_text())
    assert isinstance(data, dict)
    return data


def test_the_dashboard_is_a_grafana_dashboard(dashboard: dict[str, Any]) -> None:
    assert dashboard["title"] and dashboard["uid"] and isinstance(dashboard["schemaVersion"], int)
    assert [v["name"] for v in dashboard["templating"]["list"]] == ["datasource"]
    ids = [p["id"] for p in _panels(dashboard)]
    assert len(ids) == len(set(ids)), "panel ids repeat"
    for panel in _panels(dashboard):
        if panel["type"] == "row":
            continue
        assert panel["title"] and {"x", "y", "w", "h"} <= set(panel["gridPos"]), panel["title"]
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"] and all(t["expr"] for t in panel["targets"]), panel["title"]


def test_every_queried_metric_is_exported_by_the_code(dashboard: dict[str, Any]) -> None:
    exported = _exported_names()
    assert "acm_consumer_lag" in exported  # the source scan found the instruments at all
    queried: set[str] = set()
    for panel in _panels(dashboard):
        for target in panel.get("targets", []):
            names = set(METRIC.findall(target["expr"]))
            assert names, f"{panel['title']}: {target['expr']} queries no ACM metric"
            unknown = names - exported
            assert not unknown, f"{panel['title']}: {sorted(unknown)} is exported by no instrument in the code"
            queried |= names
    assert not REQUIRED - queried, f"no panel shows {sorted(REQUIRED - queried)}"
