"""Ingest use cases: what happens to one turn, and to one forget request."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

from acm.domain.entities import Candidate, aliases, normalise_name, owner_key, resolve_mention
from acm.domain.extract import Mention, typed_relations
from acm.domain.facts import (
    RECORD_KIND,
    FactDraft,
    in_context,
    is_lasting,
    normalised,
    replied_sentence,
    slot_of,
)
from acm.domain.graph import GraphChanges, Mentions
from acm.domain.identifiers import identifiers
from acm.domain.injection_meaning import REASON as BY_MEANING
from acm.domain.injection_meaning import without_orders
from acm.domain.models import (
    Entity,
    Layer,
    Memory,
    MemoryStatus,
    Relation,
    Role,
    Turn,
    metadata_pairs,
    stable_id,
    utcnow,
)
from acm.domain.placement import Placement, place, promoted
from acm.domain.records import MAX_RECORD_WEIGHT, Record, merged, parse_fields, weight
from acm.domain.schema import AgentSchema
from acm.domain.scope import ForgetLevel, Owner, Scope, Tier
from acm.domain.tokens import TokenCounter
from acm.injection_judge import InjectionJudge, judge_doubtful
from acm.ports.embedder import Embedder
from acm.ports.entities import EntityRegistry
from acm.ports.injection import InjectionMeaning
from acm.ports.owners import SchemaSource
from acm.ports.stores import AuditLog, Cache, MemoryRepo
from acm.prefetch_state import bump_generations, forget_prefetch
from acm.session_memory import touch_session
from acm.telemetry import traceparent_of_current_span
from acm_ingest.consolidate import ExpireMemories, ExpiryEvents
from acm_ingest.embedding import EmbedBatches
from acm_ingest.llm_extraction import LlmFactExtractor, may_leave
from acm_ingest.outdated import outdated_statements
from acm_ingest.pipeline import TurnPlan, pii_rules, plan_turn, redacted_turn

MAX_RELATED_PAIRS = 45  # co-mention edges per turn: enough for 10 entities, bounded for long tool outputs
SEEN_ERRORS_KEY = "gate_seen_errors"
MAX_SEEN_ERRORS = 256
SEEN_ERRORS_TTL_S = 7 * 86400.0
# The session total at which the next compaction request may go: past the soft limit, a request goes again every
# COMPACTION_STEP of the budget, not on every turn and not only when a turn crosses the limit. The total only
# grows (ingest's own key); compact compacts only a session whose working context is over the soft limit.
COMPACTION_DUE_KEY = "compaction_due_at"
COMPACTION_STEP = 0.1
RECENT_TURNS_READ = 8  # turns a tool output is read against (its call, the ids just named)
RECORD_PLACEMENT = Placement(RECORD_KIND, Tier.USER, Layer.MID)  # session data, never promoted to LONG


@dataclass(frozen=True, slots=True)
class WrittenMemory:
    """A memory just written, with what retrieve indexes it by: its vector and the entities it names."""

    memory: Memory
    embedding: Sequence[float] = ()  # empty: not searched by vector (a turn's preview, a version made stale)
    entity_names: tuple[str, ...] = ()


@dataclass
class Changes:
    """What one turn or edit changed in ingest's memories store, published once after the writes (one
    MemoriesWritten): retrieve's projection applies it, and with a job id it finishes the job."""

    written: dict[str, WrittenMemory] = field(default_factory=dict)  # by memory id: its last version
    authored: list[str] = field(default_factory=list)  # shared memories the scope's user is an author of
    erased: list[str] = field(default_factory=list)
    # What retrieve's graph learns (it owns the graph; ingest resolves entities in its own registry).
    graph: GraphChanges = field(default_factory=GraphChanges)
    # Facts written whose vectors are still to be computed (text to embed, entities named): embedded for the
    # turns of a micro-batch at once (IngestTurn.finish), then `indexed`.
    unembedded: list[tuple[Memory, str, tuple[str, ...]]] = field(default_factory=list)

    def wrote(self, memories: Iterable[Memory]) -> None:
        """Memories written without a new vector (a vector published before stays in the index)."""
        for m in memories:
            self.written[m.memory_id] = WrittenMemory(m)

    def indexed(self, written: Iterable[WrittenMemory]) -> None:
        for w in written:
            self.written[w.memory.memory_id] = w


