"""What one turn becomes, decided without IO: gate → redaction → poisoning guard → facts.

The IO around it (schema, seen errors, entity lookups, writes) lives in usecases.py."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from acm.domain.compaction.noise import clean
from acm.domain.facts import FactDraft, facts_from_turn, record_drafts
from acm.domain.gate import GateDecision, GateRules, decide, is_chit_chat
from acm.domain.instruction import Trust, instruction_verdict
from acm.domain.models import Role, Turn
from acm.domain.pii import PiiRules, Redaction, redact, redact_turn
from acm.domain.records import Record, cut, outside_json, tool_records, weight
from acm.domain.schema import AgentSchema
from acm.domain.text import strip_control

# Turn.metadata key for an image the turn shares: what it shows, as the sender's client or a captioning
# model described it (alt text; "a photo of a cup with a dog face on it"). It is text of the turn: a line of
# its own after the content, so it is a fact and part of what the session shows. The sender writes it; the
# instruction check reads it apart from the content, as it is not the speaker's own words (a description's
# "that says ..." must not join the content's wording into an order, nor hide one).
IMAGE_CAPTION = "image_caption"

# The most a turn memory holds (a turn as the session's context shows it, ~300 tokens): a 64 KiB tool output
# is its records, each a memory of its own, and the turn shows the first of them.
MAX_TURN_WEIGHT = 900


@dataclass(frozen=True, slots=True)
class TurnPlan:
    gate: GateDecision
    speaker: str
    text: str = ""  # redacted content: the only form of the turn that is ever stored or published
    redactions: dict[str, int] = field(default_factory=dict)
    poisoning: tuple[str, ...] = ()  # reasons, when the turn tries to change rules or permissions
    facts: tuple[FactDraft, ...] = ()
    shown: str = ""  # the turn as its session's context shows it: records rendered, at most MAX_TURN_WEIGHT

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


def pii_rules(schema: AgentSchema, secret_model: bool = True) -> PiiRules:
    """The schema's privacy choices; ``secret_model``: the learned second opinion for secrets (ACM_SECRET_MODEL)."""
    return PiiRules.of(schema.privacy, secret_model)


def _speaker_of(turn: Turn) -> str:
    """A tool turn names its tool ("tool[erp.create_po]"), so compaction can write "tool → result" chains."""
    if turn.role is Role.TOOL and turn.tool_name:
        return f"tool[{turn.tool_name}]"
    return turn.role.value


def shown_turn(text: str, records: list[Record]) -> str:
    """What the turn memory keeps: the text (for a tool, what it wrote around its JSON), then the records one
    per line (compact, protocol noise gone); cut at MAX_TURN_WEIGHT with a note of what is left (every record
    and sentence is a memory of its own)."""
    lines = ([text] if text.strip() else []) + [r.render() for r in records]
    out: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        if used + weight(line) > MAX_TURN_WEIGHT:
            room = MAX_TURN_WEIGHT - used
            if room > 80:
                out.append(cut(line, room - 2).rstrip() + " …")
            left = f"{len(lines) - i} more records" if records and i >= len(lines) - len(records) else "the rest"
            out.append(f"… [{left} in memories]")
            break
        out.append(line)
        used += weight(line) + 1
    return "\n".join(out)


def stored_view(role: Role, text: str, records: list[Record], named: frozenset[str] = frozenset()) -> str:
    """The turn as its session keeps it: a tool's output without its protocol noise (status lines, headers,
    debug and trace fields, log lines) and its JSON as records — those whose ids were just ``named`` first, as
    the session's pins follow them — so the room goes to what it said; people's words as they wrote them."""
    if role is not Role.TOOL:
        return shown_turn(text, [])
    ordered = sorted(records, key=lambda r: r.key not in named) if named else records
    return shown_turn(clean(outside_json(text) if records else text), ordered)


def caption_line(caption: str) -> str:
    """How a shared image's caption reads as a line of its turn ("" without one)."""
    caption = " ".join(caption.split())
    return f"[shared an image: {caption}]" if caption else ""


