"""What one turn becomes, decided without IO: gate → redaction → poisoning guard → facts.

The IO around it (schema, seen errors, entity lookups, writes) lives in usecases.py."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from acm.domain.facts import FactDraft, facts_from_turn
from acm.domain.gate import GateDecision, GateRules, decide, is_chit_chat
from acm.domain.models import Role, Turn
from acm.domain.pii import PiiRules, redact
from acm.domain.poison import inspect
from acm.domain.schema import AgentSchema

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class TurnPlan:
    gate: GateDecision
    speaker: str
    text: str = ""  # redacted content: the only form of the turn that is ever stored or published
    redactions: dict[str, int] = field(default_factory=dict)
    poisoning: tuple[str, ...] = ()  # reasons, when the turn tries to change rules or permissions
    facts: tuple[FactDraft, ...] = ()

    @property
    def flagged(self) -> bool:
        return bool(self.poisoning)


def gate_rules(schema: AgentSchema) -> GateRules:
    g = schema.gate
    return GateRules(
        chit_chat=g.drop_chit_chat,
        log_noise=g.drop_log_noise,
        repeated_errors=g.drop_repeated_errors,
        seen_stack_traces=g.drop_seen_stack_traces,
    )


def pii_rules(schema: AgentSchema) -> PiiRules:
    return PiiRules(emails=schema.privacy.redact_emails, phones=schema.privacy.redact_phones)


def _speaker_of(turn: Turn) -> str:
    """A tool turn names its tool ("tool[erp.create_po]"), so compaction can write "tool → result" chains."""
    if turn.role is Role.TOOL and turn.tool_name:
        return f"tool[{turn.tool_name}]"
    return turn.role.value


def plan_turn(turn: Turn, schema: AgentSchema, seen_errors: frozenset[str]) -> TurnPlan:
    speaker = turn.metadata.get("speaker") or _speaker_of(turn)
    content = _CONTROL.sub("", turn.content)  # NULs and other control bytes are not content
    decision = decide(content, turn.role.value, gate_rules(schema), seen_errors)
    if not decision.keep:
        return TurnPlan(decision, speaker)
    # Redact before anything else looks at the text, so no later step (or log) sees a secret.
    redaction = redact(content, pii_rules(schema))
    verdict = inspect(redaction.text)
    if verdict.flagged:
        # Kept only as a flagged episode of the session: never a fact, never retrievable.
        return TurnPlan(decision, speaker, redaction.text, redaction.counts, verdict.reasons)
    facts = facts_from_turn(speaker, redaction.text, turn.occurred_at)
    if not facts and not is_chit_chat(redaction.text):
        # A short answer ("No", "Yes, the 14th") is still what the turn said.
        facts = [
            FactDraft(
                text=f"{speaker}: {redaction.text.strip()}",
                sentence=redaction.text.strip(),
                valid_from=turn.occurred_at,
                valid_to=None,
                mentions=(),
            )
        ]
    return TurnPlan(decision, speaker, redaction.text, redaction.counts, (), tuple(facts))
