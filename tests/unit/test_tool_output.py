"""Tool output as data (issue 17): identifiers of any format, JSON records one memory each within ~300 tokens,
sentences that know honorifics, and a pinned state that holds what the agent acts on, bounded.

The tool outputs here are written the way real APIs answer (nested objects, lists of records, noise fields,
ids of several formats), not from ACM's rules."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from acm.adapters.tokenizer import TiktokenCounter
from acm.domain.compaction import pinned as P
from acm.domain.compaction.noise import clean
from acm.domain.identifiers import identifiers, mentions_identifier
from acm.domain.models import Role, Turn
from acm.domain.records import parse_fields, parts, tool_records
from acm.domain.schema import default_schema
from acm.domain.scope import Scope
from acm.domain.sentences import split
from acm_ingest.pipeline import plan_turn

COUNTER = TiktokenCounter()
T0 = datetime(2026, 11, 3, 9, 0, tzinfo=UTC)
SCOPE = Scope("acme", "globex", "u1", "agent", "s1")


def o200k(text: str) -> int:
    return COUNTER.count(text, "o200k_base")


def inventory(n: int, seed: int = 7, blob: int = 0) -> str:
    rng = random.Random(seed)
    rows = [
        {
            "sku": f"SKU-{rng.randint(10000, 99999)}",
            "name": rng.choice(["USB-C dock", "27in monitor", "laptop stand", "headset"]),
            "qty_on_hand": rng.randint(0, 400),
            "unit_price": {"amount": round(rng.uniform(5, 900), 2), "currency": "EUR"},
            "warehouse": rng.choice(["FRA-2", "AMS-1"]),
            "notes": "x" * blob,
        }
        for _ in range(n)
    ]
    return json.dumps({"request_id": "req_8f2c", "latency_ms": 41, "items": rows, "total": n})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("close INC-7 today", ["INC-7"]),
        ("order #W2378156 for FQ8APE", ["#W2378156", "FQ8APE"]),
        ("pay with credit_card_9513926, user mia_li_3668", ["credit_card_9513926", "mia_li_3668"]),
        ("trace 3f2a9c1e-1b2c-4d5e-8f90-123456789abc", ["3f2a9c1e-1b2c-4d5e-8f90-123456789abc"]),
        ("at 3pm on the 2nd, 10ms, v2, UTF-8, €120, 2026-11-03", []),
        ("rebook 2FBBAH, then 4BMN53.", ["2FBBAH", "4BMN53"]),
        ("100KB at 10AM, 1080P, 5GB, 24H, 12345, 4K", []),
    ],
)
def test_identifiers_of_any_format_and_not_words_numbers_or_units(text: str, expected: list[str]) -> None:
    assert identifiers(text) == expected


def test_an_identifier_is_named_whole_in_any_case() -> None:
    assert mentions_identifier("see inc-7.", "INC-7")
    assert not mentions_identifier("see INC-70 and INC-17", "INC-7")


def test_sentences_know_honorifics_and_abbreviations_in_english_and_chinese() -> None:
    assert split("Loop in Dr. Ana Souza, e.g. for the U.S. office. She owns PO-7.") == [
        "Loop in Dr. Ana Souza, e.g. for the U.S. office.",
        "She owns PO-7.",
    ]
    assert split("请联系王医生。他负责这个订单！好吗？") == ["请联系王医生。", "他负责这个订单！", "好吗？"]


def test_a_listing_is_one_record_per_item_with_noise_dropped() -> None:
    records = tool_records(inventory(14))
    assert len(records) == 14  # the items; the container's own count (total) is protocol, not a record
    items = [r for r in records if r.key.startswith("SKU-")]
    assert len(items) == 14
    assert "request_id" not in records[0].body() and "latency_ms" not in records[0].body()
    assert "unit_price={amount=" in items[0].body()


def test_a_look_up_answered_as_a_listing_of_one_is_that_record_with_its_id() -> None:
    # {"data": [{"po_id": …}]}: the object is the record, so a later value for its id supersedes the earlier.
    records = tool_records(inventory(1))
    assert [r.key for r in records if r.key.startswith("SKU-")] == [r.key for r in records if r.key]
    assert len([r for r in records if r.key]) == 1
    # An object without an id of its own in a list of one stays inside its record.
    (record,) = tool_records(json.dumps({"note": "x", "lines": [{"qty": 2, "price": 3}]}))
    assert "lines=" in record.body()


def test_an_id_keyed_map_and_nested_lists_stay_inside_their_record() -> None:
    out = json.dumps(
        {
            "user": {"first": "Ana", "last": "Souza"},
            "payment_methods": {"gift_card_771": {"balance": 40}, "credit_card_9513926": {"last_four": "4242"}},
            "orders": [{"order_id": "#W2378156", "total": 120}, {"order_id": "#W2378157", "total": 80}],
        }
    )
    (record,) = tool_records(out)
    assert "credit_card_9513926" in record.body() and "#W2378157" in record.body()


def test_every_part_of_a_huge_record_fits_300_tokens_and_names_its_key() -> None:
    record = tool_records(json.dumps({"ticket_id": "TCK-88", "log": " ".join(f"line{i}" for i in range(9000))}))[0]
    rendered = parts(record)
    assert len(rendered) >= 1 and all(o200k(p) <= 300 for p in rendered)
    assert all(p.startswith("TCK-88") for p in rendered)
    wide = tool_records(json.dumps({"po_id": "PO-1", **{f"field_{i}": f"value {i} " * 8 for i in range(80)}}))[0]
    assert len(parts(wide)) > 1 and all(o200k(p) <= 300 and p.startswith("PO-1 (part") for p in parts(wide))


def test_fields_read_back_for_a_merge() -> None:
    (record,) = tool_records(json.dumps({"po_id": "PO-9", "vendor": {"name": "Acme, Inc", "id": 4}, "amount": 10}))
    assert parse_fields(record.render()) == {"vendor": "{name=Acme, Inc, id=4}", "amount": "10", "po_id": "PO-9"}


def _turn(role: Role, content: str, tool: str = "", i: int = 0) -> Turn:
    return Turn(f"t{i}", SCOPE, role, content, T0 + timedelta(minutes=i), tool)


def test_a_64_kib_tool_output_becomes_records_each_within_300_tokens() -> None:
    raw = inventory(300, blob=120)
    assert len(raw.encode()) > 60_000
    plan = plan_turn(_turn(Role.TOOL, raw, "inventory.search"), default_schema("agent"), frozenset())
    assert len(plan.facts) == 300  # the rows; the envelope's count is protocol
    assert max(o200k(f.text) for f in plan.facts) <= 300
    assert o200k(plan.shown) <= 330 and "more records in memories" in plan.shown
    assert all(f.slot.startswith("record:sku-") for f in plan.facts if "SKU-" in f.text)


def test_a_long_prose_turn_keeps_every_sentence_as_a_memory_within_300_tokens() -> None:
    doc = " ".join(f"Clause {i} of the supply contract sets a penalty of {i * 10} EUR per day." for i in range(900))
    plan = plan_turn(_turn(Role.USER, doc), default_schema("agent"), frozenset())
    kept = "\n".join(f.text for f in plan.facts)
    assert "Clause 899 of" in kept and max(o200k(f.text) for f in plan.facts) <= 300


def test_a_keyless_record_takes_the_id_its_call_named() -> None:
    out = json.dumps({"name": {"first_name": "Mia", "last_name": "Li"}, "dob": "1990-04-05"})
    plan = plan_turn(_turn(Role.TOOL, out, "get_user_details"), default_schema("agent"), frozenset(), "mia_li_3668")
    assert plan.facts[0].slot == "record:mia_li_3668" and "mia_li_3668 {" in plan.facts[0].text


def _pinned(turns: list[tuple[str, str]]) -> P.PinnedState:
    state = P.PinnedState()
    for i, (role, text) in enumerate(turns):
        state = P.update(state, role, clean(text), f"t{i}", T0 + timedelta(minutes=i))
    return state


def test_records_a_tool_lists_are_not_pinned_but_what_the_agent_acts_on_is() -> None:
    state = _pinned(
        [
            ("user", "Find me a dock, and keep it under 300 EUR."),
            ("assistant", 'inventory.search({"query": "dock", "warehouse": "FRA-2"})'),
            ("tool", inventory(14)),
            ("assistant", 'orders.create({"sku": "SKU-55012", "qty": 2})'),
        ]
    )
    keys = set(state.entities)
    assert "SKU-55012" in keys and "inventory.search()" in keys
    assert not {k for k in keys if k.startswith("SKU-")} - {"SKU-55012"}
    assert state.entities["inventory.search()"].attributes == {"query": "dock", "warehouse": "FRA-2"}


def test_a_later_tool_result_updates_a_pinned_entity() -> None:
    state = _pinned(
        [
            ("assistant", 'erp.get_po({"po_id": "PO-20261103-0042"})'),
            ("tool", '{"po_id": "PO-20261103-0042", "amount": "18,400.00 EUR", "status": "pending_approval"}'),
            ("tool", '{"po_id": "PO-20261103-0042", "amount": "21,150.00 EUR"}'),
        ]
    )
    attrs = state.entities["PO-20261103-0042"].attributes
    assert attrs["amount"] == "21,150.00 EUR" and attrs["status"] == "pending_approval"


@pytest.mark.parametrize("honorific", ["Dr.", "Dr", "Ms.", "Prof."])
def test_an_honorific_is_part_of_the_name(honorific: str) -> None:
    state = _pinned([("user", f"The owner of INC-2291 is {honorific} Ana Souza. Please page her.")])
    assert state.entities["INC-2291"].attributes["owner"] == f"{honorific} Ana Souza"


def test_the_pinned_state_is_capped_by_rank_and_never_fails() -> None:
    note = "detail " * 6
    calls = [("assistant", f'tickets.get({{"ticket_id": "TCK-{1000 + i}", "note": "{note}"}})') for i in range(60)]
    state = _pinned([("user", "I need to close every ticket of the migration by Friday."), *calls])
    shown = state.within(o200k, 200, 40)
    assert shown.tokens <= 200 and shown.dropped == len(state.entities) - len(shown.entities) > 0
    keys = [e.key for e in shown.entities]
    assert keys[0] == P.GOALS and "TCK-1059" in keys and "TCK-1000" not in keys  # the newest acted on first
    assert state.within(o200k, 5, 40).entities == ()


def test_what_a_tool_writes_around_its_json_is_kept() -> None:
    out = (
        "HTTP/1.1 200 OK\nX-Request-Id: 4de456c837\n"
        '{"purchase_order_id": "PO-20261118-0001", "status": "approved", "trace_id": "e62e1"}\n'
        "PO-20260320-0002 status is now approved.\n2026-05-27T08:47:39Z DEBUG [worker-3] flush took=10ms"
    )
    plan = plan_turn(_turn(Role.TOOL, out, "erp.update_po"), default_schema("agent"), frozenset())
    texts = [f.text for f in plan.facts]
    assert any("PO-20260320-0002 status is now approved" in t for t in texts)
    assert "PO-20260320-0002 status is now approved" in plan.shown and "DEBUG" not in plan.shown
    assert "HTTP/1.1" not in plan.shown and "PO-20261118-0001 {" in plan.shown


def test_a_long_session_summary_is_bounded_older_lines_archived() -> None:
    from acm.domain.compaction.engine import Rules, SessionTurn, WorkingMemory, compact, working_tokens

    rules = Rules(budget_tokens=800, target_ratio=0.3)
    memory, tail = WorkingMemory(), []
    peak = 0
    for i in range(160):
        text = f"user: Ship PO-2026-{i:04d} for {100 + i},000.00 EUR to Dr. Ana Souza by 2026-12-{1 + i % 28:02d}."
        tail.append(SessionTurn(f"t{i}", "user", text, o200k(text), T0 + timedelta(minutes=i), "", "user"))
        if working_tokens(memory, tail, COUNTER, rules) >= rules.soft_limit:
            result = compact(memory, tail, rules, COUNTER)
            if result.memory is not None:
                memory, tail = result.memory, []
        peak = max(peak, working_tokens(memory, tail, COUNTER, rules))
    assert peak <= rules.budget_tokens


def test_a_cut_pin_keeps_first_what_the_latest_turns_speak_of() -> None:
    from acm.domain.compaction.pinned import hint_words

    profile = {
        "user_id": "mia_li_3668",
        "address": {"street": "975 Sunset Drive", "city": "Austin", "zip": "78750", "country": "USA"},
        "gift_cards": {f"gift_card_{i}": {"balance": i * 10} for i in range(12)},
        "cards": {"credit_card_4421486": {"brand": "visa", "last_four": "7447"}},
    }
    (record,) = tool_records(json.dumps(profile))  # as ingest keeps a tool's output: its records
    state = _pinned([("assistant", 'accounts.get({"user_id": "mia_li_3668"})'), ("tool", record.render())])

    def shown_for(latest: list[str]) -> dict[str, str]:
        shown = state.within(o200k, 66, 40, hints=hint_words(latest))  # the call's pin takes a line of it too
        return next(e for e in shown.entities if e.key == "mia_li_3668").attributes

    asked = shown_for(["Ship it to my Austin address, please."])
    assert "address" in asked and "…" in asked  # cut, and what the request speaks of is kept
    assert "address" not in shown_for([])  # else the fields naming ids come first


def test_one_large_pin_does_not_hide_the_next_and_takes_back_the_room_left() -> None:
    rng = random.Random(17)
    order = {
        "order_id": f"{rng.randint(1, 9)}QX{rng.randint(100, 999)}",  # a digit-first code
        "customer_id": "cus_4821",
        "lines": [{"sku": f"SKU-{rng.randint(10000, 99999)}", "qty": rng.randint(1, 9)} for _ in range(14)],
        "shipping": {"street": "12 Quay Road", "city": "Leith", "zip": "EH6 6LX"},
    }
    account = {"customer_id": "cus_4821", "orders": [order["order_id"], "7KD220", "ORD-77"], "tier": "gold"}
    (rec_order,) = tool_records(json.dumps(order))
    (rec_account,) = tool_records(json.dumps(account))
    state = _pinned(
        [
            ("assistant", 'crm.account({"customer_id": "cus_4821"})'),
            ("tool", rec_account.render()),
            ("assistant", f'shop.order({{"order_id": "{order["order_id"]}"}})'),
            ("tool", rec_order.render()),
        ]
    )
    whole_order = o200k(f"- {state.entities[str(order['order_id'])].render()}\n")
    cap = whole_order + 10  # the order alone fits, the account would not after it
    shown = state.within(o200k, cap, 40)
    keys = [e.key for e in shown.entities]
    assert "cus_4821" in keys and order["order_id"] in keys
    account_pin = next(e for e in shown.entities if e.key == "cus_4821")
    assert "7KD220" in account_pin.render()  # the ids the agent acts on next
    assert shown.tokens <= cap
    # Alone, a pin is cut only to the cap, not to a share of it.
    alone = P.PinnedState({order["order_id"]: state.entities[order["order_id"]]}).within(o200k, cap - 20, 40)
    assert o200k(alone.text) > (cap - 20) * 0.8


# Hydration: a pin takes the current values of its record's memory (the merged result of every tool output for
# the id), unless the pin's value was stated later. Records generated in several id formats and field sets.
def _record_memory(key: str, fields: dict[str, object], minute: int, tool: str = "records.get") -> P.RecordValues:
    (record,) = tool_records(json.dumps({"id": key, **fields}))  # as ingest renders a tool's record
    found = P.record_values(f"tool[{tool}]: {record.render()}", T0 + timedelta(minutes=minute))
    assert found is not None and found.key == key
    return found


def _generated(seed: int) -> tuple[str, str, str, str]:
    """An id of some format, a field, its first value and the newer one."""
    rng = random.Random(seed)
    key = rng.choice(
        [f"PO-{rng.randint(1000, 9999)}", f"#W{rng.randint(1000000, 9999999)}", f"cus_{rng.randint(10**5, 10**6)}"]
    )
    name, old, new = rng.choice(
        [
            ("amount", f"{rng.randint(100, 900)}.00 EUR", f"{rng.randint(1000, 9000)}.00 EUR"),
            ("status", "pending", rng.choice(["approved", "shipped", "cancelled"])),
            ("seat", f"{rng.randint(1, 30)}A", f"{rng.randint(31, 60)}C"),
        ]
    )
    return key, name, old, new


@pytest.mark.parametrize("seed", range(6))
def test_a_newer_record_memory_replaces_the_pins_older_value(seed: int) -> None:
    key, name, old, new = _generated(seed)
    state = _pinned(
        [
            ("assistant", f'records.get({{"id": "{key}"}})'),
            ("tool", json.dumps({"id": key, name: old, "owner": "Dr. Ana Souza"})),
        ]
    )
    assert state.entities[key].attributes[name] == old
    # The newer output's record sat past the turn's clip: only its memory holds the new value.
    hydrated = state.hydrated([_record_memory(key, {name: new, "warehouse": "BER-1"}, 10)])
    attrs = hydrated.entities[key].attributes
    assert attrs[name] == new and attrs["owner"] == "Dr. Ana Souza"
    assert "warehouse" not in attrs  # the pin shows its own attributes, the record's others stay memories
    assert state.hydrated([_record_memory(key, {name: old}, 10)]) is state  # nothing newer: unchanged


@pytest.mark.parametrize(
    "statement",
    [
        "Please change the amount of {key} to {value}.",
        "{key}: amount={value}",
        "The amount for {key} is now {value}, as agreed with finance.",
    ],
)
def test_an_older_record_does_not_override_a_newer_statement(statement: str) -> None:
    key = "PO-4417"
    state = _pinned(
        [
            ("tool", json.dumps({"po_id": key, "amount": "1,200.00 EUR", "status": "open"})),
            ("user", statement.format(key=key, value="1,450.00 EUR")),  # minute 1
        ]
    )
    assert state.entities[key].attributes["amount"] == "1,450.00 EUR"
    older = _record_memory(key, {"amount": "1,200.00 EUR", "status": "approved"}, 0)
    attrs = state.hydrated([older]).entities[key].attributes
    assert attrs["amount"] == "1,450.00 EUR"  # the user said it later
    assert attrs["status"] == "approved"  # the record is as new as the pin's status, and merged
    newer = _record_memory(key, {"amount": "1,380.00 EUR"}, 5)
    assert state.hydrated([newer]).entities[key].attributes["amount"] == "1,380.00 EUR"


def test_record_values_reads_parts_and_not_prose() -> None:
    at = T0
    part = P.record_values("tool[erp.get]: PO-9 (part 2/3) {lines=[{sku=A-1, qty=2}], amount=12.00 EUR}", at)
    assert part is not None and part.key == "PO-9" and part.fields["amount"] == "12.00 EUR"
    assert P.record_values("user: PO-9 is approved {maybe}", at) is None
    assert P.record_values("assistant: the order is fine", at) is None


@pytest.mark.parametrize("seed", range(3))
def test_a_cut_pin_shows_the_ids_of_a_value_too_long_to_show_whole(seed: int) -> None:
    rng = random.Random(seed)
    methods = {
        f"{kind}_{rng.randint(10**6, 10**7)}": {"brand": rng.choice(["visa", "amex"]), "note": "x " * 40}
        for kind in ("credit_card", "gift_card", "certificate")
    }
    (record,) = tool_records(json.dumps({"account_id": "acct_5521", "payment_methods": methods, "tier": "gold"}))
    state = _pinned([("assistant", 'accounts.get({"account_id": "acct_5521"})'), ("tool", record.render())])
    shown = state.within(o200k, 70, 40)
    pin = next(e for e in shown.entities if e.key == "acct_5521")
    assert "…" in pin.attributes and shown.tokens <= 70
    assert all(i in pin.attributes["payment_methods"] for i in methods)  # its ids, not its whole value
    assert "brand" not in pin.attributes["payment_methods"]