@dataclass
class TurnWrites:
    """One turn written to ingest's stores, its event not published yet (IngestTurn.write)."""

    scope: Scope
    job_id: str
    traceparent: str  # the follow-up events' parent
    changes: Changes
    counts: dict[str, int]


class Events(ExpiryEvents, Protocol):
    """What ingest publishes (acm_ingest.events.BusEvents)."""

    async def memories_written(
        self,
        scope: Scope,
        event_id: str,
        job_id: str,
        changes: Changes,
        counts: Mapping[str, int],
        embedding_model: str,
        traceparent: str,
    ) -> None:
        """Every change to the memories store, for retrieve's projection and vector index (MemoriesWritten)."""

    async def compaction_requested(
        self, scope: Scope, session_tokens: int, budget_tokens: int, traceparent: str, turn_id: str = ""
    ) -> None:
        """The session is over its soft limit: compact is asked to shrink it (CompactionRequested); ``turn_id``:
        the turn that took it there."""


@dataclass
class IngestTurn:
    memories: MemoryRepo
    entities: EntityRegistry  # ingest's own; the graph is retrieve's, told through the event
    cache: Cache
    events: Events
    embedder: Embedder
    tokens: TokenCounter
    schemas: SchemaSource  # the architect's (acm.ports.owners)
    audit: AuditLog
    extractor: LlmFactExtractor | None = None  # set when an LLM endpoint is configured
    judge: InjectionJudge | None = None  # judges doubtful facts, when an LLM endpoint is configured
    meaning: InjectionMeaning | None = None  # the injection check by meaning (ACM_INJECTION_MEANING)
    expire: ExpireMemories | None = None  # the consolidator's TTL sweep, run for the writing user
    now: Callable[[], datetime] = utcnow  # the clock TTLs count on (a test advances its own)
    secret_model: bool = True  # the learned second opinion for secrets after the rules (ACM_SECRET_MODEL)
    # Turns handled concurrently (a micro-batch) share embedder calls.
    _batches: EmbedBatches = field(init=False, repr=False)
    _meaning_batches: EmbedBatches = field(init=False, repr=False)
    _other_batches: EmbedBatches | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._batches = EmbedBatches(self.embedder)
        # The meaning check's pieces join the facts' embedder call when both use one model; a model of its own
        # (another ACM_EMBEDDER than its weights fit; its multilingual one) gets calls of its own, batched over the
        # turns in flight too.
        meaning = self.meaning
        own = meaning is not None and meaning.embedder.name != self.embedder.name
        self._meaning_batches = EmbedBatches(meaning.embedder) if own and meaning else self._batches
        other = meaning.other_embedder if meaning else None
        self._other_batches = EmbedBatches(other) if other else None

    async def __call__(self, turn: Turn, job_id: str, traceparent: str) -> dict[str, int]:
        """Writes the turn, then publishes what it changed with the job's counts (also when nothing was kept:
        the event finishes the job)."""
        written = await self.write(turn, job_id, traceparent)
        await self.embed([written])
        await self.publish(written)
        return written.counts

    async def write(self, turn: Turn, job_id: str, traceparent: str) -> TurnWrites:
        """The turn's writes (memories, registry, session state); its facts' vectors and its event are left to
        `embed` and `publish`, which a micro-batch runs for all its turns at once."""
        # Follow-up events are children of the span handling this turn (the consumer span); the turn's
        # own traceparent is their parent only when no span is current (called outside a consumer).
        parent = traceparent_of_current_span() or traceparent
        changes = Changes()
        counts = await self._ingest(turn, parent, changes)
        return TurnWrites(turn.scope, job_id, parent, changes, counts)

    async def embed(self, turns: Sequence[TurnWrites]) -> None:
        """The vectors of every fact the turns wrote, in one embedder call (one ONNX batch)."""
        pending = [u for t in turns for u in t.changes.unembedded]
        vectors = await self._batches.embed([text for _, text, _ in pending])
        at = 0
        for t in turns:
            mine, at = vectors[at : at + len(t.changes.unembedded)], at + len(t.changes.unembedded)
            t.changes.indexed(
                WrittenMemory(m, v, names) for (m, _, names), v in zip(t.changes.unembedded, mine, strict=True)
            )
            t.changes.unembedded.clear()

    async def publish(self, turn: TurnWrites) -> None:
        """What the turn changed, with the job's counts (MemoriesWritten), once its facts were embedded."""
        # One event id per job: a redelivered turn publishes the same event again, and consumers dedupe it.
        await self.events.memories_written(
            turn.scope,
            stable_id("memories", turn.job_id),
            turn.job_id,
            turn.changes,
            turn.counts,
            self.embedder.name,
            turn.traceparent,
        )

    async def _orders(self, meaning: InjectionMeaning, text: str) -> tuple[str, ...]:
        """The orders ``meaning`` finds in ``text``; its pieces join the embedder call of the turns in flight
        (EmbedBatches: their pieces, and their facts when one model embeds both), not a call of their own."""
        pieces = meaning.pieces(text)
        vectors = await self._meaning_batches.embed(pieces.read)
        other = await self._other_batches.embed(pieces.other) if self._other_batches and pieces.other else []
        return meaning.orders_in(text, pieces, vectors, other)

    async def _ingest(self, turn: Turn, parent: str, changes: Changes) -> dict[str, int]:
        scope = turn.scope
        schema = await self.schemas.latest(scope)
        seen = await self._seen_errors(scope)
        # Every string the turn carries (content, metadata, tool name, JSON decoded) is redacted before any
        # step reads it: the gateway did so already, a direct Kafka publisher may not have.
        rules = pii_rules(schema, self.secret_model)
        turn, redacted = redacted_turn(turn, rules)
        call_key, named = await self._before(turn)
        # One pass: the plan reads the redacted turn and its counts (docs/experiments.md, issue 20).
        plan = plan_turn(turn, schema, frozenset(seen), call_key, named, self.secret_model, redacted)
        if self.meaning is not None and plan.gate.keep and not plan.flagged and plan.text:
            # The rules cleared it; an order to the agent in other words is one still (acm.domain.injection_meaning).
            # Only the order goes: the turn stays a flagged episode, its other facts are kept as doubtful ones. (A
            # turn the rules flag keeps no fact: they read its sentences together, an authority claim in one and the
            # order in the next, so a split would keep the attack's other half; docs/privacy.md.)
            orders = await self._orders(self.meaning, plan.text)
            if orders:
                plan = replace(plan, poisoning=(BY_MEANING,), facts=without_orders(plan.facts, orders), shown=plan.text)
        counts = {f"redacted_{kind}": n for kind, n in plan.redactions.items()}
        if not plan.gate.keep:
            return {"dropped": 1, f"dropped_{plan.gate.reason}": 1}
        if plan.gate.fingerprint:
            await self._remember_error(scope, seen, plan.gate.fingerprint)

        owner = scope.owner(Tier.USER)
        turn_memory = self._turn_memory(turn, plan, owner, schema.version)
        changes.wrote([turn_memory])  # written with the turn's facts, in one transaction (_facts)
        await touch_session(self.cache, scope)
        await self._account(scope, turn.turn_id, turn_memory.token_count, schema, parent)
        if plan.flagged:
            await self.audit.record(
                scope.client_id, "turn.flagged", f"turn {turn.turn_id}: {', '.join(plan.poisoning)}"
            )
            counts["flagged"] = 1
            if not plan.facts:
                await self.memories.upsert([turn_memory])
                return {**counts, "turns": 1}

        typed: tuple[tuple[str, str, str], ...] = ()
        # A flagged turn's facts are what is left beside its order; the extractor would read the order again.
        if self.extractor is not None and may_leave(turn) and not plan.flagged:
            extraction = await self.extractor.extract(turn, plan, rules)
            plan = replace(plan, facts=extraction.facts)
            typed = extraction.relations
            counts.update(extraction.counts)
        if self.judge is not None and may_leave(turn):
            # Doubtful (untrusted) facts go to the LLM judge: orders dropped, cleared ones normal; on a timeout
            # or an invalid answer they stay untrusted (acm.injection_judge).
            judged, judge_counts = await judge_doubtful(self.judge, plan.facts, turn.role.value)
            plan = replace(plan, facts=tuple(judged))
            counts.update(judge_counts)
        kept = schema_kept_facts(schema, plan)
        facts, others = await self._facts(turn, kept, scope, schema, turn_memory)
        changes.wrote(others)
        authored = [f.memory_id for f in facts if f.owner.tier is not Tier.USER]
        await self.memories.add_authors(scope, authored)
        changes.authored.extend(authored)
        mentions_by_fact = [draft.mentions for draft, _ in kept]
        entities = await self._resolve_entities(scope, owner, [m for ms in mentions_by_fact for m in ms])
        relations = []
        for fact, ms in zip(facts, mentions_by_fact, strict=True):
            linked = tuple(dict.fromkeys(entities[m.text.lower()].entity_id for m in ms))
            if linked:
                changes.graph.mentions.append(Mentions(fact.owner, fact.memory_id, linked, fact.session_id))
        turn_entities = list({e.entity_id: e for e in entities.values()}.values())
        # Every entity the turn names, not only new ones: retrieve's graph may meet this event before an earlier
        # one (another session's partition), and a mention or relation needs both its ends there.
        changes.graph.entities.extend(turn_entities)
        for a, b in itertools.islice(itertools.combinations(turn_entities, 2), MAX_RELATED_PAIRS):
            relations.append(Relation(a.entity_id, b.entity_id, "co_mentioned", facts[0].memory_id, owner))
        # Typed relations: those a sentence states between two of its mentions (rules, each tied to its own
        # fact), and those the optional LLM extractor returned for the turn.
        stated = [
            (triple, fact.memory_id)
            for fact, (draft, _) in zip(facts, kept, strict=True)
            for triple in typed_relations(draft.sentence, draft.mentions)
        ]
        if facts:
            stated += [(triple, facts[0].memory_id) for triple in typed]
        for (subject, predicate, obj), memory_id in stated:
            a_ent, b_ent = entities.get(subject.lower()), entities.get(obj.lower())
            if a_ent is not None and b_ent is not None and a_ent.entity_id != b_ent.entity_id:
                relations.append(Relation(a_ent.entity_id, b_ent.entity_id, predicate, memory_id, owner))
        changes.graph.relations.extend(relations)
        # Turn previews are not search results; facts are, so only they make a prefetched bundle stale.
        await invalidate_prefetch(self.cache, scope, {f.owner for f in facts})
        replied_to = await self._replied_to(turn, plan.speaker) if facts else ""
        changes.unembedded.extend(
            (f, in_context(f.text, replied_to), tuple(m.text for m in ms))
            for f, ms in zip(facts, mentions_by_fact, strict=True)
        )
        if self.expire is not None:
            expired = await self.expire(scope, schema.retention, self.now(), parent)
            if expired:
                counts["expired"] = expired
        not_kept = len(plan.facts) - len(kept)
        return {
            **counts,
            **({"facts_not_in_schema": not_kept} if not_kept else {}),
            "turns": 1,
            "facts": len(facts),
            "entities": len(turn_entities),
            "relations": len(relations),
        }

    def _turn_memory(self, turn: Turn, plan: TurnPlan, owner: Owner, schema_version: int) -> Memory:
        text = f"{plan.speaker}: {plan.shown or plan.text}"
        return Memory(
            # Deterministic: a redelivered turn rewrites the same memory instead of adding one.
            memory_id=turn_memory_id(owner, turn.turn_id),
            owner=owner,
            text=text,
            layer=Layer.SHORT,
            kind="flagged_episode" if plan.flagged else "turn",
            source_turn_ids=(turn.turn_id,),
            created_at=turn.occurred_at,
            agent_id=turn.scope.agent_id,
            session_id=turn.scope.session_id,
            valid_from=turn.occurred_at,
            updated_at=self.now(),  # TTLs count from when ACM wrote it, not when the turn happened
            token_count=self.tokens.count(text),
            schema_version=schema_version,
            role=turn.role.value,
            tool_name=turn.tool_name,
            trust=turn_trust(plan),
            metadata=metadata_pairs(turn.metadata),
        )

    async def _facts(
        self,
        turn: Turn,
        kept: Sequence[tuple[FactDraft, Placement]],
        scope: Scope,
        schema: AgentSchema,
        turn_memory: Memory,
    ) -> tuple[list[Memory], list[Memory]]:
        """One memory per fact, placed by the schema; the same fact said again is the same memory,
        mentioned once more. Also returns the older facts they made stale. Written in one upsert with the
        turn's own memory (one transaction a turn, not three)."""
        schema_version = turn_memory.schema_version
        fresh: list[Memory] = []
        kept = [(await self._merged(scope, draft), placed) for draft, placed in kept]
        for draft, placed in kept:
            owner = scope.owner(placed.tier)
            memory_id = stable_id(owner.client_id, owner.customer_id, owner.user_id, "fact", normalised(draft.text))
            fresh.append(
                Memory(
                    memory_id=memory_id,
                    owner=owner,
                    text=draft.text,
                    layer=placed.layer,
                    kind=placed.category,
                    source_turn_ids=(turn.turn_id,),
                    created_at=turn.occurred_at,
                    agent_id=turn.scope.agent_id,
                    session_id=turn.scope.session_id,
                    valid_from=draft.valid_from,
                    valid_to=draft.valid_to,
                    updated_at=self.now(),
                    token_count=self.tokens.count(draft.text),
                    schema_version=schema_version,
                    slot=draft.slot,
                    role=turn.role.value,
                    tool_name=turn.tool_name,
                    trust=draft.trust,
                    metadata=metadata_pairs(turn.metadata),
                )
            )
        existing = {m.memory_id: m for m in await self.memories.get(turn.scope, [f.memory_id for f in fresh])}
        facts = []
        for fact in fresh:
            old = existing.get(fact.memory_id)
            if old is not None:
                if turn.turn_id in old.source_turn_ids:  # a redelivery: nothing new happened
                    fact = old
                else:
                    source = old if not old.trusted or fact.trusted else fact  # the least trusted one stands
                    fact = replace(
                        old,
                        source_turn_ids=(*old.source_turn_ids, turn.turn_id),
                        mention_count=old.mention_count + 1,
                        updated_at=self.now(),
                        role=source.role,
                        tool_name=source.tool_name,
                        trust=source.trust,
                        metadata=metadata_pairs(dict(old.metadata), dict(fact.metadata)),
                        layer=restated_layer(schema, old, source.trusted, old.session_id != turn.scope.session_id),
                    )
            facts.append(fact)
        values = {f.memory_id: d.value for f, (d, _) in zip(fresh, kept, strict=True)}
        unique = list({f.memory_id: f for f in facts}.values())
        superseded = await self._supersede(turn.scope, unique, values)
        # A record's new version also outdates the prose and calls that stated its old values (other shapes).
        superseded |= await outdated_statements(self.memories, turn.scope, superseded, unique, self.now())
        others = [m for m in superseded.values() if m.memory_id not in values]
        await self.memories.upsert([turn_memory, *(superseded.get(f.memory_id, f) for f in unique), *others])
        return [superseded.get(f.memory_id, f) for f in facts], others

    async def _merged(self, scope: Scope, draft: FactDraft) -> FactDraft:
        """A tool's record that updates one already remembered: the fields it repeats take the new values,
        those it omits keep theirs ({po_id, amount} after {po_id, vendor, amount, status})."""
        if draft.record is None or not draft.slot:
            return draft
        current = await self.memories.active_in_slot(scope, draft.slot)
        if not current:
            return draft
        old_part = current[0].text.partition(": ")[2]
        fields = merged(parse_fields(old_part), draft.record.fields)
        record = Record(draft.record.key, fields)
        part = record.render()
        if weight(part) > MAX_RECORD_WEIGHT:
            return draft  # the merged record no longer fits one memory: the new result alone stands
        head = draft.text[: len(draft.text) - len(draft.sentence)]
        return replace(draft, text=head + part, sentence=part, value=part, record=record)

    async def _before(self, turn: Turn) -> tuple[str, frozenset[str]]:
        """For a tool output, from the session's newest earlier turns: the identifier named by the call it
        answers ("get_customer({"customer_id": "cus_4821"})"), and the ids the user and agent named (their
        records are what the session shows of the output first)."""
        if turn.role is not Role.TOOL or not turn.scope.session_id:
            return "", frozenset()
        call = f"{turn.tool_name}(" if turn.tool_name else ""
        key, named = "", set()
        for m in await self.memories.session_memories(turn.scope, RECENT_TURNS_READ, (Layer.SHORT,)):
            if m.kind != "turn" or m.created_at > turn.occurred_at or m.text.startswith("tool"):
                continue
            named |= set(identifiers(m.text))
            at = m.text.rfind(call) if call and not key else -1
            if at >= 0:
                found = identifiers(m.text[at + len(call) :].split(")\n", 1)[0])
                key = found[0] if found else ""
        return key, frozenset(named)

    async def _supersede(self, scope: Scope, facts: Sequence[Memory], values: dict[str, str]) -> dict[str, Memory]:
        """A fact stating a new value for a slot makes the older one stale (kept, pointing at the newer);
        a fact that arrives late, older than the current value, is stale from the start."""
        changed: dict[str, Memory] = {}
        for fact in facts:
            if not fact.slot or fact.status is not MemoryStatus.ACTIVE:
                continue
            for old in await self.memories.active_in_slot(scope, fact.slot):
                if old.memory_id == fact.memory_id or _value_of(old) == normalised(values[fact.memory_id]):
                    continue
                if not fact.trusted and old.trusted:
                    continue  # a doubtful statement never makes a trusted value stale
                # The later statement wins (when it was said, not the time it talks about, which is vaguer).
                new_at, old_at = fact.created_at, old.created_at
                if old_at <= new_at:
                    changed[old.memory_id] = replace(
                        old,
                        status=MemoryStatus.STALE,
                        superseded_by=fact.memory_id,
                        valid_to=fact.valid_from or new_at,
                        updated_at=self.now(),
                    )
                else:
                    changed[fact.memory_id] = replace(
                        fact, status=MemoryStatus.STALE, superseded_by=old.memory_id, valid_to=old_at
                    )
        return changed

    async def _resolve_entities(self, scope: Scope, owner: Owner, mentions: Sequence[Mention]) -> dict[str, Entity]:
        """Each mention → the one entity it denotes (found by alias, in scope) or a new one."""
        if not mentions:
            return {}
        keys = sorted({a for m in mentions for a in aliases(m.text, m.type)} | {m.text for m in mentions})
        known = {e.entity_id: e for e in await self.entities.find(scope, keys)}
        candidates = [
            Candidate(e.entity_id, e.name, e.type, frozenset(e.aliases), owner_key(e.owner)) for e in known.values()
        ]
        mine = owner_key(owner)
        resolved: dict[str, Entity] = {}
        changed: dict[str, Entity] = {}
        for m in mentions:
            if m.text.lower() in resolved:
                continue
            hit = resolve_mention(m.text, m.type, candidates, mine)
            if hit.entity_id is not None and hit.entity_id in known:
                entity = known[hit.entity_id]
                if entity.owner == owner and m.text not in entity.aliases and m.text != entity.name:
                    entity = replace(entity, aliases=(*entity.aliases, m.text))  # learn the new alias
                    known[entity.entity_id] = changed[entity.entity_id] = entity
            else:
                entity = Entity(
                    entity_id=stable_id(
                        owner.client_id, owner.customer_id, owner.user_id, m.type, normalise_name(m.text)
                    ),
                    owner=owner,
                    name=m.text,
                    type=m.type,
                    aliases=tuple(sorted(aliases(m.text, m.type))),
                )
                known[entity.entity_id] = changed[entity.entity_id] = entity
                candidates.append(
                    Candidate(entity.entity_id, entity.name, entity.type, frozenset(entity.aliases), mine)
                )
            resolved[m.text.lower()] = entity
        if changed:
            await self.entities.upsert(list(changed.values()))
        return {text: known[e.entity_id] for text, e in resolved.items()}  # each with every alias learned

    async def _replied_to(self, turn: Turn, speaker: str) -> str:
        """The question the turn answers: the last sentence of the session's previous turn, when someone else
        asked it (acm.domain.facts.replied_sentence); "" otherwise."""
        if not turn.scope.session_id:
            return ""
        this_turn = turn_memory_id(turn.scope.owner(Tier.USER), turn.turn_id)
        for m in await self.memories.session_memories(turn.scope, 3, (Layer.SHORT,)):
            if m.kind == "turn" and m.memory_id != this_turn and m.created_at <= turn.occurred_at:
                return replied_sentence(m.text, speaker)
        return ""

    async def _seen_errors(self, scope: Scope) -> list[str]:
        raw = await self.cache.get(scope, SEEN_ERRORS_KEY)
        return list(json.loads(raw)) if raw else []

    async def _remember_error(self, scope: Scope, seen: list[str], fingerprint: str) -> None:
        if fingerprint in seen:
            return
        kept = [*seen, fingerprint][-MAX_SEEN_ERRORS:]
        await self.cache.set(scope, SEEN_ERRORS_KEY, json.dumps(kept).encode(), SEEN_ERRORS_TTL_S)

    async def _account(self, scope: Scope, turn_id: str, added: int, schema: AgentSchema, traceparent: str) -> None:
        """The session's running token count; past the soft limit, compact is asked to shrink the session, again
        each time it grew by COMPACTION_STEP of the budget (compact skips a request while the session is under
        the limit)."""
        if not scope.session_id:
            return
        budget = schema.compaction.budget_tokens
        soft = int(budget * schema.compaction.soft_ratio)
        total = await self.cache.incr(scope, "session_tokens", added)
        if total < soft:
            return
        due = await self.cache.get(scope, COMPACTION_DUE_KEY)
        if due is not None and total < int(due):
            return
        await self.events.compaction_requested(scope, total, budget, traceparent, turn_id)
        step = max(int(budget * COMPACTION_STEP), 1)
        await self.cache.set(scope, COMPACTION_DUE_KEY, str(total + step).encode(), SEEN_ERRORS_TTL_S)


