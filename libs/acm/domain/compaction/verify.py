"""The verifier: every key-fact atom of the replaced span is still stated (by the pinned state or the
summary), and the summary states no atom that the span did not contain."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from acm.domain.compaction import atoms as A


@dataclass(frozen=True, slots=True)
class Verdict:
    missing: tuple[A.Atom, ...]
    unsupported: tuple[A.Atom, ...]

    @property
    def ok(self) -> bool:
        return not self.missing and not self.unsupported


def present(atom: A.Atom, kept_facts: set[A.Atom], kept_norm: str, lines: Sequence[str]) -> bool:
    if atom.kind == "goal":
        return atom.value in kept_norm
    if atom.kind == "tool":
        name, _, result = atom.value.partition(" -> ")
        return any(name in line and result in line.lower() for line in lines)
    return atom in kept_facts


def verify(
    span_atoms: Iterable[A.Atom],
    pinned_text: str,
    new_lines: Sequence[str],
    old_lines: Sequence[str] = (),
    known_text: str = "",
    said: Iterable[A.Atom] = (),
) -> Verdict:
    """``span_atoms``: atoms of the turns being replaced; ``pinned_text``: the new pinned state, rendered;
    ``new_lines``: the summary of the span; ``old_lines``: the summary kept from before; ``known_text``:
    what the summary may also mention without inventing it (the previous pinned state); ``said``: atoms the
    span states that the context need not keep (a tool's records, kept as memories) but may mention."""
    lines = [*old_lines, *new_lines]
    kept = pinned_text + "\n" + "\n".join(lines)
    facts = A.fact_atoms(kept)
    norm = A.norm_text(kept)
    span = set(span_atoms)
    missing = tuple(sorted(a for a in span if not present(a, facts, norm, lines)))
    allowed = {a for a in span if a.kind not in ("goal", "tool")} | A.fact_atoms(known_text) | set(said)
    unsupported = tuple(sorted(a for a in A.fact_atoms("\n".join(new_lines)) if a not in allowed))
    return Verdict(missing, unsupported)
