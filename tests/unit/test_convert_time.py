"""Timestamps converted by arithmetic give what protobuf's own FromDatetime / ToDatetime give."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

from google.protobuf.timestamp_pb2 import Timestamp

from acm.convert import from_ts, ts

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def test_ts_and_from_ts_match_protobuf_for_any_instant_and_offset() -> None:
    rng = random.Random(1)
    for _ in range(5000):
        instant = EPOCH + timedelta(
            seconds=rng.randint(-2_000_000_000, 4_000_000_000), microseconds=rng.randint(0, 999_999)
        )
        dt = instant.astimezone(timezone(timedelta(minutes=rng.choice([0, 60, -300, 330, 765]))))
        expected = Timestamp()
        expected.FromDatetime(instant)
        assert ts(dt) == expected
        if instant != EPOCH:
            assert from_ts(ts(dt)) == expected.ToDatetime(tzinfo=UTC) == instant


def test_no_time_is_the_empty_timestamp_and_back() -> None:
    assert ts(None) == Timestamp()
    assert from_ts(Timestamp()) is None


def test_a_naive_datetime_is_local_time_as_before() -> None:
    naive = datetime(2023, 5, 8, 13, 56)
    expected = Timestamp()
    expected.FromDatetime(naive.astimezone(UTC))
    assert ts(naive) == expected