def turn_memory_id(owner: Owner, turn_id: str) -> str:
    """A turn's memory: deterministic per owner (a redelivery rewrites it; two users' equal ids never meet)."""
    return stable_id(owner.client_id, owner.customer_id, owner.user_id, "turn", turn_id)


def turn_trust(plan: TurnPlan) -> str:
    """A turn's own memory: an instruction when it was flagged (also when facts beside its order were kept),
    untrusted when any of its facts is."""
    if plan.flagged:
        return "instruction"
    return next((f.trust for f in plan.facts if f.trust != "normal"), "normal")


def restated_layer(schema: AgentSchema, old: Memory, trusted: bool, other_session: bool) -> Layer:
    """The layer of a memory said again. A fact said again in another session (or often enough) is not a
    session fact any more (MID → LONG); a tool's record stays in its session; a fact any doubtful source said
    (acm.domain.instruction: an authority or rule claim) never lasts, and one that did goes back to MID."""
    if old.kind == RECORD_KIND:
        return old.layer
    if not trusted:
        return Layer.MID if old.layer is Layer.LONG else old.layer
    return promoted(schema, old.layer, old.mention_count + 1, other_session)


def schema_kept_facts(schema: AgentSchema, plan: TurnPlan) -> list[tuple[FactDraft, Placement]]:
    """The drafts the agent's schema keeps, each with its category, tier and layer (the schema decides
    what is remembered: a category it does not list is not kept)."""
    kept = []
    for draft in plan.facts:
        if draft.slot.startswith("record:") or draft.record is not None:
            kept.append((draft, RECORD_PLACEMENT))
            continue
        placed = place(schema, draft.sentence, is_lasting(draft), bool(draft.slot))
        if placed is not None and draft.trust != "normal" and placed.layer is Layer.LONG:
            placed = replace(placed, layer=Layer.MID)  # a doubtful statement is never a lasting one
        if placed is not None:
            kept.append((draft, placed))
    return kept


