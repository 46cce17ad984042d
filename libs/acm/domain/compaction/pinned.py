"""The pinned entity state: typed, structured business state carried at the top of every context.

It holds what the agent acts on: the entities named in user and assistant turns and in tool calls, the
calls' own inputs, the user's goals and the schema's pinned fields. Records that a tool merely returns are
not pinned (they are memories, one per record, retrievable by id); a tool output only updates entities
already pinned (a purchase order's new amount). A summary never rewrites it; only a newer fact about the
same entity updates an attribute (the newer value replaces the older, and the entity remembers which turns
said so). It is shown within a cap, highest-ranked first (goals, the schema's entity types, then the
entities acted on most recently and most often); the rest is left to the memories."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from acm.domain import sentences as S
from acm.domain.compaction import atoms as A
from acm.domain.records import parse_fields

TYPES = {
    "PO": "purchase_order",
    "PR": "purchase_request",
    "INV": "invoice",
    "TCK": "ticket",
    "TKT": "ticket",
    "SR": "ticket",
    "CS": "ticket",
    "INC": "incident",
    "DEP": "deployment",
    "REL": "release",
    "CHG": "change",
    "CR": "change",
    "VND": "vendor",
    "CTR": "contract",
    "BUG": "issue",
}
CALL = "call"  # a tool call's latest inputs ("search_stock() (call): warehouse=BER-1, page=3")
NOTES = "notes"  # atoms pinned by the verifier's back-off
GOALS = "goals"  # the user's stated goals and constraints
SESSION = "session"  # the schema's pinned fields stated outside any entity ("branch: feature/login-fix")
# The value runs to the end of its clause: a comma, a semicolon, a sentence end, a closing brace (cleaned JSON).
_FIELD_VALUE = r"\s*(?:=|:|\bis\b|\bwas\b)\s*[\"']?([^,;\n\"'{}]{1,80}?)[\"']?\s*(?:[.,;]\s|[.,;}]?$|[,;}])"
MAX_GOALS = 8
MAX_ATTRIBUTES = 16  # per entity: the newest values stay
MAX_VALUE_CHARS = 480  # a record's nested value (its payment methods, its line items) is still one value
MAX_SOURCES = 8
MAX_REFS_RANKED = 8  # named by this many other pins: a hub, whatever its record's age
MAX_ACTS_RANKED = 1  # acted on at all ranks first; then recency decides: the order being changed now before the account
# "Dr. Ana Souza", "Ms Li Wei": the honorific is part of the name, never a name of its own.
_HONORIFIC = r"(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof|Sir|Dame)\.?\s+)?"
_PERSON = _HONORIFIC + r"[A-Z][a-z'’]+(?: [A-Z][a-z'’]+){0,2}"
_PAIR = re.compile(r"(?<![\w.])([a-z][a-z0-9_]{1,40})\s*=\s*((?:[^,;{}\[\]\n]|,(?=\d{3}))+)")
_PRINCIPAL = re.compile(
    r"\b(approved|assigned|owned|requested|reviewed|escalated|submitted|raised|created|resolved|acknowledged|"
    r"signed off|rejected)\s+(?:by|to)\s+(" + _HONORIFIC + r"[A-Z][a-z'’]+(?: [A-Z][a-z'’]+){0,2})"
)
_ROLE = re.compile(
    r"\b(approver|assignee|owner|requester|reviewer|on-call|commander|manager|vendor|supplier)"
    r"(?:\s+(?:for|of)\s+#?[\w-]+\d[\w-]*)?\s*(?:is|:|=)?\s*(" + _PERSON + ")"
)
# "assigned to X" and "assignee=X" are one attribute, so the newer statement replaces the older.
_ROLE_OF = {"assigned": "assignee", "owned": "owner", "requested": "requester", "reviewed": "reviewer"}
_DATE_KEY = re.compile(
    r"\b(due|deadline|eta|scheduled(?: for)?|expires?|delivery|window)\b[^.;,]{0,12}$", re.IGNORECASE
)
# A tool's record as ingest renders it (acm.domain.records): "<key> {field=value, …}".
_RECORD_LINE = re.compile(r"^(\S{1,80}) \{.*\}$")
_CLAUSE = re.compile(r"[;\n]+|(?<=\})\s*,?\s*(?=\{)")
# A tool call as a turn carries it: name(arguments), the arguments JSON rendered as k=v by noise.clean.
_CALL = re.compile(r"^([A-Za-z_][\w.-]{1,60})\(\s*\{?(.*?)\}?\s*\)$")
# An id's type from the field that names it: user_id → user, order_number → order.
_TYPED_FIELD = re.compile(r"^([a-z][a-z0-9]*?(?:_[a-z0-9]+)*?)_(?:id|number|code|ref)$")


@dataclass(frozen=True, slots=True)
class PinnedEntity:
    key: str
    type: str
    attributes: dict[str, str] = field(default_factory=dict)
    source_turn_ids: tuple[str, ...] = ()
    updated_at: datetime | None = None
    acts: int = 0  # turns in which the user named it or the agent called a tool with it
    # When each attribute's value was stated (a newer record memory replaces only values older than it).
    stated_at: dict[str, datetime] = field(default_factory=dict)

    def render(self) -> str:
        attrs = ", ".join(f"{k}={v}" if v else k for k, v in self.attributes.items())
        return f"{self.key} ({self.type})" + (f": {attrs}" if attrs else "")


@functools.lru_cache(maxsize=16384)
def _value_ids(value: str) -> frozenset[str]:
    """The ids a pin's value names (the same values are ranked at every Fetch: cached)."""
    return frozenset(A.ids(value))


