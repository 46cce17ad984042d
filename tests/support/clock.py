"""A clock a test moves forward instead of sleeping until a TTL passes."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta


class ShiftedClock:
    """The real time plus what the test advanced it by: time still moves (so code that orders by it behaves as
    in production), and an expiry hours away is reached at once."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def monotonic(self) -> float:
        return time.monotonic() + self.offset.total_seconds()

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)