async def invalidate_prefetch(cache: Cache, scope: Scope, owners: set[Owner]) -> None:
    """A write makes every prefetched bundle that could see it stale (acm.prefetch_state)."""
    if owners:
        await bump_generations(cache, scope, {o.tier for o in owners})


def _value_of(memory: Memory) -> str:
    """The value an existing slot fact states, re-read from its text (after "<speaker>: ")."""
    speaker, _, sentence = memory.text.partition(": ")
    found = slot_of(speaker, sentence)
    return normalised(found[1]) if found else ""


@dataclass
class ForgetScope:
    memories: MemoryRepo
    entities: EntityRegistry  # the graph is retrieve's: it erases its own on the same event
    cache: Cache | None = None  # prefetched bundles of the scope are dropped with it
    events: ExpiryEvents | None = None  # where the erased shared-tier memories' ids go, for their vectors

    async def __call__(self, scope: Scope, level: ForgetLevel) -> dict[str, int]:
        # A user's Forget also takes what that user alone said at the customer and client tiers (the memories
        # record their authors; docs/privacy.md); what others said too stays, without this user as an author.
        shared = await self.memories.forget_authored(scope) if level is ForgetLevel.USER else []
        erased = await self.memories.forget(scope, level)
        await self.entities.forget(scope, level)
        if shared and self.events is not None:
            await self.events.memories_expired(scope, shared, stable_id("forgotten", *shared))
        if self.cache is not None:
            await forget_prefetch(self.cache, scope)  # every tier's pools, other users' included
        return {"memories_erased": erased + len(shared), **({"shared_erased": len(shared)} if shared else {})}