def entity_type(key: str, field_name: str = "") -> str:
    """The type of an id: a known prefix (PO-… → purchase_order), else the field that named it (user_id →
    user), else record."""
    known = TYPES.get(key.split("-")[0].upper()) if "-" in key else None
    if known:
        return known
    m = _TYPED_FIELD.match(field_name.lower()) if field_name else None
    return m.group(1) if m else "record"


@dataclass(frozen=True, slots=True)
class Shown:
    """The pinned state as a context shows it: the highest-ranked pins that fit the cap."""

    text: str
    entities: tuple[PinnedEntity, ...]
    tokens: int
    dropped: int  # pins left out (they stay retrievable as memories)


@dataclass(frozen=True, slots=True)
class PinnedState:
    entities: dict[str, PinnedEntity] = field(default_factory=dict)

    def render(self) -> str:
        return render_entities(list(self.entities.values()))

    def ranked(self, entity_types: Sequence[str] = ()) -> list[PinnedEntity]:
        """Goals and the schema's pinned fields first, then the schema's entity types, then the entities acted
        on most often (up to MAX_ACTS_RANKED), then those the other pins' values name most (up to
        MAX_REFS_RANKED: the account whose records all point at it), then most recently; the verifier's notes
        last."""
        wanted = {t.lower() for t in entity_types}
        order = list(self.entities.values())
        position = {e.key: i for i, e in enumerate(order)}
        refs: Counter[str] = Counter(
            i
            for e in order
            if e.type != CALL
            for i in {x for v in e.attributes.values() for x in _value_ids(v)} - {e.key}
        )

        def rank(e: PinnedEntity) -> tuple[int, int, int, float, int, int]:
            group = 0 if e.type in (GOALS, SESSION) else 3 if e.key == NOTES else 1 if e.type in wanted else 2
            at = e.updated_at.timestamp() if e.updated_at else 0.0
            # What the user named or the agent called with more often (the user's account, the order being
            # changed) before what was only listed or mentioned; then the newest.
            return (
                group,
                -min(e.acts, MAX_ACTS_RANKED),
                -min(refs[e.key], MAX_REFS_RANKED),
                -at,
                -len(e.source_turn_ids),
                -position[e.key],
            )

        return sorted(order, key=rank)

    def trimmed(self, max_entities: int, entity_types: Sequence[str] = ()) -> PinnedState:
        """At most ``max_entities``, the highest-ranked (those left out stay retrievable as memories)."""
        if len(self.entities) <= max_entities:
            return self
        kept = {e.key for e in self.ranked(entity_types)[:max_entities]}
        return PinnedState({k: e for k, e in self.entities.items() if k in kept})

    def within(
        self,
        count: Callable[[str], int],
        max_tokens: int,
        max_entities: int,
        entity_types: Sequence[str] = (),
        hints: frozenset[str] = frozenset(),
    ) -> Shown:
        """The highest-ranked pins whose lines fit ``max_tokens`` (and ``max_entities``), shown in rank order.
        Never fails: with no room, nothing is shown and every pin is counted as dropped."""
        ranked = self.ranked(entity_types)
        header = count(PINNED_HEADER) if ranked else 0
        kept: list[PinnedEntity] = []
        sizes: list[int] = []
        used = header
        whole = {e.key: count(f"- {e.render()}\n") for e in ranked[:max_entities]}
        # One record must not take the whole cap while the pins after it go unseen (the account that lists the
        # ids the agent acts on next): when they do not all fit, a pin gets at most PIN_SHARE of the cap at first,
        # and the room left over is given back to the cut pins afterwards, highest-ranked first.
        share = max(int((max_tokens - header) * PIN_SHARE), MIN_TRUNCATED_TOKENS)
        crowded = header + sum(whole.values()) > max_tokens
        for e in ranked:
            if len(kept) >= max_entities:
                break
            size = whole[e.key] if e.key in whole else count(f"- {e.render()}\n")
            room = max_tokens - used
            if crowded and size > share:
                room = min(room, share)
            if size > room:
                # A large pin (a record with many fields) is shown with the attributes that fit, when a useful
                # part does; else a smaller, lower-ranked pin may still fit.
                cut = _truncated(e, room, count, hints)
                if cut is None:
                    continue
                e, size = cut, count(f"- {cut.render()}\n")
            kept.append(e)
            sizes.append(size)
            used += size
        for i, e in enumerate(kept):
            if "…" not in e.attributes:
                continue
            full = self.entities.get(e.key) or e
            spare = max_tokens - used + sizes[i]
            grown = full if whole.get(e.key, spare + 1) <= spare else _truncated(full, spare, count, hints)
            if grown is not None:
                size = count(f"- {grown.render()}\n")
                if size > sizes[i]:
                    kept[i], used, sizes[i] = grown, used - sizes[i] + size, size
        text = render_entities(kept)
        tokens = count(text) if text else 0
        while kept and tokens > max_tokens:  # the sum of the lines' counts was short
            kept.pop()
            text = render_entities(kept)
            tokens = count(text) if text else 0
        return Shown(text, tuple(kept), tokens, len(ranked) - len(kept))

    def set(
        self, key: str, attrs: dict[str, str], turn_id: str, at: datetime | None, kind: str = "", act: bool = False
    ) -> PinnedState:
        old = self.entities.get(key) or PinnedEntity(key, kind or entity_type(key))
        if act and turn_id not in old.source_turn_ids:
            old = replace(old, acts=old.acts + 1)
        fresh = {k: v[:MAX_VALUE_CHARS] for k, v in attrs.items()}
        # A value stated again moves to the end: the newest MAX_ATTRIBUTES stay.
        merged = {k: v for k, v in old.attributes.items() if k not in fresh} | fresh
        merged = dict(list(merged.items())[-MAX_ATTRIBUTES:])
        if merged == old.attributes and key in self.entities and turn_id in old.source_turn_ids:
            return self
        sources = old.source_turn_ids if turn_id in old.source_turn_ids else (*old.source_turn_ids, turn_id)
        stated = {k: t for k, t in old.stated_at.items() if k in merged} | ({k: at for k in fresh} if at else {})
        entities = dict(self.entities)
        entities[key] = replace(
            old,
            attributes=merged,
            source_turn_ids=sources[-MAX_SOURCES:],
            updated_at=at or old.updated_at,
            stated_at=stated,
        )
        return PinnedState(entities)

    def hydrated(self, records: Sequence[RecordValues]) -> PinnedState:
        """The pins with the values of their records' memories: a pin whose key has a current record takes the
        record's value for each attribute it shows, unless the pin's value was stated later (a user's or the
        agent's newer statement wins). The record memory is the merged result of every tool output for the id,
        while a pin read its values from the turns, whose view of a long output is clipped."""
        entities = dict(self.entities)
        for rec in sorted(records, key=lambda r: r.at):
            e = entities.get(rec.key) or entities.get(_by_fold(entities, rec.key))
            if e is None:
                continue
            fresh = {
                name: value[:MAX_VALUE_CHARS]
                for name, value in rec.fields.items()
                if name in e.attributes
                and e.attributes[name] != value[:MAX_VALUE_CHARS]
                and _not_after(e.stated_at.get(name) or e.updated_at, rec.at)
            }
            if fresh:
                attrs = {k: fresh.get(k, v) for k, v in e.attributes.items()}
                stated = {**e.stated_at, **dict.fromkeys(fresh, rec.at)}
                entities[e.key] = replace(e, attributes=attrs, stated_at=stated)
        return self if entities == self.entities else PinnedState(entities)

    def pin_atoms(self, atoms: list[A.Atom], turn_id: str, at: datetime | None) -> PinnedState:
        """Atoms the summary lost, pinned verbatim (the verifier's back-off)."""
        notes = self.entities.get(NOTES)
        start = len(notes.attributes) if notes else 0
        attrs = {f"{a.kind}_{start + i + 1}": a.value for i, a in enumerate(sorted(atoms))}
        return self.set(NOTES, attrs, turn_id, at, kind="note")


