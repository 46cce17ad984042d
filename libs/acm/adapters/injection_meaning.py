"""The meaning check of injections (acm.domain.injection_meaning) with its embedders: each text's pieces are
embedded per call and scored by the shipped learned models (acm.domain.injection_model), whose weights fit one
embedder's vectors each: the pieces in English and Chinese (and any the language identifier is unsure of) by the
model with lexical cues in those languages, the pieces in another language by the model on a multilingual
embedder (its lexical cues do not fire there; its vectors put a sentence near its translation)."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acm.domain.injection_meaning import (
    NO_PIECES,
    MeaningPieces,
    MeaningVerdict,
    merged,
    model_verdict,
    pieces,
    with_meaning,
)
from acm.domain.injection_model import InjectionModel, aligned, shipped, shipped_other_languages
from acm.domain.instruction import InstructionVerdict
from acm.domain.instruction import instruction_verdict as rules_verdict
from acm.ports.embedder import Embedder

# The languages of the Universal Sentence Encoder multilingual v3 (the multilingual model's embedder): the
# identifier chooses among them only, so a short piece is not taken for a language no model reads.
USE_LANGUAGES = ("ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh")
READ_BY_THE_CUES = frozenset({"en", "zh"})


class Languages:
    """The language of a piece (py3langid: naive Bayes over byte n-grams, its model inside the package, about
    0.03 ms a sentence), or "" when its probability is under ``min_probability``."""

    def __init__(self, codes: Sequence[str] = USE_LANGUAGES, min_probability: float = 0.8) -> None:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        self._identifier: Any = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        self._identifier.set_languages(list(codes))
        self.min_probability = min_probability

    def of(self, text: str) -> str:
        code, probability = self._identifier.classify(text)
        return str(code) if probability >= self.min_probability else ""


@functools.cache
def shared_languages() -> Languages:
    """One identifier per process: its model takes ~0.5 s and ~80 MB to load, and it keeps no state per call."""
    return Languages()


@dataclass(frozen=True, slots=True)
class OtherLanguages:
    """The multilingual model, its embedder, and the identifier that sends it the pieces of other languages."""

    embedder: Embedder
    model: InjectionModel
    languages: Languages


def _check_fits(model: InjectionModel, embedder: Embedder) -> None:
    """Weights fit one embedder's vector space; another's vectors would give meaningless scores."""
    if model.embedder != embedder.name:
        raise ValueError(
            f"the injection model was trained on {model.embedder} vectors, the embedder is {embedder.name}: "
            "retrain it (python -m acm_benchmarks.injection_model_train --embedder ...) or set "
            "ACM_INJECTION_MEANING=false"
        )


class MeaningCheck:
    """Rules first, then meaning: ``verdict`` is what ingest and `acm bench safety` decide a text's trust by."""

    def __init__(
        self,
        embedder: Embedder,
        margin: float | None = None,
        model: InjectionModel | None = None,
        other: OtherLanguages | None = None,
    ) -> None:
        started = time.perf_counter()
        self.model = model or shipped()
        _check_fits(self.model, embedder)
        if other is not None:
            _check_fits(other.model, other.embedder)
        self.embedder = embedder
        self.margin = self.model.threshold if margin is None else margin
        self.other = other
        self.other_embedder = other.embedder if other else None
        # The other model's threshold is put on the shipped one's scale, so a text scores as its best piece.
        self._other_model = aligned(other.model, self.model.threshold) if other else None
        self.start_s = time.perf_counter() - started

    def meaning(self, text: str) -> MeaningVerdict:
        return self.meanings([text])[0]

    def meanings(self, texts: Sequence[str]) -> list[MeaningVerdict]:
        """Verdicts of several texts with one call per embedder (their pieces together)."""
        split = [self.pieces(t) for t in texts]
        read = [p for ps in split for p in ps.read]
        other = [p for ps in split for p in ps.other]
        read_vectors = self.embedder.embed(read) if read else []
        other_vectors = self.other_embedder.embed(other) if other and self.other_embedder else []
        out: list[MeaningVerdict] = []
        at = at_other = 0
        for text, ps in zip(texts, split, strict=True):
            r, o = len(ps.read), len(ps.other)
            out.append(self._scored(text, ps, read_vectors[at : at + r], other_vectors[at_other : at_other + o]))
            at, at_other = at + r, at_other + o
        return out

    def pieces(self, text: str) -> MeaningPieces:
        """What to embed for orders_in: ``read`` with self.embedder, ``other`` with self.other_embedder (the caller
        may batch them with others)."""
        found = pieces(text)
        if self.other is None:
            return MeaningPieces(tuple(found))
        language = self.other.languages.of
        other = tuple(p for p in found if language(p) not in READ_BY_THE_CUES | {""})
        return MeaningPieces(tuple(p for p in found if p not in other), other)

    def orders_in(
        self,
        text: str,
        ps: MeaningPieces,
        vectors: Sequence[Sequence[float]],
        other_vectors: Sequence[Sequence[float]] = (),
    ) -> tuple[str, ...]:
        """orders() from the vectors of ``text``'s pieces (``ps``, as pieces() gave them), embedded by the caller."""
        return self._scored(text, ps, vectors, other_vectors).orders(self.margin)

    def _scored(
        self,
        text: str,
        ps: MeaningPieces,
        vectors: Sequence[Sequence[float]],
        other_vectors: Sequence[Sequence[float]],
    ) -> MeaningVerdict:
        read = model_verdict(self.model, text, ps.read, vectors) if ps.read else NO_PIECES
        if not ps.other or self._other_model is None:
            return read
        return merged(read, model_verdict(self._other_model, text, ps.other, other_vectors))

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


def build_meaning_check(
    embedder: Embedder | None = None,
    margin: float | None = None,
    other_languages: bool = True,
    threads: int = 1,
    models_dir: Path | None = None,
    source: str = "files",
) -> MeaningCheck:
    """The check as shipped: ``embedder`` when the shipped weights fit it (ingest's own: its pieces then join the
    facts' embedder calls), else the embedder they fit; with ``other_languages``, the multilingual model too."""
    from acm.adapters.embedders import build_embedder

    model = shipped()
    if embedder is None or embedder.name != model.embedder:
        embedder = build_embedder(model.embedder, threads, models_dir, source)
    other = None
    if other_languages:
        multilingual = shipped_other_languages()
        other = OtherLanguages(
            build_embedder(multilingual.embedder, threads, models_dir, source), multilingual, shared_languages()
        )
    return MeaningCheck(embedder, margin, model, other)
