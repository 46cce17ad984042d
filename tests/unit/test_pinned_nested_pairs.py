"""A nested object's pairs in a tool output are never pinned as the record's own attributes (issue 17: a listing
read as clauses pinned the requester's name as `name=…` beside `requester={…}`; no later result updated that second
key shape, so the pin kept showing an old name as current)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from acm.domain.compaction.noise import clean
from acm.domain.compaction.pinned import PinnedState, own_pairs, update

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _listing(requester: str, assignee: str) -> str:
    rows = [
        {"ticket_id": f"INC-{n}", "requester": {"name": requester, "customer_id": f"c-{n}"}, "assignee": assignee}
        for n in (3, 4)
    ]
    return json.dumps({"http_status": 200, "data": rows})


def test_a_nested_object_is_its_keys_value_never_the_records_own_pairs() -> None:
    assert own_pairs("{ticket_id=INC-3, requester={name=Mr. Kenji Mori, customer_id=c-3}, status=new}") == [
        ("ticket_id", "INC-3"),
        ("requester", "{name=Mr. Kenji Mori, customer_id=c-3}"),
        ("status", "new"),
    ]
    # A clause cut inside a list (records join list items with "; "): the pairs after the list are the record's.
    tail = " {sku=SKU-2, qty=2}], payment={terms=NET30}, status=approved, amount=9,705.99 USD"
    assert own_pairs(tail) == [("payment", "{terms=NET30}"), ("status", "approved"), ("amount", "9,705.99 USD")]
    assert own_pairs("PO-7 is approved, amount=1,200.00 EUR") == [("amount", "1,200.00 EUR")]


def test_a_later_listing_leaves_no_older_nested_value_in_the_pin() -> None:
    state = PinnedState()
    for i, (requester, assignee) in enumerate((("Mr. Kenji Mori", "Ms. Li Wei"), ("Dr. Ana Souza", "Ms. Li Wei"))):
        state = update(
            state,
            "tool",
            clean(_listing(requester, assignee)),
            f"t{i}",
            AT + timedelta(minutes=i),
            acted=frozenset({"INC-3"}),
        )
    pin = state.entities["INC-3"]
    assert "name" not in pin.attributes
    assert "Dr. Ana Souza" in pin.attributes["requester"]
    assert "Kenji" not in state.render()