@dataclass(frozen=True, slots=True)
class RecordValues:
    """A tool's record as its memory holds it (kind tool_record, slot record:<key>): its key, fields, and when
    the newest tool output that set them was said."""

    key: str
    fields: dict[str, str]
    at: datetime


# A record memory's text: "<speaker>: KEY {a=1, …}", or one part of a long one, "KEY (part 2/3) {…}".
_RECORD_MEMORY = re.compile(r"^(?:[^{:]{1,80}: )?(\S{1,80})(?: \(part \d+/\d+\))? \{.*\}$", re.DOTALL)


@functools.lru_cache(maxsize=8192)
def record_values(text: str, at: datetime) -> RecordValues | None:
    """The key and fields of a record memory's text; None when it is not one. The same memories come back at
    every Fetch of a session, and a Fetch reads each several times: cached (callers never change the fields)."""
    m = _RECORD_MEMORY.match(text.strip())
    fields = parse_fields(text.strip()) if m else {}
    return RecordValues(m.group(1), fields, at) if m and fields else None


def _not_after(stated: datetime | None, at: datetime) -> bool:
    """Whether a value stated at ``stated`` (None: unknown, as old as can be) is not newer than ``at``;
    compared as instants, so a naive and an aware time never fail to compare."""
    return stated is None or stated.timestamp() <= at.timestamp()


