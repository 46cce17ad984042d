"""Optional fact extraction by an LLM (OpenAI-compatible endpoint), checked before it is trusted.

The deterministic plan (pipeline.py) is always computed first; when an endpoint is configured and the turn
may leave the machine, the model is asked for facts, entities and typed relations as JSON. The answer must
validate against ExtractedTurn's JSON schema (a malformed one is retried once with the reason), every
statement is redacted and poison-checked again (a model can echo an injected instruction), and any failure
falls back to the deterministic facts, counted in the job (`llm_fallback`) — never a silent loss."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time
from typing import Literal

from pydantic import BaseModel, Field

from acm.domain.extract import Mention, mentions
from acm.domain.facts import FactDraft
from acm.domain.instruction import instruction_verdict
from acm.domain.models import Turn
from acm.domain.pii import PiiRules, redact
from acm.ports.llm import Llm
from acm.structured import StructuredAnswerFailed, ask_structured
from acm_ingest.pipeline import TurnPlan

log = logging.getLogger("acm.ingest.llm")

EntityType = Literal["person", "organisation", "product", "plan", "id", "amount", "date", "place", "other"]
LOCAL_ONLY = "local_only"  # turn metadata: "true" keeps the turn away from any external endpoint


class ExtractedFact(BaseModel):
    statement: str = Field(min_length=3, max_length=400, description="one self-contained fact, third person")
    subject: str = Field("", max_length=80, description="who or what the fact is about")
    attribute: str = Field("", max_length=40, pattern=r"^[a-z_]*$", description="e.g. lives_in, status")
    value: str = Field("", max_length=120, description="the attribute's value, when the fact states one")
    on_date: date | None = Field(None, description="the absolute date the fact is about, if any")
    lasting: bool = Field(False, description="a preference or attribute that outlives the conversation")


class ExtractedEntity(BaseModel):
    name: str = Field(min_length=1, max_length=120)
    type: EntityType
    aliases: list[str] = Field(default_factory=list, max_length=10)


class ExtractedRelation(BaseModel):
    subject: str = Field(min_length=1, max_length=120)
    predicate: str = Field(min_length=2, max_length=40, pattern=r"^[a-z][a-z_]*$")
    object: str = Field(min_length=1, max_length=120)


class ExtractedTurn(BaseModel):
    facts: list[ExtractedFact] = Field(max_length=40)
    entities: list[ExtractedEntity] = Field(default_factory=list, max_length=60)
    relations: list[ExtractedRelation] = Field(default_factory=list, max_length=60)


SYSTEM = (
    "You extract long-term memory from one turn of a conversation between a user and an AI agent. "
    "Return only facts the turn states (never guess), each as one self-contained sentence in the third person "
    "naming its subject; resolve relative dates against the turn's timestamp. Ignore pleasantries. "
    "Redacted values appear as [REDACTED:...] and must stay redacted. Entities: people, organisations, "
    "products, plans, ids, amounts with currency, dates, places. Relations: subject, snake_case predicate, object."
)


@dataclass(frozen=True, slots=True)
class Extraction:
    facts: tuple[FactDraft, ...]
    relations: tuple[tuple[str, str, str], ...]  # (subject name, predicate, object name)
    counts: dict[str, int]


def may_leave(turn: Turn) -> bool:
    return turn.metadata.get(LOCAL_ONLY, "").lower() not in ("1", "true", "yes")


def _to_draft(fact: ExtractedFact, speaker: str, occurred_at: datetime, rules: PiiRules) -> FactDraft | None:
    statement = redact(fact.statement, rules).text.strip()
    verdict = instruction_verdict(statement)
    if verdict.flagged:
        return None
    when = datetime.combine(fact.on_date, time.min, tzinfo=UTC) if fact.on_date else occurred_at
    slot = f"{re.sub(r'[^a-z0-9]+', '_', fact.subject.casefold()).strip('_')}|{fact.attribute}"
    has_slot = bool(fact.subject and fact.attribute and fact.value)
    return FactDraft(
        trust=verdict.trust.value,
        text=f"{speaker}: {statement}",
        sentence=statement,
        valid_from=when,
        valid_to=None,
        mentions=tuple(mentions(statement)),
        slot=slot if has_slot else "",
        value=redact(fact.value, rules).text if has_slot else "",
    )


_MENTION_TYPE = {"id": "id", "amount": "amount"}  # every other entity type resolves as a name


def _with_entities(draft: FactDraft, entities: list[ExtractedEntity]) -> FactDraft:
    """Entities the model named in this statement that the rules did not find, attached as mentions so
    entity resolution links them."""
    known = {m.text.casefold() for m in draft.mentions}
    sentence = draft.sentence.casefold()
    extra = tuple(
        Mention(e.name, _MENTION_TYPE.get(e.type, "name"))
        for e in entities
        if e.name.casefold() in sentence and e.name.casefold() not in known
    )
    return replace(draft, mentions=draft.mentions + extra) if extra else draft


@dataclass
class LlmFactExtractor:
    llm: Llm
    attempts: int = 2

    async def extract(self, turn: Turn, plan: TurnPlan, rules: PiiRules) -> Extraction:
        """The model's facts, or the plan's own facts with the reason counted."""
        prompt = (
            f"Turn timestamp: {turn.occurred_at.isoformat()}\nSpeaker: {plan.speaker} ({turn.role.value})\n"
            f"Turn:\n{plan.text}"
        )
        try:
            answer = await ask_structured(self.llm, ExtractedTurn, system=SYSTEM, prompt=prompt, attempts=self.attempts)
        except StructuredAnswerFailed as failed:
            log.warning("LLM extraction fell back to rules for turn %s: %s", turn.turn_id, failed)
            return Extraction(plan.facts, (), {"llm_fallback": 1})
        drafts = [_to_draft(f, plan.speaker, turn.occurred_at, rules) for f in answer.facts]
        kept = tuple(_with_entities(d, answer.entities) for d in drafts if d is not None)
        relations = tuple((r.subject, r.predicate, r.object) for r in answer.relations)
        counts = {"llm_facts": len(kept)}
        if len(kept) < len(drafts):
            counts["llm_facts_rejected"] = len(drafts) - len(kept)
        if not kept and plan.facts:
            # The model found nothing where the rules found facts: keep the rules' facts rather than lose them.
            return Extraction(plan.facts, relations, {**counts, "llm_fallback": 1})
        return Extraction(kept, relations, counts)
