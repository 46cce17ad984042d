"""The pinned entity state: typed, structured business state carried at the top of every context.

A summary never rewrites it; only a newer fact about the same entity updates an attribute (the newer
value replaces the older, and the entity remembers which turns said so)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from acm.domain.compaction import atoms as A

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
NOTES = "notes"  # atoms pinned by the verifier's back-off
GOALS = "goals"  # the user's stated goals and constraints
SESSION = "session"  # the schema's pinned fields stated outside any entity ("branch: feature/login-fix")
# The value runs to the end of its clause: a comma, a semicolon, a sentence end, a closing brace (cleaned JSON).
_FIELD_VALUE = r"\s*(?:=|:|\bis\b|\bwas\b)\s*[\"']?([^,;\n\"'{}]{1,80}?)[\"']?\s*(?:[.,;]\s|[.,;}]?$|[,;}])"
MAX_GOALS = 8
_PAIR = re.compile(r"(?<![\w.])([a-z][a-z0-9_]{1,40})\s*=\s*((?:[^,;{}\[\]\n]|,(?=\d{3}))+)")
_PRINCIPAL = re.compile(
    r"\b(approved|assigned|owned|requested|reviewed|escalated|submitted|raised|created|resolved|acknowledged|"
    r"signed off|rejected)\s+(?:by|to)\s+([A-Z][a-z]+(?: [A-Z][a-z]+){1,2})"
)
_ROLE = re.compile(
    r"\b(approver|assignee|owner|requester|reviewer|on-call|commander|manager|vendor|supplier)"
    r"(?:\s+(?:for|of)\s+[A-Z]{2,6}-[\w-]+)?\s*(?:is|:|=)?\s*([A-Z][a-z]+(?: [A-Z][a-z]+){0,2})"
)
# "assigned to X" and "assignee=X" are one attribute, so the newer statement replaces the older.
_ROLE_OF = {"assigned": "assignee", "owned": "owner", "requested": "requester", "reviewed": "reviewer"}
_DATE_KEY = re.compile(
    r"\b(due|deadline|eta|scheduled(?: for)?|expires?|delivery|window)\b[^.;,]{0,12}$", re.IGNORECASE
)
_CLAUSE = re.compile(r"(?<=[.!?])\s+|[;\n]+|(?<=\})\s*,?\s*(?=\{)")


@dataclass(frozen=True, slots=True)
class PinnedEntity:
    key: str
    type: str
    attributes: dict[str, str] = field(default_factory=dict)
    source_turn_ids: tuple[str, ...] = ()
    updated_at: datetime | None = None

    def render(self) -> str:
        attrs = ", ".join(f"{k}={v}" for k, v in self.attributes.items())
        return f"{self.key} ({self.type})" + (f": {attrs}" if attrs else "")


def entity_type(key: str) -> str:
    return TYPES.get(key.split("-")[0], "record")


@dataclass(frozen=True, slots=True)
class PinnedState:
    entities: dict[str, PinnedEntity] = field(default_factory=dict)

    def render(self) -> str:
        if not self.entities:
            return ""
        return "Pinned state (current values):\n" + "\n".join(f"- {e.render()}" for e in self.entities.values())

    def set(self, key: str, attrs: dict[str, str], turn_id: str, at: datetime | None, kind: str = "") -> PinnedState:
        old = self.entities.get(key) or PinnedEntity(key, kind or entity_type(key))
        merged = {**old.attributes, **attrs}
        if merged == old.attributes and key in self.entities:
            return self
        sources = old.source_turn_ids if turn_id in old.source_turn_ids else (*old.source_turn_ids, turn_id)[-8:]
        entities = dict(self.entities)
        entities[key] = replace(old, attributes=merged, source_turn_ids=sources, updated_at=at or old.updated_at)
        return PinnedState(entities)

    def pin_atoms(self, atoms: list[A.Atom], turn_id: str, at: datetime | None) -> PinnedState:
        """Atoms the summary lost, pinned verbatim (the verifier's back-off)."""
        notes = self.entities.get(NOTES)
        start = len(notes.attributes) if notes else 0
        attrs = {f"{a.kind}_{start + i + 1}": a.value for i, a in enumerate(sorted(atoms))}
        return self.set(NOTES, attrs, turn_id, at, kind="note")


def _clause_attrs(clause: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for key, value in _PAIR.findall(clause):
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


def _subject(clause: str) -> str | None:
    """The entity a clause is about: the id named by an ``*_id=`` / ``id=`` field, else the first id."""
    for key, value in _PAIR.findall(clause):
        if key == "id" or key.endswith("_id"):
            found = A.ids(value)
            if found:
                return found[0]
    found = A.ids(clause)
    return found[0] if found else None


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


def update(
    state: PinnedState, role: str, cleaned: str, turn_id: str, at: datetime | None, fields: Sequence[str] = ()
) -> PinnedState:
    """The state after one (cleaned) turn: each clause naming an entity sets that entity's attributes;
    the schema's pinned ``fields`` are kept for the entity, or for the session when the clause names none;
    a user's goals and constraints are pinned as stated."""
    for clause in _CLAUSE.split(cleaned):
        subject = _subject(clause)
        named = field_values(clause, fields) if fields else {}
        if subject is None:
            if named:
                state = state.set(SESSION, named, turn_id, at, kind="session")
            continue
        attrs = {k: v for k, v in {**_clause_attrs(clause), **named}.items() if v != subject}
        state = state.set(subject, attrs, turn_id, at)
        for other in A.ids(clause):
            if other != subject and other not in state.entities:
                state = state.set(other, {}, turn_id, at)
    if role == "user":
        goals = A.goal_sentences(cleaned)
        existing = state.entities.get(GOALS)
        known = list(existing.attributes.values()) if existing else []
        fresh = [g for g in goals if g not in known]
        if fresh:
            # The newest goals stay pinned; older ones live on in the summary lines that state them.
            kept = [*known, *fresh][-MAX_GOALS:]
            entity = PinnedEntity(
                GOALS,
                "goals",
                {f"goal_{i + 1}": g for i, g in enumerate(kept)},
                (*(existing.source_turn_ids if existing else ()), turn_id)[-8:],
                at,
            )
            state = PinnedState({**state.entities, GOALS: entity})
    return state