def _by_fold(entities: dict[str, PinnedEntity], key: str) -> str:
    """The pinned key that names ``key`` up to case (a record's slot is case-folded)."""
    folded = key.casefold()
    return next((k for k in entities if k.casefold() == folded), "")


PINNED_HEADER = "Pinned state (current values):\n"
MIN_TRUNCATED_TOKENS = 24  # a pin cut to less than this says too little to show
PIN_SHARE = 0.5  # the most of the pins' cap one pin takes while others wait for room (grown back after)
_HINT_WORD = re.compile(r"[a-z0-9][a-z0-9_-]{2,}")
_COMMON = frozenset("the and for with you your this that are was have has not but can will our from".split())


def hint_words(texts: Sequence[str]) -> frozenset[str]:
    """The words of the latest user and agent turns an attribute may hold ("7447" of "my 7447 card")."""
    return frozenset(w for t in texts for w in _HINT_WORD.findall(t.lower()) if w not in _COMMON)


def _truncated(
    e: PinnedEntity, room: int, count: Callable[[str], int], hints: frozenset[str] = frozenset()
) -> PinnedEntity | None:
    """The pin with its first attributes that fit ``room`` tokens ("…" marks the cut); None if too little fits.
    ``hints``: words of the latest turns; an attribute that holds one is what the request is about."""
    if room < MIN_TRUNCATED_TOKENS:
        return None
    # The cut depends only on what the line renders (key, type, attributes), the room, the hints and the counter;
    # the same pins are cut to the same rooms at every Fetch of a session, each cut counting a trial per attribute.
    memo_key: tuple[object, ...] | None = (e.key, e.type, tuple(e.attributes.items()), room, hints, count)
    try:
        kept = _CUTS.get(memo_key) if memo_key is not None else None
    except TypeError:  # a counter that cannot be hashed: no memo
        memo_key, kept = None, None
    if kept is None:
        kept = fitting(e.attributes, lambda trial: count(f"- {replace(e, attributes=trial).render()}\n") <= room, hints)
        if memo_key is not None:
            if len(_CUTS) >= MAX_CUTS:
                _CUTS.clear()  # bounded, in bulk: the pins of the sessions being fetched come back at once
            _CUTS[memo_key] = kept
    return replace(e, attributes=dict(kept)) if kept else None


