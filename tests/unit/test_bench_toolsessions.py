"""The tool-heavy session generator of `acm bench tokens / retention --tool-heavy`: seeded, exact length, JSON
tool outputs of 5-20 records with protocol noise, a few 20-60 KiB outputs, ids of several formats, people
with honorifics, tracked values that change; and the line-by-line retention scoring it is read with."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from acm_benchmarks import toolsessions
from acm_benchmarks.retention import score
from acm_benchmarks.workflows import PlantedFact, Session


@pytest.mark.parametrize("kind", toolsessions.KINDS)
def test_sessions_are_seeded_tool_heavy_and_exact_length(kind: str) -> None:
    session = toolsessions.generate(kind, 220, 5)
    assert session == toolsessions.generate(kind, 220, 5)
    assert len(session.turns) == 220 and session.turns[0].role == "user"
    tools = [t for t in session.turns if t.role == "tool"]
    assert len(tools) > 70 and all(t.tool_name for t in tools)
    sizes = [len(t.text.encode()) for t in tools]
    big = [s for s in sizes if s >= toolsessions.BIG_MIN_BYTES]
    assert 1 <= len(big) <= 3 and max(sizes) <= toolsessions.BIG_MAX_BYTES
    listed = [json.loads(t.text) for t in tools if t.text.startswith("{") and len(t.text) < toolsessions.BIG_MIN_BYTES]
    counts = [len(body["data"]) for body in listed]
    assert max(counts) <= 20 and any(5 <= c for c in counts)
    assert all({"http_status", "request_id", "trace_id", "latency_ms"} <= set(body) for body in listed)
    text = "\n".join(t.text for t in session.turns)
    assert re.search(r"\b(Dr|Ms|Mr|Mrs|Prof)\. [A-Z]", text)
    # Several id formats in every domain's session.
    formats = [
        r"SKU-\d{5}",
        r"#W\d{7}",
        r"\b[A-Z2-9]{6}\b",
        r"(credit_card|gift_card|paypal)_\d{7}",
        r"INC-\d+",
        r"PO-\d{4}-\d{4}",
    ]
    formats.append(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-")
    assert sum(bool(re.search(f, text)) for f in formats) >= 3, kind


def test_tracked_values_change_and_only_the_last_is_current() -> None:
    session = toolsessions.generate("procurement", 300, 9)
    history: dict[tuple[str, str], list[PlantedFact]] = {}
    for fact in session.facts:
        history.setdefault((fact.entity, fact.attribute), []).append(fact)
    changed = [facts for facts in history.values() if len({f.value for f in facts}) > 1]
    assert len(changed) >= 5
    for facts in history.values():
        assert [f.current for f in facts] == [False] * (len(facts) - 1) + [True]
        last = facts[-1]
        assert last.entity in session.turns[last.turn].text
    assert any(f.attribute == "on_hand" for f in session.facts)  # stock levels in the big inventory export


def test_line_scoring_matches_whole_ids_and_reads_each_record_line() -> None:
    session = Session("support", 0)
    session.facts = [
        PlantedFact("INC-7", "status", "open", 0, False),
        PlantedFact("INC-7", "status", "resolved", 3, True),
    ]
    output = '{"ticket_id": "INC-70", "status": "resolved"},\n{"ticket_id": "INC-7", "status": "open"}'
    # Whole segment: INC-7 is "named" by INC-70's line too, so the stale value hides.
    assert score(session, [output])["retained"] == 1
    by_line = score(session, [output], by_line=True)
    assert by_line["retained"] == 0 and by_line["stale_presented"] == 1
    fresh = score(session, [output, '{"ticket_id": "INC-7", "status": "resolved"}'], by_line=True)
    assert fresh["retained"] == 1 and fresh["stale_presented"] == 0


def test_tokens_and_retention_run_on_tool_heavy_sessions(tmp_path: Path) -> None:
    from acm_benchmarks import retention, tokens

    out = tmp_path / "tokens-tool-heavy.json"
    result = tokens.run_benchmark(out, None, (20, 40), 3, tool_heavy=True)
    assert json.loads(out.read_text()) == result and result["run"]["generator"] == "toolsessions"
    assert set(result["systems"]) == {"append_all", "truncation", "acm"}
    window = result["systems"]["acm"]["window"]
    assert set(window) == {"20", "40"} and window["20"]["kind"] == "procurement"
    for row in window.values():
        assert {"max_working_tokens", "working_within_budget", "max_prompt_tokens"} <= set(row)
        assert row["max_prompt_tokens"] <= tokens.WINDOW  # the assembled prompt always fits

    result = retention.run_benchmark(tmp_path / "retention.json", 4, 2026, quick=True, tool_heavy=True)
    assert [row["kind"] for row in result["sessions"]] == list(toolsessions.KINDS)
    systems = result["systems"]
    assert set(systems) == {"acm", "acm_lossy_drafts", "summary_unverified", "truncation"}
    for name, row in systems.items():
        assert row["current_facts"] == systems["acm"]["current_facts"] > 0, name
        assert 0 <= row["retention_pct"] <= 100 and row["max_prompt_tokens"] <= retention.BUDGET, name
    assert 0 <= systems["acm"]["sessions_working_within_budget"] <= 4
    assert result["run"]["scored"] == "by line, whole ids"


def test_acm_fetch_is_scored_on_the_fetched_context_only(tmp_path: Path) -> None:
    """acm_fetch counts a fact only when the context a Fetch returned states it (its pinned lines as the context
    shows them, "- KEY (type): ..."), side by side with the simulated systems."""
    from acm_benchmarks import retention

    ((_kind, _n, session),) = retention.generate_sessions(1, 2026, quick=True, tool_heavy=True)
    current = [f for f in session.facts if f.current]
    half = current[: len(current) // 2]
    lines = [f"- {f.entity} (record): {f.attribute}={f.value}" for f in half]
    fetched = [retention.FetchedContext("Pinned state (current values):\n" + "\n".join(lines), 100, "", 0)]
    result = retention.run_benchmark(None, 1, 2026, quick=True, tool_heavy=True, fetched=fetched)
    row = result["systems"]["acm_fetch"]
    assert set(result["systems"]) == {*retention.SYSTEMS, "acm_fetch"}
    assert row["current_facts"] == len(current) and row["retained"] >= len(half)
    assert row["retained"] < len(current) and row["stale_presented"] == 0
    empty = [retention.FetchedContext("", 0, "", 0)]
    nothing = retention.run_benchmark(None, 1, 2026, quick=True, tool_heavy=True, fetched=empty)
    assert nothing["systems"]["acm_fetch"]["retained"] == 0
