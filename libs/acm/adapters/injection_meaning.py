"""The meaning check of injections (acm.domain.injection_meaning) with an embedder: the exemplar bank is
embedded once, when the check is made (ingest's start), and kept; each text's pieces are embedded per call."""

from __future__ import annotations

import time
from collections.abc import Sequence

from acm.domain.injection_exemplars import ATTACKS, NEGATIVES
from acm.domain.injection_meaning import (
    DEFAULT_MARGIN,
    NO_PIECES,
    ExemplarBank,
    MeaningVerdict,
    meaning_verdict,
    pieces,
    with_meaning,
)
from acm.domain.instruction import InstructionVerdict
from acm.domain.instruction import instruction_verdict as rules_verdict
from acm.ports.embedder import Embedder


def exemplar_bank(embedder: Embedder) -> ExemplarBank:
    attacks = [(family, s) for family, said in ATTACKS.items() for s in said]
    negatives = [s for said in NEGATIVES.values() for s in said]
    vectors = embedder.embed([s for _, s in attacks] + negatives)
    return ExemplarBank.of(vectors[: len(attacks)], vectors[len(attacks) :], [f for f, _ in attacks])


class MeaningCheck:
    """Rules first, then meaning: ``verdict`` is what ingest and `acm bench safety` decide a text's trust by."""

    def __init__(self, embedder: Embedder, margin: float = DEFAULT_MARGIN) -> None:
        started = time.perf_counter()
        self.embedder = embedder
        self.margin = margin
        self.bank = exemplar_bank(embedder)
        self.start_s = time.perf_counter() - started  # the bank's embedding: ingest's extra start time

    def meaning(self, text: str) -> MeaningVerdict:
        return self.meanings([text])[0]

    def meanings(self, texts: Sequence[str]) -> list[MeaningVerdict]:
        """Verdicts of several texts with one embedder call (their pieces together)."""
        split = [pieces(t) for t in texts]
        flat = [p for ps in split for p in ps]
        vectors = self.embedder.embed(flat) if flat else []
        out: list[MeaningVerdict] = []
        at = 0
        for ps in split:
            out.append(meaning_verdict(self.bank, ps, vectors[at : at + len(ps)]) if ps else NO_PIECES)
            at += len(ps)
        return out

    def instruction(self, text: str) -> MeaningVerdict | None:
        found = self.meaning(text)
        return found if found.flagged(self.margin) else None

    def verdict(self, text: str, role: str = "user") -> InstructionVerdict:
        return self.after(rules_verdict(text, role), text)

    def after(self, rules: InstructionVerdict, text: str) -> InstructionVerdict:
        """The rules' verdict of ``text``, made an instruction when its meaning is one."""
        if rules.flagged:
            return rules  # no embedding for what the rules already caught
        return with_meaning(rules, self.meaning(text), self.margin)