MAX_CUTS = 4096
_CUTS: dict[tuple[object, ...], dict[str, str]] = {}


def fitting(
    attributes: dict[str, str], fits: Callable[[dict[str, str]], bool], hints: frozenset[str] = frozenset()
) -> dict[str, str]:
    """The attributes that fit (``fits`` of the candidate, its "…" mark included), with "…" at the end; {} when
    none does. The attributes the latest turns speak of (``hints``) first, then those that name ids (what the
    agent acts on next), each group in its own order. One too long to fit whole shows the ids it names, if they
    fit: an id is what the agent's next call takes, the rest of the value stays in the record's memory."""
    kept: dict[str, str] = {}

    def priority(kv: tuple[str, str]) -> tuple[bool, bool]:
        words = set(_HINT_WORD.findall(kv[1].lower()))
        return (not (words & hints), not A.ids(kv[1]))

    for name, value in sorted(attributes.items(), key=priority):
        for shown in (value, ids_only(value)):
            trial = {**kept, name: shown}
            if shown and fits({**trial, "…": ""}):
                kept = trial
                break  # else a shorter attribute further on may still fit
    return {**kept, "…": ""} if kept else {}


def ids_only(value: str) -> str:
    """The ids a value names, as a cut pin shows it ("[credit_card_41, gift_card_7 …]"); "" when it names none
    or nothing but them."""
    found = list(dict.fromkeys(A.ids(value)))
    shown = f"[{', '.join(found)} …]" if found else ""
    return shown if shown and len(shown) < len(value) else ""


def render_entities(entities: Sequence[PinnedEntity]) -> str:
    if not entities:
        return ""
    return PINNED_HEADER + "\n".join(f"- {e.render()}" for e in entities)


def clauses(cleaned: str) -> list[str]:
    """Sentences (that know "Dr." and "e.g."), further cut at semicolons, line breaks and between records."""
    return [c for part in _CLAUSE.split(cleaned) for c in S.split(part)]


_KEY = re.compile(r"(?<![\w.])([a-z][a-z0-9_]{1,40})\s*=\s*")
_THOUSANDS = re.compile(r",\d{3}")


def own_pairs(clause: str) -> list[tuple[str, str]]:
    """The clause's own key=value pairs: those at the level of its id field (else its outermost), a nested
    object or list whole as its key's value ("requester={name=X, …}"), as a record shows it. A nested pair is
    never the subject's own: read as one, a tool output's "requester={name=X}" pinned name=X beside the
    record's requester, a second key shape no later result updated (issue 17: a stale value shown as current)."""
    depth, at = 0, []
    for ch in clause:
        depth -= ch in "}]"
        at.append(depth)
        depth += ch in "{["
    keys = list(_KEY.finditer(clause))
    own = next((m for m in keys if m.group(1) == "id" or m.group(1).endswith("_id")), None)
    floor = at[own.start()] if own else min((at[m.start()] for m in keys), default=0)
    out = []
    for m in keys:
        if at[m.start()] != floor:
            continue
        end = m.end()
        while end < len(clause) and at[end] >= floor:
            ch = clause[end]
            if at[end] == floor and (ch in ";\n" or (ch == "," and not _THOUSANDS.match(clause, end))):
                break
            end += 1
        out.append((m.group(1), clause[m.end() : end]))
    return out


