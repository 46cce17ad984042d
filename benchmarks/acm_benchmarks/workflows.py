"""Seeded generator of enterprise agent sessions (procurement approvals, support tickets, incident
response, deployments) with planted facts, for `acm bench retention` and `acm bench tokens`.

Facts are spread over the whole session (early and late), stated in user or assistant prose or buried in
tool outputs full of protocol noise (HTTP status lines, headers, debug and trace fields, log lines); some
are superseded later (a status moves on, an approver changes, an amount is revised), so the latest value
is current and the older ones are stale. Pure: same seed, same sessions."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field

KINDS = ("procurement", "support", "incident", "deployment")
PEOPLE = (
    "Li Wei",
    "Sarah Chen",
    "Omar Haddad",
    "Priya Nair",
    "Jonas Berg",
    "Mei Tanaka",
    "Carlos Ruiz",
    "Anna Kowalski",
    "David Okafor",
    "Elena Petrova",
    "Wang Fang",
    "Zhang Min",
    "Lucas Martin",
    "Aisha Bello",
)
VENDORS = ("Acme Industrial Supply", "Globex Components", "Initech Hardware", "Umbrella Logistics", "Stark Office")
CURRENCIES = ("CNY", "USD", "EUR")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True, slots=True)
class GenTurn:
    role: str  # user, assistant, tool
    text: str
    tool_name: str = ""


@dataclass(frozen=True, slots=True)
class PlantedFact:
    entity: str
    attribute: str
    value: str
    turn: int  # index of the turn that states it
    current: bool  # False when a later turn states a newer value for the same (entity, attribute)


@dataclass
class Session:
    kind: str
    seed: int
    turns: list[GenTurn] = field(default_factory=list)
    facts: list[PlantedFact] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Spec:
    prefix: str
    noun: str
    tool_get: str
    tool_set: str
    statuses: tuple[str, ...]  # in the order a record moves through them
    principal: str  # attribute naming the responsible person
    date_attr: str


SPECS = {
    "procurement": _Spec(
        "PO",
        "purchase order",
        "erp.get_po",
        "erp.update_po",
        ("draft", "pending_approval", "approved"),
        "approver",
        "delivery_date",
    ),
    "support": _Spec(
        "TCK",
        "ticket",
        "helpdesk.get_ticket",
        "helpdesk.update_ticket",
        ("open", "escalated", "resolved"),
        "assignee",
        "due_date",
    ),
    "incident": _Spec(
        "INC",
        "incident",
        "pager.get_incident",
        "pager.update_incident",
        ("investigating", "mitigated", "resolved"),
        "commander",
        "started_at",
    ),
    "deployment": _Spec(
        "DEP",
        "deployment",
        "cd.get_deployment",
        "cd.update_deployment",
        ("scheduled", "deployed", "rolled_back"),
        "owner",
        "window_date",
    ),
}


def _money(rng: random.Random) -> str:
    value = rng.randrange(1_000, 500_000) + rng.choice((0, 0.5, 0.25, 0.99))
    return f"{value:,.2f} {rng.choice(CURRENCIES)}"


def _date(rng: random.Random, style: int) -> str:
    y, m, d = 2026, rng.randint(1, 12), rng.randint(1, 28)
    return f"{y}-{m:02d}-{d:02d}" if style == 0 else f"{d} {MONTHS[m - 1]} {y}"


def _key(rng: random.Random, spec: _Spec, n: int) -> str:
    if spec.prefix == "PO":
        return f"PO-2026{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}-{n:04d}"
    return f"{spec.prefix}-{rng.randint(1000, 99999)}{n}"


def _noise_json(rng: random.Random) -> dict[str, object]:
    return {
        "request_id": f"req_{rng.getrandbits(48):012x}",
        "trace_id": f"{rng.getrandbits(64):016x}",
        "latency_ms": rng.randint(3, 900),
        "debug": {"cache": rng.choice(("hit", "miss")), "shard": rng.randint(0, 63), "sql_ms": rng.randint(1, 80)},
        "api_version": "2024-06-01",
        "headers": {"x-ratelimit-remaining": rng.randint(0, 5000), "x-served-by": f"edge-{rng.randint(1, 40)}"},
    }


def _log_lines(rng: random.Random, n: int) -> list[str]:
    words = ("cache", "pool", "retry", "gc", "socket", "lease", "token", "batch", "flush", "heartbeat")
    return [
        f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
        f"{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z {rng.choice(('DEBUG', 'TRACE'))} "
        f"[worker-{rng.randint(1, 16)}] "
        f"{rng.choice(words)} {rng.choice(words)} key={rng.getrandbits(32):08x} took={rng.randint(1, 90)}ms"
        for _ in range(n)
    ]


_USER_CHATTER = (
    "Any update on this?",
    "Thanks, keep going.",
    "Ok, sounds good.",
    "Can you check again in a minute?",
    "Let me know when you have something.",
    "Sorry, I was in a meeting.",
    "Fine by me.",
)
_ASSISTANT_CHATTER = (
    "Let me check that for you.",
    "I am looking at the latest records now.",
    "Still waiting on the system.",
    "I will keep an eye on it and report back.",
    "Nothing new since the last check.",
)


def _pad(text: str, rng: random.Random, target: int, count: Callable[[str], int]) -> str:
    """Protocol noise (log lines) appended until the turn is about ``target`` tokens."""
    if target <= 0:
        return text
    lines = [text]
    while count("\n".join(lines)) < target:
        lines += _log_lines(rng, 1)
    return "\n".join(lines)


def generate(
    kind: str,
    turns: int,
    seed: int,
    *,
    entities: int = 8,
    turn_tokens: int = 0,
    count: Callable[[str], int] | None = None,
) -> Session:
    """A session of ``turns`` turns; with ``turn_tokens`` (and ``count``) each turn is padded with protocol
    noise to about that many tokens."""
    rng = random.Random(f"{kind}:{seed}")
    spec = SPECS[kind]
    counter = count or (lambda s: len(s) // 4)
    session = Session(kind, seed)
    slots: dict[int, list[tuple[str, str, str]]] = {}  # turn index → facts (entity, attribute, value)
    keys = [_key(rng, spec, i + 1) for i in range(entities)]
    for key in keys:
        first = rng.randrange(0, max(1, turns // 2))  # early half
        attrs = {
            "amount": _money(rng) if kind == "procurement" else "",
            "status": spec.statuses[0],
            spec.principal: rng.choice(PEOPLE),
            spec.date_attr: _date(rng, rng.randint(0, 1)),
        }
        if kind == "procurement":
            attrs["vendor"] = rng.choice(VENDORS)
        if kind == "incident":
            attrs["affected"] = f"{rng.randint(10, 9000):,} users"
        if kind == "deployment":
            attrs["version"] = f"v{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}"
        for attr, value in attrs.items():
            if value:
                slots.setdefault(min(turns - 1, first + rng.randint(0, 3)), []).append((key, attr, value))
        # Later updates (the late half): the status moves on; sometimes the principal or amount changes.
        at = first
        for status in spec.statuses[1:]:
            at = rng.randrange(min(at + 5, turns - 1), turns)
            slots.setdefault(at, []).append((key, "status", status))
        if rng.random() < 0.5:
            slots.setdefault(rng.randrange(turns // 2, turns), []).append(
                (key, spec.principal, rng.choice([p for p in PEOPLE if p != attrs[spec.principal]]))
            )
        if kind == "procurement" and rng.random() < 0.5:
            slots.setdefault(rng.randrange(turns // 2, turns), []).append((key, "amount", _money(rng)))
    planted: list[tuple[str, str, str, int]] = []
    for i in range(turns):
        facts = slots.get(i, [])
        if not facts:
            session.turns.append(_filler(rng, i, spec, turn_tokens, counter))
            continue
        turn = _fact_turn(rng, spec, facts, turn_tokens, counter)
        session.turns.append(turn)
        planted += [(e, a, v, i) for e, a, v in facts]
    # The last statement wins, also between two statements of one turn (they are read in order).
    latest = {(e, a): n for n, (e, a, _v, _i) in enumerate(planted)}
    session.facts = [PlantedFact(e, a, v, i, latest[(e, a)] == n) for n, (e, a, v, i) in enumerate(planted)]
    return session


def _filler(rng: random.Random, i: int, spec: _Spec, target: int, count: Callable[[str], int]) -> GenTurn:
    r = rng.random()
    if r < 0.45:
        body = {"ok": True, "results": [], "message": "no changes since last poll", **_noise_json(rng)}
        text = f"HTTP/1.1 200 OK\nContent-Type: application/json\n{json.dumps(body)}\n" + "\n".join(_log_lines(rng, 4))
        return GenTurn("tool", _pad(text, rng, target, count), rng.choice((spec.tool_get, "monitor.poll")))
    if r < 0.75:
        return GenTurn("assistant", _pad(rng.choice(_ASSISTANT_CHATTER), rng, target, count))
    return GenTurn("user", _pad(rng.choice(_USER_CHATTER), rng, target, count))


_PROSE = {
    "amount": "{e} is for {v}.",
    "status": "{e} status is now {v}.",
    "approver": "The approver for {e} is {v}.",
    "assignee": "{e} is assigned to {v}.",
    "commander": "The incident commander for {e} is {v}.",
    "owner": "The owner of {e} is {v}.",
    "delivery_date": "Delivery for {e} is due {v}.",
    "due_date": "{e} is due {v}.",
    "started_at": "{e} started on {v}.",
    "window_date": "{e} is scheduled for {v}.",
    "vendor": "{e} goes to the vendor {v}.",
    "affected": "{e} affects {v}.",
    "version": "{e} ships version {v}.",
}


def _fact_turn(
    rng: random.Random, spec: _Spec, facts: list[tuple[str, str, str]], target: int, count: Callable[[str], int]
) -> GenTurn:
    form = rng.random()
    if form < 0.5:  # buried in a tool output
        entity = facts[0][0]
        body: dict[str, object] = {f"{spec.noun.replace(' ', '_')}_id": entity}
        for e, a, v in facts:
            if e == entity:
                body[a] = v
        body.update(_noise_json(rng))
        others = [f for f in facts if f[0] != entity]
        headers = f"HTTP/1.1 200 OK\nContent-Type: application/json\nX-Request-Id: {rng.getrandbits(40):x}"
        text = f"{headers}\n{json.dumps(body)}"
        if others:
            text += "\n" + " ".join(_PROSE[a].format(e=e, v=v) for e, a, v in others)
        text += "\n" + "\n".join(_log_lines(rng, 3))
        tool = spec.tool_set if any(a == "status" for _e, a, _v in facts) else spec.tool_get
        return GenTurn("tool", _pad(text, rng, target, count), tool)
    role = "user" if form < 0.75 else "assistant"
    lead = rng.choice(("For the record:", "Quick update.", "Noting this down.", "FYI."))
    text = lead + " " + " ".join(_PROSE[a].format(e=e, v=v) for e, a, v in facts)
    return GenTurn(role, _pad(text, rng, target, count))
