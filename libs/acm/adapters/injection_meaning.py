"""The meaning check of injections (acm.domain.injection_meaning) with an embedder: each text's pieces are embedded
per call and scored by the shipped learned model (acm.domain.injection_model), whose weights fit one embedder's
vectors."""

from __future__ import annotations

import time
from collections.abc import Sequence

from acm.domain.injection_meaning import NO_PIECES, MeaningVerdict, model_verdict, pieces, with_meaning
from acm.domain.injection_model import InjectionModel, shipped
from acm.domain.instruction import InstructionVerdict
from acm.domain.instruction import instruction_verdict as rules_verdict
from acm.ports.embedder import Embedder


class MeaningCheck:
    """Rules first, then meaning: ``verdict`` is what ingest and `acm bench safety` decide a text's trust by."""

    def __init__(self, embedder: Embedder, margin: float | None = None, model: InjectionModel | None = None) -> None:
        started = time.perf_counter()
        self.model = model or shipped()
        if self.model.embedder != embedder.name:
            # Weights fit one embedder's vector space; another's vectors would give meaningless scores.
            raise ValueError(
                f"the injection model was trained on {self.model.embedder} vectors, the embedder is {embedder.name}: "
                "retrain it (python -m acm_benchmarks.injection_model_train --embedder ...) or set "
                "ACM_INJECTION_MEANING=false"
            )
        self.embedder = embedder
        self.margin = self.model.threshold if margin is None else margin
        self.start_s = time.perf_counter() - started

    def meaning(self, text: str) -> MeaningVerdict:
        return self.meanings([text])[0]

    def meanings(self, texts: Sequence[str]) -> list[MeaningVerdict]:
        """Verdicts of several texts with one embedder call (their pieces together)."""
        split = [pieces(t) for t in texts]
        flat = [p for ps in split for p in ps]
        vectors = self.embedder.embed(flat) if flat else []
        out: list[MeaningVerdict] = []
        at = 0
        for text, ps in zip(texts, split, strict=True):
            out.append(self._scored(text, ps, vectors[at : at + len(ps)]))
            at += len(ps)
        return out

    def pieces(self, text: str) -> list[str]:
        """What to embed (with self.embedder, in any call) for orders_in: the caller may batch them with others."""
        return pieces(text)

    def orders_in(self, text: str, ps: Sequence[str], vectors: Sequence[Sequence[float]]) -> tuple[str, ...]:
        """orders() from the vectors of ``text``'s pieces (``ps``, as pieces() gave them), embedded by the caller."""
        return self._scored(text, ps, vectors).orders(self.margin)

    def _scored(self, text: str, ps: Sequence[str], vectors: Sequence[Sequence[float]]) -> MeaningVerdict:
        return model_verdict(self.model, text, ps, vectors) if ps else NO_PIECES

    def instruction(self, text: str) -> MeaningVerdict | None:
        found = self.meaning(text)
        return found if found.flagged(self.margin) else None

    def orders(self, text: str) -> tuple[str, ...]:
        """The pieces of ``text`` over the margin: the orders in it (none: its meaning is no order)."""
        return self.meaning(text).orders(self.margin)

    def verdict(self, text: str, role: str = "user") -> InstructionVerdict:
        return self.after(rules_verdict(text, role), text)

    def after(self, rules: InstructionVerdict, text: str) -> InstructionVerdict:
        """The rules' verdict of ``text``, made an instruction when its meaning is one."""
        if rules.flagged:
            return rules  # no embedding for what the rules already caught
        return with_meaning(rules, self.meaning(text), self.margin)