def _clause_attrs(clause: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for key, value in own_pairs(clause):
        value = value.strip()
        if value and not key.endswith("_id") and key not in ("id", "key"):
            attrs[key] = value
    for raw, _norm in A.amounts(clause):
        if not any(raw in v for v in attrs.values()):
            attrs.setdefault("amount", raw)
    m = A.STATUS.search(clause)
    if m and "status" not in attrs:
        attrs["status"] = m.group(1).lower()
    for verb, who in _PRINCIPAL.findall(clause):
        attrs[_ROLE_OF.get(verb, f"{verb.replace(' ', '_')}_by")] = who
    for version in A.VERSION.findall(clause):
        attrs.setdefault("version", version)
    for role, who in _ROLE.findall(clause):
        attrs.setdefault(role.replace("-", "_"), who)
    for pattern in (A.ISO_DATE, A.DMY_DATE, A.MDY_DATE):
        for m2 in pattern.finditer(clause):
            if any(m2.group(0) in v for v in attrs.values()):
                continue
            k = _DATE_KEY.search(clause[: m2.start()])
            attrs.setdefault(f"{k.group(1).split()[0].lower()}_date" if k else "date", m2.group(0))
    return attrs


def _subject(clause: str) -> tuple[str, str] | None:
    """The entity a clause is about and the field that named it: the id of an ``id=`` / ``*_id=`` field,
    else the first id."""
    for key, value in _PAIR.findall(clause):
        if key == "id" or key.endswith("_id"):
            found = A.ids(value)
            if found:
                return found[0], key
    found = A.ids(clause)
    if not found:
        return None
    for key, value in _PAIR.findall(clause):
        if found[0] in A.ids(value):
            return found[0], key
    return found[0], ""


def call_lines(cleaned: str) -> tuple[list[tuple[str, dict[str, str]]], str]:
    """The tool calls of an agent turn ("name({k=v, …})", one a line, as noise.clean renders a call's JSON
    arguments) with their top-level inputs, and the rest of the turn."""
    calls, rest = [], []
    for line in cleaned.splitlines():
        m = _CALL.match(line.strip())
        inputs = parse_fields("{" + m.group(2) + "}") if m else {}
        if m and inputs:
            calls.append((m.group(1), inputs))
        else:
            rest.append(line)
    return calls, "\n".join(rest)


def field_values(clause: str, fields: Sequence[str]) -> dict[str, str]:
    """The values the clause gives the agent schema's pinned fields: "branch: main", "test_name=test_login",
    "the file_path is src/app.py" (a field's underscores may be written as spaces)."""
    found: dict[str, str] = {}
    for name in fields:
        key = re.escape(name.lower()).replace("_", "[ _]")
        m = re.search(rf"(?<![\w.-]){key}{_FIELD_VALUE}", clause, re.IGNORECASE)
        if m and m.group(1).strip():
            found[name] = m.group(1).strip()
    return found


def record_lines(cleaned: str) -> tuple[list[tuple[str, dict[str, str]]], str]:
    """The records of a tool output as ingest renders them ("<key> {…}", one a line), and the rest of it."""
    records, rest = [], []
    for line in cleaned.splitlines():
        m = _RECORD_LINE.match(line.strip())
        fields = parse_fields(line.strip()) if m else {}
        if m and fields:
            records.append((m.group(1), fields))
        else:
            rest.append(line)
    return records, "\n".join(rest)


@dataclass(frozen=True, slots=True)
class _Clause:
    """A clause naming an entity: the entity, its type, the attributes it states, the other ids it names."""

    key: str
    type: str
    attrs: tuple[tuple[str, str], ...]
    others: tuple[tuple[str, str], ...]  # (id, type)


@dataclass(frozen=True, slots=True)
class TurnReading:
    """What one cleaned turn says for the pinned state, independent of the state (read once, cached)."""

    records: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()  # a tool's records: (key, fields)
    calls: tuple[tuple[str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]], ...] = ()  # name, in, ids
    clauses: tuple[_Clause, ...] = ()
    session: tuple[tuple[str, str], ...] = ()  # the schema's fields stated outside any entity
    single: bool = False  # a tool output about one entity
    goals: tuple[str, ...] = ()
    acted: frozenset[str] = frozenset()  # ids the user or agent names


