"""Temporal tagging: windows are computed from the turn's own time, at several anchors (month and year ends,
a leap day, a Sunday), never from the wall clock."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from acm.domain.timeparse import TimeMention, query_window, resolve

MON_2023_05_08 = datetime(2023, 5, 8, 15, 30, tzinfo=UTC)  # a Monday
TUE_2023_01_03 = datetime(2023, 1, 3, 9, 0, tzinfo=UTC)  # just after a year boundary
FRI_2024_03_01 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)  # the day after a leap day
SUN_2023_12_31 = datetime(2023, 12, 31, 20, 0, tzinfo=UTC)  # a Sunday, last day of the year


def _one(text: str, anchor: datetime, expression: str) -> TimeMention:
    found = [m for m in resolve(text, anchor) if expression.lower() in m.text.lower()]
    assert found, f"no mention containing {expression!r} in {text!r}: {resolve(text, anchor)}"
    return found[0]


# (anchor, text, expression, first day, last day exclusive, granularity)
CASES: list[tuple[datetime, str, str, date, date, str]] = [
    # relative days
    (MON_2023_05_08, "I went hiking yesterday.", "yesterday", date(2023, 5, 7), date(2023, 5, 8), "day"),
    (MON_2023_05_08, "What a day today!", "today", date(2023, 5, 8), date(2023, 5, 9), "day"),
    (MON_2023_05_08, "See you tomorrow.", "tomorrow", date(2023, 5, 9), date(2023, 5, 10), "day"),
    (MON_2023_05_08, "The day before yesterday it rained.", "day before", date(2023, 5, 6), date(2023, 5, 7), "day"),
    (MON_2023_05_08, "Last night was loud.", "last night", date(2023, 5, 7), date(2023, 5, 8), "day"),
    # N units ago, digits and words
    (MON_2023_05_08, "I met her two days ago.", "two days ago", date(2023, 5, 6), date(2023, 5, 7), "day"),
    (MON_2023_05_08, "I met her 3 days ago.", "3 days ago", date(2023, 5, 5), date(2023, 5, 6), "day"),
    (MON_2023_05_08, "A week ago we talked.", "a week ago", date(2023, 5, 1), date(2023, 5, 8), "week"),
    (MON_2023_05_08, "Two weeks ago we talked.", "two weeks ago", date(2023, 4, 24), date(2023, 5, 1), "week"),
    (MON_2023_05_08, "A month ago I moved.", "a month ago", date(2023, 4, 1), date(2023, 5, 1), "month"),
    (MON_2023_05_08, "Three months ago I moved.", "three months", date(2023, 2, 1), date(2023, 3, 1), "month"),
    (MON_2023_05_08, "A year ago I moved.", "a year ago", date(2022, 1, 1), date(2023, 1, 1), "year"),
    (MON_2023_05_08, "A few days ago I bought shoes.", "a few days", date(2023, 5, 3), date(2023, 5, 7), "approx"),
    (MON_2023_05_08, "A couple of months ago I moved.", "couple", date(2023, 2, 1), date(2023, 5, 1), "approx"),
    (MON_2023_05_08, "Several weeks ago it began.", "several", date(2023, 3, 20), date(2023, 4, 24), "approx"),
    (MON_2023_05_08, "An hour ago I ate.", "an hour ago", date(2023, 5, 8), date(2023, 5, 9), "day"),
    # last / this / next period (weeks start on Monday)
    (MON_2023_05_08, "It shipped last week.", "last week", date(2023, 5, 1), date(2023, 5, 8), "week"),
    (MON_2023_05_08, "It ships this week.", "this week", date(2023, 5, 8), date(2023, 5, 15), "week"),
    (MON_2023_05_08, "It ships next week.", "next week", date(2023, 5, 15), date(2023, 5, 22), "week"),
    (MON_2023_05_08, "It shipped last month.", "last month", date(2023, 4, 1), date(2023, 5, 1), "month"),
    (MON_2023_05_08, "It ships next month.", "next month", date(2023, 6, 1), date(2023, 7, 1), "month"),
    (MON_2023_05_08, "It shipped last year.", "last year", date(2022, 1, 1), date(2023, 1, 1), "year"),
    (MON_2023_05_08, "It ships this year.", "this year", date(2023, 1, 1), date(2024, 1, 1), "year"),
    (MON_2023_05_08, "We hiked last weekend.", "last weekend", date(2023, 5, 6), date(2023, 5, 8), "weekend"),
    (MON_2023_05_08, "We hike this weekend.", "this weekend", date(2023, 5, 13), date(2023, 5, 15), "weekend"),
    (MON_2023_05_08, "We hike next weekend.", "next weekend", date(2023, 5, 20), date(2023, 5, 22), "weekend"),
    (MON_2023_05_08, "We went out over the weekend.", "weekend", date(2023, 5, 6), date(2023, 5, 8), "weekend"),
    (MON_2023_05_08, "Sales fell the week before last.", "before last", date(2023, 4, 24), date(2023, 5, 1), "week"),
    (MON_2023_05_08, "The past three days were hard.", "past three", date(2023, 5, 5), date(2023, 5, 9), "range"),
    (MON_2023_05_08, "I move in two weeks.", "two weeks", date(2023, 5, 22), date(2023, 5, 29), "week"),
    # weekdays: last = strictly before, next = strictly after, bare = by tense
    (MON_2023_05_08, "I saw her last Friday.", "last friday", date(2023, 5, 5), date(2023, 5, 6), "day"),
    (MON_2023_05_08, "I see her next Monday.", "next monday", date(2023, 5, 15), date(2023, 5, 16), "day"),
    (MON_2023_05_08, "I went there on Tuesday.", "tuesday", date(2023, 5, 2), date(2023, 5, 3), "day"),
    (MON_2023_05_08, "I will call you on Tuesday.", "tuesday", date(2023, 5, 9), date(2023, 5, 10), "day"),
    (MON_2023_05_08, "I'm going to call on Friday.", "friday", date(2023, 5, 12), date(2023, 5, 13), "day"),
    (MON_2023_05_08, "I went on Monday.", "monday", date(2023, 5, 8), date(2023, 5, 9), "day"),
    (MON_2023_05_08, "I talked to Will on Friday.", "friday", date(2023, 5, 5), date(2023, 5, 6), "day"),
    # months: last = strictly before the anchor's month, bare = by tense
    (MON_2023_05_08, "We married last May.", "last may", date(2022, 5, 1), date(2022, 6, 1), "month"),
    (MON_2023_05_08, "We met last April.", "last april", date(2023, 4, 1), date(2023, 5, 1), "month"),
    (MON_2023_05_08, "This June is busy.", "this june", date(2023, 6, 1), date(2023, 7, 1), "month"),
    (MON_2023_05_08, "Next May we move.", "next may", date(2024, 5, 1), date(2024, 6, 1), "month"),
    (MON_2023_05_08, "I was in Paris in April.", "april", date(2023, 4, 1), date(2023, 5, 1), "month"),
    (MON_2023_05_08, "I will go to Rome in April.", "april", date(2024, 4, 1), date(2024, 5, 1), "month"),
    (MON_2023_05_08, "We met in June.", "june", date(2022, 6, 1), date(2022, 7, 1), "month"),
    (MON_2023_05_08, "I will travel in June.", "june", date(2023, 6, 1), date(2023, 7, 1), "month"),
    (MON_2023_05_08, "It opened in May 2021.", "may 2021", date(2021, 5, 1), date(2021, 6, 1), "month"),
    # explicit dates
    (MON_2023_05_08, "Signed on 8 May 2023.", "8 may 2023", date(2023, 5, 8), date(2023, 5, 9), "day"),
    (MON_2023_05_08, "Signed on May 8, 2023.", "may 8, 2023", date(2023, 5, 8), date(2023, 5, 9), "day"),
    (MON_2023_05_08, "Signed on the 8th of May 2023.", "8th of may", date(2023, 5, 8), date(2023, 5, 9), "day"),
    (MON_2023_05_08, "Signed 2023-05-08.", "2023-05-08", date(2023, 5, 8), date(2023, 5, 9), "day"),
    (MON_2023_05_08, "Logged at 2023-05-08T10:00Z.", "2023-05-08", date(2023, 5, 8), date(2023, 5, 9), "day"),
    (MON_2023_05_08, "Signed 05/08/2023.", "05/08/2023", date(2023, 5, 8), date(2023, 5, 9), "day"),
    (MON_2023_05_08, "Signed 13/05/2023.", "13/05/2023", date(2023, 5, 13), date(2023, 5, 14), "day"),
    (MON_2023_05_08, "Signed 08.05.2023.", "08.05.2023", date(2023, 5, 8), date(2023, 5, 9), "day"),
    (MON_2023_05_08, "Her birthday is May 8th.", "may 8th", date(2023, 5, 8), date(2023, 5, 9), "day"),
    (MON_2023_05_08, "I met her on March 3rd.", "march 3rd", date(2023, 3, 3), date(2023, 3, 4), "day"),
    (MON_2023_05_08, "I will fly on March 3rd.", "march 3rd", date(2024, 3, 3), date(2024, 3, 4), "day"),
    (MON_2023_05_08, "Launch is on June 1st.", "june 1st", date(2023, 6, 1), date(2023, 6, 2), "day"),
    # years, ranges, seasons, parts
    (MON_2023_05_08, "In 2022 I worked at Acme.", "2022", date(2022, 1, 1), date(2023, 1, 1), "year"),
    (MON_2023_05_08, "I have lived here since 2019.", "2019", date(2019, 1, 1), date(2023, 5, 9), "range"),
    (MON_2023_05_08, "Quiet since last month.", "last month", date(2023, 4, 1), date(2023, 5, 9), "range"),
    (MON_2023_05_08, "Between 2019 and 2021 I studied.", "2019", date(2019, 1, 1), date(2022, 1, 1), "range"),
    (MON_2023_05_08, "From March to May I travelled.", "march", date(2023, 3, 1), date(2023, 6, 1), "range"),
    (MON_2023_05_08, "Off from May 1 to May 5, 2023.", "may 1", date(2023, 5, 1), date(2023, 5, 6), "range"),
    (MON_2023_05_08, "Last summer was hot.", "last summer", date(2022, 6, 1), date(2022, 9, 1), "season"),
    (MON_2023_05_08, "This winter was cold.", "this winter", date(2022, 12, 1), date(2023, 3, 1), "season"),
    (MON_2023_05_08, "Next winter will be cold.", "next winter", date(2023, 12, 1), date(2024, 3, 1), "season"),
    (MON_2023_05_08, "In the summer of 2021 we sailed.", "summer", date(2021, 6, 1), date(2021, 9, 1), "season"),
    (MON_2023_05_08, "In the fall of 2021 I moved.", "fall", date(2021, 9, 1), date(2021, 12, 1), "season"),
    (MON_2023_05_08, "In early May I planted.", "early may", date(2023, 5, 1), date(2023, 5, 11), "month_part"),
    (MON_2023_05_08, "Late April was wet.", "late april", date(2023, 4, 21), date(2023, 5, 1), "month_part"),
    (MON_2023_05_08, "At the end of last month.", "end of last", date(2023, 4, 21), date(2023, 5, 1), "month_part"),
    (MON_2023_05_08, "Results for Q3 2023.", "q3 2023", date(2023, 7, 1), date(2023, 10, 1), "quarter"),
    (MON_2023_05_08, "Music of the 1990s.", "1990s", date(1990, 1, 1), date(2000, 1, 1), "decade"),
    (MON_2023_05_08, "Sick the week before 8 May 2023.", "week before", date(2023, 5, 1), date(2023, 5, 8), "week"),
    (MON_2023_05_08, "We met two days after May 1.", "two days after", date(2023, 5, 3), date(2023, 5, 4), "day"),
    (MON_2023_05_08, "Recently I started running.", "recently", date(2023, 4, 8), date(2023, 5, 9), "approx"),
    # year boundary
    (TUE_2023_01_03, "It shipped last week.", "last week", date(2022, 12, 26), date(2023, 1, 2), "week"),
    (TUE_2023_01_03, "We skied in December.", "december", date(2022, 12, 1), date(2023, 1, 1), "month"),
    (TUE_2023_01_03, "It shipped last month.", "last month", date(2022, 12, 1), date(2023, 1, 1), "month"),
    (TUE_2023_01_03, "It shipped last year.", "last year", date(2022, 1, 1), date(2023, 1, 1), "year"),
    (TUE_2023_01_03, "I went hiking yesterday.", "yesterday", date(2023, 1, 2), date(2023, 1, 3), "day"),
    (TUE_2023_01_03, "I saw her last Friday.", "last friday", date(2022, 12, 30), date(2022, 12, 31), "day"),
    (TUE_2023_01_03, "A week ago we talked.", "a week ago", date(2022, 12, 26), date(2023, 1, 2), "week"),
    (TUE_2023_01_03, "Three months ago I moved.", "three months", date(2022, 10, 1), date(2022, 11, 1), "month"),
    (TUE_2023_01_03, "Sales grew last quarter.", "last quarter", date(2022, 10, 1), date(2023, 1, 1), "quarter"),
    (TUE_2023_01_03, "Last winter was mild.", "last winter", date(2021, 12, 1), date(2022, 3, 1), "season"),
    (TUE_2023_01_03, "This winter is cold.", "this winter", date(2022, 12, 1), date(2023, 3, 1), "season"),
    (TUE_2023_01_03, "I called on Dec 30.", "dec 30", date(2022, 12, 30), date(2022, 12, 31), "day"),
    (TUE_2023_01_03, "It was busy the past week.", "past week", date(2022, 12, 27), date(2023, 1, 4), "range"),
    # leap day and month ends
    (FRI_2024_03_01, "I went hiking yesterday.", "yesterday", date(2024, 2, 29), date(2024, 3, 1), "day"),
    (FRI_2024_03_01, "A month ago I moved.", "a month ago", date(2024, 2, 1), date(2024, 3, 1), "month"),
    (FRI_2024_03_01, "We hike this weekend.", "this weekend", date(2024, 3, 2), date(2024, 3, 4), "weekend"),
    (FRI_2024_03_01, "We hiked last weekend.", "last weekend", date(2024, 2, 24), date(2024, 2, 26), "weekend"),
    (FRI_2024_03_01, "It happened on the 29th.", "29th", date(2024, 2, 29), date(2024, 3, 1), "day"),
    (FRI_2024_03_01, "It ships next month.", "next month", date(2024, 4, 1), date(2024, 5, 1), "month"),
    # a Sunday on the last day of the year
    (SUN_2023_12_31, "See you tomorrow.", "tomorrow", date(2024, 1, 1), date(2024, 1, 2), "day"),
    (SUN_2023_12_31, "It ships next week.", "next week", date(2024, 1, 1), date(2024, 1, 8), "week"),
    (SUN_2023_12_31, "It shipped this week.", "this week", date(2023, 12, 25), date(2024, 1, 1), "week"),
    (SUN_2023_12_31, "We hiked last weekend.", "last weekend", date(2023, 12, 23), date(2023, 12, 25), "weekend"),
    (SUN_2023_12_31, "It ships next year.", "next year", date(2024, 1, 1), date(2025, 1, 1), "year"),
]


@pytest.mark.parametrize(("anchor", "text", "expression", "first", "end", "granularity"), CASES)
def test_resolves_against_the_anchor(
    anchor: datetime, text: str, expression: str, first: date, end: date, granularity: str
) -> None:
    m = _one(text, anchor, expression)
    assert (m.valid_from.date(), m.valid_to.date(), m.granularity) == (first, end, granularity)
    assert m.valid_from.tzinfo is anchor.tzinfo and m.valid_to.tzinfo is anchor.tzinfo
    assert text[m.start : m.end] == m.text


@pytest.mark.parametrize(
    "text",
    [
        "May I ask you something?",
        "I may go, or I may not.",
        "We march on.",
        "The fall of Rome was slow.",
        "Release v1.2.10 is out.",
        "Approve PO-20261028-0098 for 125,000.00 CNY.",
        "It costs 2022 dollars.",
        "Sure, I can help with the refund.",
        "We meet on Mondays.",
    ],
)
def test_finds_nothing_where_there_is_no_time(text: str) -> None:
    assert resolve(text, MON_2023_05_08) == []


def test_yesterday_is_relative_to_the_turn_not_to_today() -> None:
    old_turn = datetime(2015, 1, 1, 8, 0, tzinfo=UTC)
    m = _one("I lost my keys yesterday.", old_turn, "yesterday")
    assert m.valid_from == datetime(2014, 12, 31, tzinfo=UTC)
    assert m.valid_to == datetime(2015, 1, 1, tzinfo=UTC)


def test_days_are_the_anchor_zone_days() -> None:
    la = ZoneInfo("America/Los_Angeles")
    late_evening = datetime(2023, 5, 8, 23, 30, tzinfo=la)  # already 9 May in UTC
    m = _one("I went hiking yesterday.", late_evening, "yesterday")
    assert m.valid_from == datetime(2023, 5, 7, tzinfo=la)
    assert m.valid_to - m.valid_from == timedelta(days=1)


def test_several_mentions_come_in_order_with_offsets() -> None:
    text = "Yesterday I called Sarah; last Friday we met, and next week we sign."
    found = resolve(text, MON_2023_05_08)
    assert [m.text for m in found] == ["Yesterday", "last Friday", "next week"]
    assert all(text[m.start : m.end] == m.text for m in found)


def test_recently_is_low_confidence() -> None:
    m = _one("Recently I started running.", MON_2023_05_08, "recently")
    assert m.confidence < 0.5
    assert _one("I went hiking yesterday.", MON_2023_05_08, "yesterday").confidence == 1.0


def test_is_deterministic() -> None:
    text = "Last May, two weeks ago and in early June 2021."
    assert resolve(text, MON_2023_05_08) == resolve(text, MON_2023_05_08)


@pytest.mark.parametrize(
    ("question", "first", "end"),
    [
        ("What did I do last May?", date(2022, 5, 1), date(2022, 6, 1)),
        ("What did I buy in 2022?", date(2022, 1, 1), date(2023, 1, 1)),
        ("What happened on 8 May 2023?", date(2023, 5, 8), date(2023, 5, 9)),
        ("Who did I meet last week?", date(2023, 5, 1), date(2023, 5, 8)),
        ("What did I eat yesterday?", date(2023, 5, 7), date(2023, 5, 8)),
        ("What have I been reading recently?", date(2023, 4, 8), date(2023, 5, 9)),
        ("Where was I between 2019 and 2021?", date(2019, 1, 1), date(2022, 1, 1)),
    ],
)
def test_query_window(question: str, first: date, end: date) -> None:
    window = query_window(question, MON_2023_05_08)
    assert window is not None
    assert (window[0].date(), window[1].date()) == (first, end)


@pytest.mark.parametrize(
    "question",
    ["When did I move to Paris?", "How long have I lived here?", "What is Sarah's email?", "May I see my orders?"],
)
def test_query_window_none_without_a_time_constraint(question: str) -> None:
    assert query_window(question, MON_2023_05_08) is None


def test_query_window_defaults_to_now_in_utc() -> None:
    window = query_window("What did I do yesterday?")
    assert window is not None
    assert window[0].tzinfo is UTC
    assert window[1] - window[0] == timedelta(days=1)
    assert window[1].date() == datetime.now(UTC).date()
