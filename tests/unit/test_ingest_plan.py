"""Ingest's pure plan of a turn: who said it. A tool turn names its tool, so compaction writes tool → result."""

from __future__ import annotations

from datetime import UTC, datetime

from acm.domain.models import Role, Turn
from acm.domain.schema import default_schema
from acm.domain.scope import Scope
from acm_ingest.pipeline import plan_turn

SCOPE = Scope("c1", "acme", "alice", "clerk", "s1")
AT = datetime(2026, 11, 30, tzinfo=UTC)
RESULT = '{"po_id": "PO-20261028-0098", "status": "approved"}'


def _speaker(role: Role, tool_name: str = "", metadata: dict[str, str] | None = None) -> str:
    turn = Turn("t1", SCOPE, role, RESULT, AT, tool_name=tool_name, metadata=metadata or {})
    return plan_turn(turn, default_schema("clerk"), frozenset()).speaker


def test_a_tool_turn_is_said_by_its_tool() -> None:
    assert _speaker(Role.TOOL, "erp.get_po") == "tool[erp.get_po]"
    assert _speaker(Role.TOOL) == "tool"
    assert _speaker(Role.USER, "erp.get_po") == "user"  # only a tool turn is said by a tool
    assert _speaker(Role.TOOL, "erp.get_po", {"speaker": "erp"}) == "erp"  # the agent's own label wins
