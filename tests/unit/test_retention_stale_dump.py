"""`acm bench retention --tool-heavy --dump`: each stale pair is named with the part and line that showed it."""

from __future__ import annotations

from acm_benchmarks.retention import explain_stale
from acm_benchmarks.workflows import PlantedFact, Session


def test_a_stale_pair_is_explained_by_its_latest_line_and_part() -> None:
    session = Session("procurement", 1)
    session.facts = [
        PlantedFact("PO-7", "status", "draft", 2, False),
        PlantedFact("PO-7", "status", "draft", 3, False),
        PlantedFact("PO-7", "status", "approved", 9, True),
        PlantedFact("PO-8", "status", "draft", 4, True),
    ]
    context = (
        "Pinned state (current values):\n- PO-9 (purchase_order): status=open\n\n"
        "Relevant memories:\n[2 March 2026]\n- tool[erp.get]: PO-7 {status=approved}\n\n"
        "Summary of earlier turns:\n- assistant: PO-7 is draft now.\n\n"
        "Recent turns:\nuser: thanks"
    )
    (only,) = explain_stale(session, context)
    assert only.startswith("PO-7.status: shown 'draft', current 'approved'; said [(2, 'draft'), (9, 'approved')]")
    assert only.endswith("summary: assistant: PO-7 is draft now.")
    assert explain_stale(session, context.replace("is draft now", "is approved now")) == []
