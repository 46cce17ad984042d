"""The deterministic episodic summary: one causal-chain line per exchange,
condition (what the user asked or stated) → tool called with its key inputs → effect (what it returned).

Only sentences and fields that carry a key fact (an atom) or a goal are kept; chatter and protocol noise
(already removed by noise.clean) are dropped."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from acm.domain.compaction import atoms as A
from acm.domain.compaction.noise import clean

MAX_TOOL_BODY_CHARS = 240
MAX_TOOL_IDS = 5
_PAIR_SPLIT = re.compile(r",\s*(?=[{\[]*[a-z][a-z0-9_]*=)|;\s*")


@dataclass(frozen=True, slots=True)
class SpanTurn:
    """One turn of the span being compacted, already cleaned of protocol noise."""

    turn_id: str
    role: str
    tool_name: str
    text: str  # cleaned
    speaker: str = ""


def _keep(sentence: str, role: str) -> bool:
    return bool(A.fact_atoms(sentence)) or (role == "user" and bool(A.goal_sentences(sentence)))


def _trim(sentence: str) -> str:
    """Of a ``k=v, k=v`` rendering, only the fields that carry a fact."""
    if "=" not in sentence:
        return sentence
    fields = [f.strip("{}[] ") for f in _PAIR_SPLIT.split(sentence)]
    return ", ".join(f for f in fields if f and A.fact_atoms(f))


def _digest(turn: SpanTurn) -> str:
    kept = [t for t in (_trim(s) for s in A.sentences(turn.text) if _keep(s, turn.role)) if t]
    if turn.role == "tool":
        # A tool output: only the fields and sentences that carry a fact; ids of linked records included. A
        # long listing is named by its first record ids: each record is a memory of its own.
        body = "; ".join(kept)
        if len(body) > MAX_TOOL_BODY_CHARS:
            keys = A.ids(turn.text)
            more = len(keys) - MAX_TOOL_IDS
            shown = ", ".join(keys[:MAX_TOOL_IDS]) + (f" and {more} more" if more > 0 else "")
            body = f"records {shown}" if keys else body[:MAX_TOOL_BODY_CHARS] + "…"
        name = turn.tool_name or "tool"
        result = A.tool_result(turn.text)
        return f"{name} → {result}" + (f": {body}" if body else "")
    if not kept:
        return ""
    return f"{turn.speaker or turn.role}: {' '.join(kept)}"


def summarise(span: Sequence[SpanTurn]) -> list[str]:
    """Episode lines: a user turn opens a chain, the assistant's calls and the tools' effects extend it."""
    lines: list[str] = []
    chain: list[str] = []
    for turn in span:
        piece = _digest(turn)
        if turn.role == "user" and chain:
            lines.append(" → ".join(chain))
            chain = []
        if piece:
            chain.append(piece)
    if chain:
        lines.append(" → ".join(chain))
    return lines


@functools.lru_cache(maxsize=4096)  # a session's working turns are cleaned again at every Fetch until compacted
def span_turn(turn_id: str, role: str, tool_name: str, raw: str, speaker: str = "") -> SpanTurn:
    return SpanTurn(turn_id, role, tool_name, clean(raw), speaker)
