"""Evidence recall@k of rankings of raw LoCoMo turns, per category: what the offline retrieval probes
(embedder_fusion.py, query_expansion.py) share."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence


class RecallAtK:
    """Collects, per (category, system, k), the share of each question's evidence turns in its first k."""

    def __init__(self, ks: Sequence[int]) -> None:
        self.ks = tuple(ks)
        self._found: dict[tuple[str, str, int], list[float]] = defaultdict(list)

    def add(
        self, category: int, evidence: Iterable[str], ids: Sequence[str], orders: Mapping[str, Iterable[int]]
    ) -> None:
        """One question: ``orders`` maps a system to its ranking of the turns (indices into ``ids``)."""
        wanted = set(evidence)
        for name, order in orders.items():
            ranked = [ids[int(j)] for j in list(order)[: max(self.ks)]]
            for k in self.ks:
                share = len(wanted & set(ranked[:k])) / len(wanted)
                for cat in (str(category), "all"):
                    self._found[(cat, name, k)].append(share)

    def table(self, systems: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
        """category → system → {"recall_at_<k>": percent}, categories in order and "all" last."""
        cats = sorted({c for c, _, _ in self._found}, key=lambda c: (c == "all", c))
        return {
            c: {
                s: {f"recall_at_{k}": round(100 * sum(v) / len(v), 1) for k in self.ks if (v := self._found[(c, s, k)])}
                for s in systems
            }
            for c in cats
        }

    def print_table(self, systems: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
        """Print one row per system, one column per category and k; returns table(systems)."""
        result = self.table(systems)
        width = max(len(s) for s in systems) + 2
        print(f"{'system':<{width}}" + "".join(f"{c + '@' + str(k):>10}" for c in result for k in self.ks))
        for s in systems:
            print(f"{s:<{width}}" + "".join(f"{result[c][s][f'recall_at_{k}']:>10}" for c in result for k in self.ks))
        return result
