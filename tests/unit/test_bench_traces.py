"""The pure parts of `acm bench traces`: OpenAI-format parsing, the tool-call argument recall of the data
README (values counted only when seen earlier, ≥ 3 characters, case-insensitive) and the truncation
rendering, on a tiny hand-written trajectory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acm_benchmarks.traces import (
    BUDGETS,
    Call,
    Counter,
    Message,
    Tally,
    baseline_cells,
    call_values,
    end_values,
    found,
    full_context,
    leaf_values,
    load_trajectories,
    result_json,
    steps,
    truncation_context,
    wanted_values,
)


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


TRAJECTORY: dict[str, Any] = {
    "task_id": 0,
    "info": {
        "task": {
            "actions": [
                {"name": "refund_order", "kwargs": {"order_id": "#W7001", "reason": "damaged", "amount": 42}},
            ]
        }
    },
    "traj": [
        {"role": "system", "content": "You are a shop agent. Policy mentions order #W7001 and Damaged goods."},
        {"role": "user", "content": "Hi, I am Ms. Li Wei, my order #w7001 arrived DAMAGED."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("get_order", {"order_id": "#W7001", "verbose": True, "page": 1})],
        },
        {
            "role": "tool",
            "tool_call_id": "call_get_order",
            "name": "get_order",
            "content": '{"order_id": "#W7001", "items": [{"sku": "SKU-48213", "price": 42}], "status": "delivered"}',
        },
        {"role": "tool", "tool_call_id": "call_think", "name": "think", "content": ""},  # empty: skipped
        {
            "role": "assistant",
            "content": "I will refund it.",
            "tool_calls": [
                _call("refund_order", {"order_id": "#W7001", "reason": "damaged", "amount": 42}),
                _call("notify", {"to": ["li wei", "SKU-48213"], "note": "never said before", "id": "ab"}),
            ],
        },
    ],
}


def _trajectory(tmp_path: Path) -> Any:
    path = tmp_path / "t.json"
    path.write_text(json.dumps([TRAJECTORY]))
    (traj,) = load_trajectories(path)
    return traj


def test_parsing_leaves_out_system_and_empty_messages_and_renders_calls(tmp_path: Path) -> None:
    traj = _trajectory(tmp_path)
    assert [m.role for m in traj.messages] == ["user", "assistant", "tool", "assistant"]
    assert traj.skipped_empty == 1
    call, tool, refund = traj.messages[1:]
    assert call.text == 'get_order({"order_id": "#W7001", "verbose": true, "page": 1})'
    assert tool.tool_name == "get_order" and call.tool_name == ""
    # Content first, then one `name(arguments)` line per call.
    assert refund.text.splitlines()[0] == "I will refund it."
    assert refund.text.splitlines()[1].startswith("refund_order({") and len(refund.text.splitlines()) == 3
    assert refund.render().startswith("assistant: I will refund it.\nrefund_order(")
    assert tool.render().startswith('tool: {"order_id"')


def test_leaf_values_are_strings_and_numbers_only() -> None:
    assert leaf_values({"a": "x", "b": [1, 2.5, {"c": "y"}], "d": True, "e": None}) == ["x", "1", "2.5", "y"]
    assert call_values([Call("f", '{"k": "v1"}'), Call("g", "not json"), Call("h", "")]) == ["v1"]


def test_values_count_only_when_seen_earlier_long_enough_case_insensitive(tmp_path: Path) -> None:
    traj = _trajectory(tmp_path)
    first, second = steps(traj)
    # The first call's order id was said by the user (in lower case); 1 is too short, True no value.
    assert first.position == 1 and first.values == ("#W7001",)
    # The system message is not "earlier": "Damaged" counts only because the user wrote DAMAGED; "42" is too
    # short; "li wei" is in the user's message; "never said before" was never said; "ab" is too short.
    assert second.values == ("#W7001", "damaged", "li wei", "SKU-48213")
    assert wanted_values(["abc", "ABC", "zzz"], "xx abc") == ["abc"]  # once each, case-insensitive
    assert found(["#w7001", "SKU-48213"], "… order #W7001 …") == 1
    # End state: the gold kwargs that occur in the trajectory ("42" is too short).
    assert end_values(traj) == ["#W7001", "damaged"]


def test_truncation_keeps_the_newest_messages_that_fit() -> None:
    count = Counter()
    messages = [Message("user", f"message number {i} " + "word " * 20) for i in range(6)]
    sizes = [count(m.render()) + 1 for m in messages]
    budget = sizes[-1] + sizes[-2] + 1
    kept = truncation_context(messages, sizes, budget)
    assert kept == "\n".join(m.render() for m in messages[-2:])
    assert count(kept) <= budget
    assert truncation_context(messages, sizes, sizes[-1] - 1) == ""  # the newest alone does not fit
    assert full_context(messages).count("user: message number") == 6


def test_baselines_score_micro_averaged_over_values(tmp_path: Path) -> None:
    traj = _trajectory(tmp_path)
    count = Counter()
    sizes = [count(m.render()) + 1 for m in traj.messages]
    tally = Tally()
    for step in steps(traj):
        baseline_cells(tally, traj.messages[: step.position], sizes[: step.position], step.values, count)
    result = result_json(tally)
    assert set(result) == {"systems", "end_state"}
    full = result["systems"]["full"]
    for budget in BUDGETS:
        row = full[str(budget)]
        assert row["arg_recall_pct"] == 100.0 and row["steps"] == 2 and row["values"] == 5 and row["failures"] == 0
        trunc = result["systems"]["truncation"][str(budget)]
        assert trunc["failures"] == 0 and trunc["max_context_tokens"] <= budget
    assert result["systems"]["acm"]["500"]["steps"] == 0
