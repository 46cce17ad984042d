"""acm.domain.record_changes: which statements a record's new version outdates."""

from __future__ import annotations

from acm.domain.record_changes import outdated, record_change, record_key

OLD = "tool[erp.get_po]: PO-7 {po_id=PO-7, status=draft, amount=1,200.00 EUR, approver=Dr. Ana Souza, qty=1}"
NEW = "tool[erp.get_po]: PO-7 {po_id=PO-7, status=approved, amount=1,200.00 EUR, approver=Mr. Kenji Mori, qty=3}"


def test_a_change_holds_the_fields_a_sentence_can_state() -> None:
    change = record_change("record:po-7", OLD, NEW)
    assert change is not None and change.key == "po-7"
    # qty 1 → 3: one character says nothing on its own; the amount did not change
    assert dict(change.changed) == {"draft": "approved", "Dr. Ana Souza": "Mr. Kenji Mori"}
    assert record_key("record:po-7#2") == "po-7" and record_key("po-7|status") == ""
    assert record_change("po-7|status", OLD, NEW) is None
    assert record_change("record:po-7", OLD, OLD) is None


def test_a_value_the_new_version_still_holds_is_not_lost() -> None:
    moved = NEW.replace("qty=3", "requested_by=Dr. Ana Souza")  # the old approver is still named, as requester
    change = record_change("record:po-7", OLD, moved)
    assert change is not None and dict(change.changed) == {"draft": "approved"}
    assert not outdated(change, "assistant: Dr. Ana Souza is on PO-7.")


def test_statements_naming_the_key_with_an_old_value_are_outdated() -> None:
    change = record_change("record:po-7", OLD, NEW)
    assert change is not None
    assert outdated(change, "assistant: PO-7 is draft now.")
    assert outdated(change, 'assistant: erp.update_po({"po_id": "PO-7", "status": "draft"})')
    assert outdated(change, "user: po-7 has Dr. Ana Souza as approver.")  # ids and values case-insensitive
    assert not outdated(change, "user: Is PO-7 still draft?")  # a question states nothing
    assert not outdated(change, "assistant: PO-70 is draft now.")  # another id
    assert not outdated(change, "assistant: PO-8 is draft now.")
    assert not outdated(change, "assistant: PO-7 went from draft to approved.")  # the new value is said too
    assert not outdated(change, "assistant: PO-7 is a draftsman's order.")  # whole values only
