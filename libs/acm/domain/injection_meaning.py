"""Injection by meaning: the second stage after the rules of acm.domain.instruction.

The rules read phrasings, and phrasings they were not written from get through (sealed hold-outs 6 and 7:
92.4 and 81.3 % recall). An injection is an order aimed at the agent (override its rules, claim authority,
lift a limit, exfiltrate, hide an order for "the AI", poison a tool's description) whatever its words. Each
piece of a text (its decoded strings, markup dropped, split into sentences) is scored by a learned model
(acm.domain.injection_model: logistic regression over the piece's embedding and a few lexical cues); a text
whose best piece's probability is over the threshold is an instruction. (The first version compared pieces
with a bank of exemplar sentences by nearest neighbours; it flagged ordinary requests that share an attack's
words: docs/experiments.md, "Issue 18: a learned injection check".)

It only adds: a text the rules flagged stays flagged, and one they cleared is flagged only by its meaning.
Pure: it takes vectors (the embedder runs in acm.adapters.injection_meaning); no IO.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from acm.domain.injection_model import FEATURES, InjectionModel, carrier, lexical
from acm.domain.injection_weights import THRESHOLD
from acm.domain.instruction import InstructionVerdict, Trust
from acm.domain.sentences import split
from acm.domain.textforms import decoded_strings

REASON = "meaning"
# The shipped model's threshold: at most 0.5 % of its dev negatives over it (acm_benchmarks.injection_model_train).
DEFAULT_MARGIN = THRESHOLD
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
class MeaningVerdict:
    score: float  # the best piece's probability of being an order to the agent (-2: no piece)
    piece: str  # that piece
    family: str  # its strongest lexical cue (acm.domain.injection_model.FEATURES), or "vector"

    def flagged(self, margin: float) -> bool:
        return self.score > margin


NO_PIECES = MeaningVerdict(-2.0, "", "")


def model_verdict(
    model: InjectionModel, text: str, texts: Sequence[str], vectors: Sequence[Sequence[float]]
) -> MeaningVerdict:
    """The verdict of ``text`` from its pieces (``texts``, as pieces() gave them) and their vectors: its best
    piece's probability of being an order to the agent; ``family`` names that piece's strongest lexical cue."""
    if not len(vectors):
        return NO_PIECES
    where = carrier(text)
    cues = [lexical(t, where) for t in texts]
    probs = model.probabilities(vectors, cues)
    best = int(probs.argmax())
    fired = [(w, name) for name, w, on in zip(FEATURES, model.weights[model.dim :], cues[best], strict=True) if on]
    return MeaningVerdict(float(probs[best]), texts[best], max(fired)[1] if fired else "vector")


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
