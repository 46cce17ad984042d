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
The pieces over the threshold are the order: ingest drops the facts cut from them and keeps the turn's other
facts as doubtful ones (``without_orders``), so an order inside a long chat turn costs the order, not the turn.
Pure: it takes vectors (the embedder runs in acm.adapters.injection_meaning); no IO.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from acm.domain.facts import FactDraft, normalised
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
# A markdown link's or image's title, shown on hover, not in the prose: [docs](https://… "title").
_MD_TITLE = re.compile(r"""(\]\(\s*\S+)\s+["']([^"']{8,})["']\s*\)""")
# A word: a run of two or more letters in any script (Latin, Cyrillic, Hangul, Arabic, ...), or one Chinese or
# Japanese character (those scripts put no space between words).
_WORD = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]|[^\W\d_\u3040-\u30ff\u4e00-\u9fff]{2,}")


def pieces(text: str) -> list[str]:
    """The sentences the check embeds: every decoded string of ``text`` (JSON strings after their keys), markup
    tags dropped but their alt and title texts (and markdown links' titles) kept, split into sentences; pieces of
    fewer than four words (in any script; a Chinese or Japanese character counts as one) say no order and are
    left out. At most MAX_PIECES, each
    MAX_PIECE_CHARS."""
    out: list[str] = []
    for part in decoded_strings(text.replace("\\n", "\n")):
        alts = [*_ALT.findall(part), *(m.group(2) for m in _MD_TITLE.finditer(part))]
        prose = _MD_TITLE.sub(r"\1)", _TAG.sub("\n", part))
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
    scored: tuple[tuple[str, float], ...] = ()  # every piece with its probability, in the text's order

    def flagged(self, margin: float) -> bool:
        return self.score > margin

    def orders(self, margin: float) -> tuple[str, ...]:
        """The pieces over ``margin``: what of the text is an order to the agent."""
        return tuple(piece for piece, p in self.scored if p > margin)


NO_PIECES = MeaningVerdict(-2.0, "", "")


@dataclass(frozen=True, slots=True)
class MeaningPieces:
    """A text's pieces by the model that scores them: ``read``, in the languages the lexical cues read (English,
    Chinese) or not known, by the shipped model; ``other``, in another language, by the multilingual one."""

    read: tuple[str, ...]
    other: tuple[str, ...] = ()

    @property
    def all(self) -> tuple[str, ...]:
        return (*self.read, *self.other)


def merged(*verdicts: MeaningVerdict) -> MeaningVerdict:
    """One verdict of a text whose pieces several models scored (on one probability scale: see
    injection_model.aligned): every piece scored, the best one leading."""
    scored = [v for v in verdicts if v.scored]
    if not scored:
        return NO_PIECES
    best = max(scored, key=lambda v: v.score)
    return MeaningVerdict(best.score, best.piece, best.family, tuple(x for v in scored for x in v.scored))


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
    scored = tuple((t, float(p)) for t, p in zip(texts, probs, strict=True))
    return MeaningVerdict(float(probs[best]), texts[best], max(fired)[1] if fired else "vector", scored)


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


# Words two cuts of the same sentence share at least: a fact is a sentence of the turn, a part of a long one or
# a record holding a decoded string; a piece is a sentence, at most MAX_PIECE_CHARS of it. Four is the fewest
# words a piece has.
_RUN = 4


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + _RUN]) for i in range(len(words) - _RUN + 1)}


def overlaps(sentence: str, piece: str) -> bool:
    """Whether a fact's ``sentence`` was cut from ``piece`` of the same text (or holds some of it): one holds
    the other, or they share a run of _RUN words (case, punctuation and spacing aside)."""
    a, b = normalised(sentence), normalised(piece)
    if not a or not b:
        return False
    if f" {a} " in f" {b} " or f" {b} " in f" {a} ":
        return True
    return bool(_runs(a.split()) & _runs(b.split()))


def without_orders(facts: Sequence[FactDraft], orders: Sequence[str]) -> tuple[FactDraft, ...]:
    """The facts of a turn whose ``orders`` (the pieces over the threshold) were found by meaning: a fact cut
    from an order is dropped; the others are kept UNTRUSTED (a turn that holds an order is a doubtful source:
    its facts are stored and marked, never promoted, and go to the LLM judge when one is configured)."""
    doubtful = Trust.UNTRUSTED.value
    return tuple(
        replace(f, trust=doubtful if f.trust == Trust.NORMAL.value else f.trust)
        for f in facts
        if not any(overlaps(f.sentence, o) for o in orders)
    )
