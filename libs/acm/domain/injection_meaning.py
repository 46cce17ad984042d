"""Injection by meaning: the second stage after the rules of acm.domain.instruction.

The rules read phrasings, and phrasings they were not written from get through (sealed hold-outs 6 and 7:
92.4 and 81.3 % recall). An injection is an order aimed at the agent (override its rules, claim authority,
lift a limit, exfiltrate, hide an order for "the AI", poison a tool's description) whatever its words; a
sentence embedder places paraphrases of one intent near each other. So each piece of a text (its decoded
strings, markup dropped, split into sentences) is compared with a bank of exemplar sentences
(acm.domain.injection_exemplars): its score is the mean cosine to its K nearest attack exemplars minus the
mean cosine to its K nearest ordinary ones (refund requests, policy questions, approvals, password help,
instructions for people). The mean of a few neighbours rather than the nearest one: on the dev sets at 1 %
false positives it found 30-36 % of the injections by meaning alone against 18-34 % (AUC 0.88 against 0.80).
A text whose best piece scores above the margin is an instruction.

It only adds: a text the rules flagged stays flagged, and one they cleared is flagged only by its meaning.
Pure: it takes vectors (the embedder runs in acm.adapters.injection_meaning); no IO.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from acm.domain.instruction import InstructionVerdict, Trust
from acm.domain.sentences import split
from acm.domain.textforms import decoded_strings

F32 = npt.NDArray[np.float32]

REASON = "meaning"
# At most 1 % of the development negatives score over it (python -m acm_benchmarks.injection_margin; how it was
# fitted and measured: docs/experiments.md, "Issue 18: injection by meaning").
DEFAULT_MARGIN = 0.04
K = 5  # neighbours averaged on each side
MAX_PIECES = 32  # a long artifact: its first pieces (an embedder call grows with them)
MAX_PIECE_CHARS = 400
_TAG = re.compile(r"<!--|-->|<[^<>]{0,400}>")
_ALT = re.compile(r"""\b(?:alt|title|aria-label)\s*=\s*["']([^"']{8,})["']""", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]{2,}|[\u4e00-\u9fff]")


def pieces(text: str) -> list[str]:
    """The sentences the check embeds: every decoded string of ``text`` (JSON strings after their keys), markup
    tags dropped but their alt and title texts kept, split into sentences; pieces of fewer than four words
    (or four Chinese characters) say no order and are left out. At most MAX_PIECES, each MAX_PIECE_CHARS."""
    out: list[str] = []
    for part in decoded_strings(text.replace("\\n", "\n")):
        alts = _ALT.findall(part)
        prose = _TAG.sub("\n", part)
        for sentence in [*split(prose), *alts]:
            sentence = " ".join(sentence.split())
            if len(_WORD.findall(sentence)) >= 4 and sentence not in out:
                out.append(sentence[:MAX_PIECE_CHARS])
            if len(out) >= MAX_PIECES:
                return out
    return out


@dataclass(frozen=True, slots=True)
class ExemplarBank:
    """Unit vectors of the exemplars, one row each; ``families`` names each attack row's intent."""

    attacks: F32
    negatives: F32
    families: tuple[str, ...]

    @classmethod
    def of(
        cls, attacks: Sequence[Sequence[float]], negatives: Sequence[Sequence[float]], families: Sequence[str]
    ) -> ExemplarBank:
        if len(attacks) != len(families) or not len(attacks) or not len(negatives):
            raise ValueError("the bank needs attack and negative vectors, one family per attack")
        return cls(_unit(attacks), _unit(negatives), tuple(families))


@dataclass(frozen=True, slots=True)
class MeaningVerdict:
    score: float  # the best piece's mean cosine to its K nearest attacks minus to its K nearest negatives (-2: none)
    piece: str  # that piece
    family: str  # the attack family it is nearest to

    def flagged(self, margin: float) -> bool:
        return self.score > margin


NO_PIECES = MeaningVerdict(-2.0, "", "")


def meaning_verdict(bank: ExemplarBank, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> MeaningVerdict:
    """The verdict of a text from its pieces (``texts``, as pieces() gave them) and their vectors."""
    if not len(vectors):
        return NO_PIECES
    v = _unit(vectors)
    to_attack = v @ bank.attacks.T
    margin = _nearest(to_attack) - _nearest(v @ bank.negatives.T)
    best = int(margin.argmax())
    return MeaningVerdict(float(margin[best]), texts[best], bank.families[int(to_attack[best].argmax())])


def with_meaning(rules: InstructionVerdict, meaning: MeaningVerdict, margin: float) -> InstructionVerdict:
    """The rules' verdict, made an INSTRUCTION when the meaning says so; never lowered."""
    if rules.flagged or not meaning.flagged(margin):
        return rules
    return replace(
        rules,
        trust=Trust.INSTRUCTION,
        reasons=(*rules.reasons, REASON),
        signals=tuple(sorted({*rules.signals, f"{REASON}:{meaning.family}"})),
    )


def _nearest(cosines: F32) -> F32:
    """Each row's mean of its K highest cosines."""
    k = min(K, cosines.shape[1])
    return np.partition(cosines, -k, axis=1)[:, -k:].mean(axis=1)


def _unit(rows: Sequence[Sequence[float]]) -> F32:
    m = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return (m / np.where(norms == 0, 1, norms)).astype(np.float32)
