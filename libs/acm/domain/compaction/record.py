"""The record of one compaction: what it saved and whether the verifier passed (the API's Compaction)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime

from acm.domain.compaction.engine import CompactionResult
from acm.domain.models import new_id, utcnow


@dataclass(frozen=True, slots=True)
class CompactionRecord:
    compaction_id: str
    outcome: str  # compacted, unchanged, degraded, failed, superseded (another compaction won the swap)
    tokens_before: int
    tokens_after: int
    ratio: float
    verified: bool
    attempts: int
    missing_atoms: tuple[str, ...] = ()
    unsupported_atoms: tuple[str, ...] = ()
    turns_replaced: int = 0
    turns_verbatim: int = 0
    message: str = ""
    latency_ms: float = 0.0
    summariser: str = "deterministic"  # or the LLM model that wrote the accepted summary
    created_at: datetime = field(default_factory=utcnow)

    @classmethod
    def of(cls, result: CompactionResult, latency_ms: float, summariser: str = "deterministic") -> CompactionRecord:
        return cls(
            compaction_id=new_id(),
            outcome=result.outcome,
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
            ratio=round(result.ratio, 4),
            verified=result.verified,
            attempts=result.attempts,
            missing_atoms=result.missing,
            unsupported_atoms=result.unsupported,
            turns_replaced=result.turns_replaced,
            turns_verbatim=result.turns_verbatim,
            message=result.message,
            latency_ms=round(latency_ms, 3),
            summariser=summariser,
        )

    def to_json(self) -> str:
        d = asdict(self)
        d["created_at"] = self.created_at.isoformat()
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> CompactionRecord:
        d = json.loads(raw)
        d["created_at"] = datetime.fromisoformat(d["created_at"])
        d["missing_atoms"] = tuple(d["missing_atoms"])
        d["unsupported_atoms"] = tuple(d["unsupported_atoms"])
        return cls(**d)