def redacted_turn(turn: Turn, rules: PiiRules) -> tuple[Turn, dict[str, int]]:
    """The turn as plan_turn reads it (control bytes out of its content and image caption, so none hides a
    secret from the scan), every string it carries redacted in one pass (acm.domain.pii.redact_turn: JSON
    strings read after their keys), with the placeholders inserted by kind: plan_turn's ``redacted``."""
    caption = turn.metadata.get(IMAGE_CAPTION)
    metadata = turn.metadata if caption is None else {**turn.metadata, IMAGE_CAPTION: strip_control(caption)}
    return redact_turn(replace(turn, content=strip_control(turn.content), metadata=metadata), rules)


def _joined(content: str, caption: str) -> str:
    return "\n".join(part for part in (content, caption) if part.strip())


_SEVERITY = (Trust.NORMAL, Trust.UNTRUSTED, Trust.INSTRUCTION)


def plan_turn(
    turn: Turn,
    schema: AgentSchema,
    seen_errors: frozenset[str],
    call_key: str = "",
    named: frozenset[str] = frozenset(),
    secret_model: bool = True,
    redacted: Mapping[str, int] | None = None,
) -> TurnPlan:
    """``call_key``: the identifier the call that this tool output answers named (a user's record often
    omits its own id: get_user(user_id=X) returns {name, email, …}); ``named``: ids the session's latest user
    and agent turns named, whose records the turn shows first; ``redacted``: the turn is redacted_turn's
    already, with these counts (ingest's one pass), so it is not scanned again."""
    speaker = turn.metadata.get("speaker") or _speaker_of(turn)
    # Terminal escapes (whole) and control bytes are not content.
    content, caption = strip_control(turn.content), caption_line(strip_control(turn.metadata.get(IMAGE_CAPTION, "")))
    decision = decide(_joined(content, caption), turn.role.value, gate_rules(schema), seen_errors)
    if not decision.keep:
        return TurnPlan(decision, speaker)
    # Redact before anything else looks at the text, so no later step (or log) sees a secret.
    if redacted is not None:
        # A second scan of the raw JSON text, without its keys, only found ids that look like cards
        # ("receipt_number": "8794332792289267") and counted them on top (docs/experiments.md, issue 20).
        said, shared = Redaction(content, {}), Redaction(caption, {})
        redaction = Redaction(_joined(content, caption), dict(redacted))
    else:
        rules = pii_rules(schema, secret_model)
        said, shared = redact(content, rules), redact(caption, rules)
        redaction = replace(
            said,
            text=_joined(said.text, shared.text),
            counts=dict(Counter(said.counts) + Counter(shared.counts)),
        )
    verdict = max(
        instruction_verdict(said.text, turn.role.value),
        instruction_verdict(shared.text, turn.role.value),
        key=lambda v: _SEVERITY.index(v.trust),
    )
    if verdict.flagged:
        # Kept only as a flagged episode of the session: never a fact, never retrievable.
        return TurnPlan(decision, speaker, redaction.text, redaction.counts, verdict.reasons, shown=redaction.text)
    records = tool_records(redaction.text) if turn.role is Role.TOOL else []
    if records:
        keyless = [i for i, r in enumerate(records) if not r.key]
        if call_key and len(keyless) == 1 and len(records) == 1:
            records[0] = Record(call_key, records[0].fields)
        # What the tool wrote around its JSON ("PO-7 status is now approved.") is said too: facts, and shown.
        around = clean(outside_json(redaction.text))
        drafts = record_drafts(speaker, records, turn.occurred_at)
        drafts += facts_from_turn(speaker, around, turn.occurred_at) if around else []
        shown = stored_view(turn.role, redaction.text, records, named)
        return TurnPlan(decision, speaker, redaction.text, redaction.counts, (), tuple(drafts), shown)
    facts = facts_from_turn(speaker, redaction.text, turn.occurred_at)
    if verdict.trust is not Trust.NORMAL:
        # A doubtful turn (an authority or policy claim without an order): every fact passes the check on its
        # own, and is kept marked untrusted or dropped as an order.
        checked = [(f, instruction_verdict(f.sentence, turn.role.value)) for f in facts]
        facts = [replace(f, trust=v.trust.value) for f, v in checked if not v.flagged]
    if not facts and not is_chit_chat(redaction.text) and verdict.trust is Trust.NORMAL:
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
    shown = stored_view(turn.role, redaction.text, [])
    return TurnPlan(decision, speaker, redaction.text, redaction.counts, (), tuple(facts), shown)
