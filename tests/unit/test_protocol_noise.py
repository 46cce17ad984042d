"""Protocol and telemetry out of a tool output's records (issue 17): an envelope's debug, pagination and counters
and a time measured in a clock unit are never a record, a memory or a pinned value; a record's own numbers,
even one named like a counter, stay.

The envelopes are this file's own templates (not the benchmark generator's): nested debug and paging objects
under several names, counters at the envelope's top level, timings inside records."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest

from acm.domain.compaction import pinned as P
from acm.domain.compaction.noise import clean
from acm.domain.models import Role, Turn
from acm.domain.records import tool_records
from acm.domain.schema import default_schema
from acm.domain.scope import Scope
from acm_ingest.pipeline import plan_turn

SCOPE = Scope("acme", "globex", "u1", "agent", "s1")
T0 = datetime(2026, 11, 3, 9, 0, tzinfo=UTC)


def rows(rng: random.Random, n: int) -> list[dict[str, object]]:
    return [
        {
            "asset_id": f"AT-{rng.randint(1000, 9999)}",
            "holder": rng.choice(["Dr. Ana Souza", "Mr. Kenji Mori", "Ms. Li Wei"]),
            "count": rng.randint(1, 9),  # the record's own count: business, kept
            "total": f"{rng.randint(10, 900)}.00 EUR",
            "state": rng.choice(["in_use", "spare", "repair"]),
        }
        for _ in range(n)
    ]


def envelope(rng: random.Random, n: int, shape: int) -> str:
    items = rows(rng, n)
    listed = rng.randint(n, 90)
    if shape == 0:  # counters at the top, debug timings nested
        body: dict[str, object] = {"results": items, "total": listed, "returned": n, "has_more": listed > n}
        body["debug"] = {"db_ms": rng.randint(1, 90), "cache": "hit"}
    elif shape == 1:  # a paging object under a name no noise list holds, and a timing at the top
        body = {"records": items, "paging": {"offset": 0, "limit": 20, "total_count": listed}}
        body["query_us"] = rng.randint(100, 9000)
    else:  # meta and counters under other spellings
        body = {"rows": items, "meta": {"size": n, "total": listed}, "num_results": n, "next": None}
        body["stats"] = {"row_count": n, "scan_ns": rng.randint(10, 10**6)}
    return json.dumps(body)


NOISE = ("db_ms", "query_us", "scan_ns", "total_count", "row_count", "num_results", "has_more", "returned")


@pytest.mark.parametrize("seed", range(6))
def test_an_envelopes_counters_and_timings_are_not_records(seed: int) -> None:
    rng = random.Random(seed)
    for shape in range(3):
        n = rng.randint(2, 12)
        records = tool_records(envelope(rng, n, shape))
        assert len(records) == n, [r.render() for r in records]
        assert all(r.key.startswith("AT-") for r in records)
        for r in records:
            names = {k for k, _ in r.fields}
            assert {"holder", "count", "total", "state"} <= names  # a record's own count and total stay
            assert not names & set(NOISE)


def test_a_time_in_a_clock_unit_is_dropped_inside_a_record_and_from_cleaned_text() -> None:
    (record,) = tool_records(json.dumps({"asset_id": "AT-77", "state": "spare", "lookup_ms": 12, "render_usec": 9}))
    assert dict(record.fields) == {"asset_id": "AT-77", "state": "spare"}
    cleaned = clean('done: {"asset_id": "AT-77", "state": "spare", "db_ms": 13, "items": 4}')
    assert "db_ms" not in cleaned and "state=spare" in cleaned and "items=4" in cleaned


def test_a_record_named_like_a_counter_outside_an_envelope_stays() -> None:
    # Not beside a listing: the object is a record, and its numbers are what it says.
    (record,) = tool_records(json.dumps({"order_ref": "ORD-5512", "total": 58, "count": 6, "size": "XL"}))
    assert dict(record.fields) == {"order_ref": "ORD-5512", "total": "58", "count": "6", "size": "XL"}


@pytest.mark.parametrize("seed", range(3))
def test_no_memory_and_no_pin_holds_protocol_noise(seed: int) -> None:
    rng = random.Random(seed)
    text = envelope(rng, 1 + seed, seed)
    turn = Turn("t1", SCOPE, Role.TOOL, text, T0, "assets.find")
    plan = plan_turn(turn, default_schema("agent"), frozenset())
    said = [d.text for d in plan.facts]
    assert said and all("AT-" in s for s in said), said
    for word in (*NOISE, "{size=", "{db_ms"):
        assert all(word not in s for s in said), (word, said)
        assert word not in plan.shown
    state = P.update(P.PinnedState(), "tool", plan.shown, "t1", T0)
    assert all(not set(NOISE) & set(e.attributes) for e in state.entities.values())