@functools.lru_cache(maxsize=8192)
def read(role: str, cleaned: str, fields: tuple[str, ...] = ()) -> TurnReading:
    """The turn's records, calls, clauses and goals (the same turn is read again at every Fetch until it is
    compacted: cached)."""
    agent = role != "tool"
    records: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    calls = []
    if not agent:
        found, cleaned = record_lines(cleaned)
        records = [(key, tuple((k, v) for k, v in values.items() if v != key)) for key, values in found]
    else:
        called, cleaned = call_lines(cleaned)
        for name, inputs in called:
            ids = tuple((i, entity_type(i, k)) for k, v in inputs.items() for i in A.ids(v))
            calls.append((name, tuple(inputs.items()), ids))
    parts = clauses(cleaned)
    subjects = [_subject(c) for c in parts]
    out: list[_Clause] = []
    session: dict[str, str] = {}
    for clause, subject in zip(parts, subjects, strict=True):
        named = field_values(clause, fields) if fields else {}
        if subject is None:
            session.update(named)
            continue
        key, field_name = subject
        attrs = {k: v for k, v in {**_clause_attrs(clause), **named}.items() if v != key}
        others = tuple(
            (other, entity_type(other, next((k for k, v in _PAIR.findall(clause) if other in A.ids(v)), "")))
            for other in A.ids(clause)
            if other != key
        )
        out.append(_Clause(key, entity_type(key, field_name), tuple(attrs.items()), others))
    return TurnReading(
        records=tuple(records),
        calls=tuple(calls),
        clauses=tuple(out),
        session=tuple(session.items()),
        # A tool output about one entity is the object of the call that asked for it (the created order, the
        # looked-up user): pinned like the call. A listing of several is what the tool merely returned.
        single=not agent and not records and len({c.key for c in out}) == 1,
        goals=tuple(A.goal_sentences(cleaned)) if role == "user" else (),
        acted=frozenset(A.ids(cleaned)) | frozenset(i for _, _, ids in calls for i, _ in ids) if agent else frozenset(),
    )


def acted_on(role: str, cleaned: str, fields: Sequence[str] = ()) -> frozenset[str]:
    """The ids a user or agent turn names (its text and its calls): what the agent acts on."""
    return read(role, cleaned, tuple(fields)).acted if role != "tool" else frozenset()


def update(
    state: PinnedState,
    role: str,
    cleaned: str,
    turn_id: str,
    at: datetime | None,
    fields: Sequence[str] = (),
    acted: frozenset[str] = frozenset(),
) -> PinnedState:
    """The state after one (cleaned) turn. In what the user or the agent says or calls, each clause naming an
    entity pins it and sets its attributes, and a call pins its inputs and the ids they name; a tool's output
    only updates entities already pinned (what it merely lists is left to the memories), or pins the one
    entity it is about. The schema's pinned ``fields`` are kept for the entity, or for the session when the
    clause names none; a user's goals and constraints are pinned as stated. ``acted``: ids the user or agent
    names in the same span of turns, before or after this one (the item picked from a listing): their records
    in a tool output are pinned too."""
    agent = role != "tool"
    user = role == "user"
    reading = read(role, cleaned, tuple(fields))
    for key, values in reading.records:
        if len(reading.records) == 1 or key in state.entities or key in acted:
            state = state.set(key, dict(values), turn_id, at)
    for name, inputs, ids in reading.calls:
        # The call and its inputs (nested ones whole); the ids it names are pinned too, their values come
        # with the results.
        state = state.set(f"{name}()", dict(inputs), turn_id, at, kind=CALL)
        for found, kind in ids:
            state = state.set(found, {}, turn_id, at, kind=kind, act=True)
    if reading.session:
        state = state.set(SESSION, dict(reading.session), turn_id, at, kind="session")
    for c in reading.clauses:
        if not agent and not reading.single and c.key not in state.entities and c.key not in acted:
            continue
        state = state.set(c.key, dict(c.attrs), turn_id, at, kind=c.type, act=user)
        if not agent:
            continue
        for other, kind in c.others:
            if user or other not in state.entities:
                state = state.set(other, {}, turn_id, at, kind=kind, act=user)
    if reading.goals:
        goals = reading.goals
        existing = state.entities.get(GOALS)
        known = list(existing.attributes.values()) if existing else []
        fresh = [g for g in goals if g not in known]
        if fresh:
            # The newest goals stay pinned; older ones live on in the summary lines that state them.
            kept = [*known, *fresh][-MAX_GOALS:]
            entity = PinnedEntity(
                GOALS,
                "goals",
                {f"goal_{i + 1}": g[: MAX_VALUE_CHARS * 3] for i, g in enumerate(kept)},
                (*(existing.source_turn_ids if existing else ()), turn_id)[-MAX_SOURCES:],
                at,
            )
            state = PinnedState({**state.entities, GOALS: entity})
    return state
