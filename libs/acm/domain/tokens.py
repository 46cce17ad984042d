"""Token budgets: counting is a port (tiktoken behind it); packing is pure logic."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")

ENCODINGS = ("cl100k_base", "o200k_base")
DEFAULT_ENCODING = "cl100k_base"


class TokenCounter(Protocol):
    def count(self, text: str, encoding_name: str = DEFAULT_ENCODING) -> int: ...


@dataclass(frozen=True, slots=True)
class Packed(Generic[T]):
    items: list[tuple[T, int]]  # (item, tokens), in the order given
    total_tokens: int
    dropped: int


def pack(items: Sequence[T], sizes: Sequence[int], budget: int) -> Packed[T]:
    """Greedy best-first packing: keep each item, in rank order, that still fits the budget.

    Later, smaller items may fill the space a large one left, so the budget is used well without
    ever exceeding it.
    """
    kept, total = pack_until_full(zip(items, sizes, strict=True), budget, smallest=0)
    return Packed(kept, total, len(items) - len(kept))


def pack_until_full(items: Iterable[tuple[T, int]], budget: int, smallest: int) -> tuple[list[tuple[T, int]], int]:
    """pack() over (item, tokens) pairs produced lazily, best first: the same items kept, but it stops reading
    once the room left is below ``smallest`` (the fewest tokens any item has), when nothing more can fit.
    Returns the kept pairs and their total."""
    kept: list[tuple[T, int]] = []
    total = 0
    for item, size in items:
        if budget - total < smallest:
            break
        if total + size <= budget:
            kept.append((item, size))
            total += size
    return kept, total
