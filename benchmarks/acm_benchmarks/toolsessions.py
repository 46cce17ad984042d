"""Seeded generator of tool-heavy agent sessions, for `acm bench tokens --tool-heavy` and `acm bench retention
--tool-heavy`: what an agent fleet's sessions look like, built independently of ACM's rules.

Four domains (procurement, support, ops, orders). The agent calls tools (an assistant turn
`name({...json arguments...})`) and the tools answer with API-style JSON: an envelope of protocol noise
(http status, request and trace ids, latency, rate-limit headers, paging) around a list of 5-20 nested
records, one record per line; a few answers are 20-60 KiB (a 300-record inventory export, a log dump).
Ids come in several formats (`PO-2026-0412`, `SKU-48213`, `#W2378156`, `FQ8APE`, `credit_card_9513926`,
`INC-7`, uuids); people are named with honorifics ("Dr. Ana Souza", "Mr. O'Brien"). A few records per
session are tracked: their status, amount, quantity, assignee... change over the session (through the
agent's updates and behind its back), and every time a tool result (or the agent's prose) shows a tracked
field, that (entity id, field, value) is a planted fact; the last one shown is current, earlier different
values are stale (acm_benchmarks.workflows.PlantedFact, scored by acm_benchmarks.retention).

Pure: same (kind, turns, seed), same session.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from acm_benchmarks.workflows import GenTurn, PlantedFact, Session

KINDS = ("procurement", "support", "ops", "orders")
# (title, first name, last name); a record names the whole, prose sometimes the title and last name alone.
PEOPLE = (
    ("Dr.", "Ana", "Souza"),
    ("Ms.", "Li", "Wei"),
    ("Mr.", "Sean", "O'Brien"),
    ("Mrs.", "Amara", "Okafor"),
    ("Prof.", "Jürgen", "Weiß"),
    ("Dr.", "Priya", "Raman"),
    ("Mr.", "Tomás", "García"),
    ("Ms.", "Chen", "Jing"),
    ("Dr.", "Fatima", "Al-Sayed"),
    ("Mr.", "Kenji", "Mori"),
    ("Ms.", "Ingrid", "Dahl"),
    ("Mrs.", "Zhang", "Min"),
)
CURRENCIES = ("EUR", "USD", "GBP", "CNY")
VENDORS = ("Northwind Metals GmbH", "Kestrel Fasteners Ltd", "Orchid Labs Inc", "Baltic Polymer AS", "Sunrise Optics")
SERVICES = ("payments-api", "search-indexer", "auth-gateway", "ledger-writer", "media-cdn", "checkout-web")
CARRIERS = ("DHL", "UPS", "FedEx", "La Poste", "SF Express")
WORDS = ("bolt", "valve", "sensor", "cable", "bracket", "filter", "relay", "gasket", "module", "panel", "lens")
BIG_MIN_BYTES = 20 * 1024
BIG_MAX_BYTES = 60 * 1024


@dataclass(frozen=True, slots=True)
class Domain:
    noun: str  # what the tracked records are
    id_field: str
    list_tool: str
    get_tool: str
    update_tool: str
    dump_tool: str  # the 20-60 KiB answer: an inventory export or a log dump
    statuses: tuple[str, ...]  # in the order a record moves through them
    principal: str  # the field naming the responsible person


DOMAINS = {
    "procurement": Domain(
        "purchase order",
        "po_id",
        "erp.list_purchase_orders",
        "erp.get_purchase_order",
        "erp.update_purchase_order",
        "wms.export_inventory",
        ("draft", "pending_approval", "approved", "ordered", "received"),
        "approver",
    ),
    "support": Domain(
        "ticket",
        "ticket_id",
        "helpdesk.search_tickets",
        "helpdesk.get_ticket",
        "helpdesk.update_ticket",
        "logs.tail",
        ("new", "open", "pending_customer", "escalated", "resolved"),
        "assignee",
    ),
    "ops": Domain(
        "incident",
        "incident_id",
        "pager.list_incidents",
        "pager.get_incident",
        "pager.update_incident",
        "logs.query",
        ("triggered", "acknowledged", "mitigating", "monitoring", "resolved"),
        "commander",
    ),
    "orders": Domain(
        "order",
        "order_id",
        "shop.search_orders",
        "shop.get_order",
        "shop.modify_order",
        "wms.export_inventory",
        ("pending", "processed", "shipped", "delivered", "return_requested"),
        "handler",
    ),
}
# The tracked fields besides status and the principal, per domain.
EXTRA_FIELDS = {
    "procurement": ("amount", "qty_ordered"),
    "support": ("priority",),
    "ops": ("severity", "customers_affected"),
    "orders": ("total", "payment_method_id"),
}


def person(p: tuple[str, str, str]) -> str:
    return f"{p[0]} {p[1]} {p[2]}"


class _Ids:
    """Ids of several formats, never the same one twice in a session."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()
        self.tickets = 0

    def _new(self, make: Callable[[], str]) -> str:
        while True:
            value = make()
            if value not in self.used:
                self.used.add(value)
                return value

    def po(self) -> str:
        return self._new(lambda: f"PO-{self.rng.randint(2024, 2026)}-{self.rng.randint(1, 9999):04d}")

    def sku(self) -> str:
        return self._new(lambda: f"SKU-{self.rng.randint(10000, 99999)}")

    def order(self) -> str:
        return self._new(lambda: f"#W{self.rng.randint(1_000_000, 9_999_999)}")

    def code(self) -> str:
        """A 6-character record locator, e.g. FQ8APE."""
        alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
        return self._new(lambda: "".join(self.rng.choice(alphabet) for _ in range(6)))

    def ticket(self) -> str:
        def following() -> str:
            self.tickets += 1
            return f"INC-{self.tickets}"

        return self._new(following)  # short sequential ids: INC-7 next to INC-17 and INC-70

    def payment(self) -> str:
        kind = self.rng.choice(("credit_card", "credit_card", "gift_card", "paypal"))
        return self._new(lambda: f"{kind}_{self.rng.randint(1_000_000, 9_999_999)}")

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def tracked(self, kind: str) -> str:
        return {"procurement": self.po, "support": self.ticket, "ops": self.code, "orders": self.order}[kind]()


def _money(rng: random.Random) -> str:
    return f"{rng.randrange(200, 90_000) + rng.choice((0, 0.5, 0.99, 0.25)):,.2f} {rng.choice(CURRENCIES)}"


def _stamp(rng: random.Random) -> str:
    return (
        f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
        f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"
    )


class _Builder:
    """One session being written: the tracked records' current values, the turns, the facts stated."""

    def __init__(self, kind: str, seed: int, turns: int, entities: int) -> None:
        self.kind = kind
        self.domain = DOMAINS[kind]
        self.rng = random.Random(f"toolheavy:{kind}:{seed}")
        self.ids = _Ids(self.rng)
        self.limit = turns
        self.session = Session(kind, seed)
        self.planted: list[tuple[str, str, str, int]] = []
        self.state: dict[str, dict[str, str]] = {}
        for _ in range(entities):
            key = self.ids.tracked(kind)
            fields = {"status": self.domain.statuses[0], self.domain.principal: person(self.rng.choice(PEOPLE))}
            for name in EXTRA_FIELDS[kind]:
                fields[name] = self._value(name)
            self.state[key] = fields
        # SKUs whose stock level is tracked through the big inventory exports (procurement and orders).
        self.skus = (
            {self.ids.sku(): str(self.rng.randint(1000, 9999)) for _ in range(3)}
            if "inventory" in self.domain.dump_tool
            else {}
        )
        self.dumps = 0

    # -- values ------------------------------------------------------------------------------------

    def _value(self, name: str) -> str:
        rng = self.rng
        if name in ("amount", "total"):
            return _money(rng)
        if name in ("qty_ordered", "customers_affected"):
            return str(rng.randint(100, 990))  # 3 digits: no other number of a record line has 3 digits alone
        if name == "priority":
            return rng.choice(("P1", "P2", "P3", "P4"))
        if name == "severity":
            return rng.choice(("SEV1", "SEV2", "SEV3", "SEV4"))
        if name == "payment_method_id":
            return self.ids.payment()
        raise ValueError(name)

    def change(self, key: str) -> tuple[str, str]:
        """Move one tracked field of `key` on (status forward, or a new principal / amount / ...)."""
        fields = self.state[key]
        name = self.rng.choice(["status", "status", self.domain.principal, *EXTRA_FIELDS[self.kind]])
        if name == "status":
            order = self.domain.statuses
            at = order.index(fields["status"])
            fields["status"] = order[min(at + 1, len(order) - 1)] if at + 1 < len(order) else order[1]
        elif name == self.domain.principal:
            fields[name] = person(self.rng.choice([p for p in PEOPLE if person(p) != fields[name]]))
        else:
            fields[name] = self._value(name)
        return name, fields[name]

    # -- turns -------------------------------------------------------------------------------------

    @property
    def full(self) -> bool:
        return len(self.session.turns) >= self.limit

    def add(self, turn: GenTurn, facts: Sequence[tuple[str, str, str]] = ()) -> None:
        if self.full:
            return
        at = len(self.session.turns)
        self.session.turns.append(turn)
        self.planted += [(e, a, v, at) for e, a, v in facts]

    def call(self, tool: str, arguments: dict[str, object]) -> None:
        self.add(GenTurn("assistant", f"{tool}({json.dumps(arguments, ensure_ascii=False)})"))

    def envelope(self, lines: list[str], total: int) -> str:
        """API-style JSON: protocol noise around the records, one record per line (valid JSON)."""
        rng = self.rng
        head: dict[str, object] = {
            "http_status": 200,
            "request_id": self.ids.uuid(),
            "trace_id": f"{rng.getrandbits(128):032x}",
            "latency_ms": rng.randint(4, 2400),
            "api_version": "2025-01-15",
            "page": {"size": len(lines), "total": total, "cursor": f"{rng.getrandbits(64):016x}"},
        }
        if rng.random() < 0.4:
            head["debug"] = {
                "cache": rng.choice(("hit", "miss")),
                "shard": rng.randint(0, 63),
                "db_ms": rng.randint(1, 90),
            }
        if rng.random() < 0.3:
            head["headers"] = {
                "x-ratelimit-remaining": rng.randint(0, 5000),
                "x-served-by": f"edge-{rng.randint(1, 40)}",
            }
        return json.dumps(head, ensure_ascii=False)[:-1] + ', "data": [\n' + ",\n".join(lines) + "\n]}"

    def record(self, key: str, fields: dict[str, str]) -> str:
        """One record, nested as a real API's would be, on one line."""
        rng, ids, kind = self.rng, self.ids, self.kind
        body: dict[str, object] = {self.domain.id_field: key}
        if kind == "procurement":
            body |= {
                "vendor": {"id": f"V-{rng.randint(1000, 9999)}", "name": rng.choice(VENDORS)},
                "requested_by": person(rng.choice(PEOPLE)),
                "lines": [
                    {
                        "sku": ids.sku(),
                        "qty": rng.randint(1, 9),
                        "unit_price": f"{rng.randint(1, 99)}.{rng.randint(0, 99):02d}",
                    }
                    for _ in range(rng.randint(1, 3))
                ],
                "payment": {"method": ids.payment(), "terms": rng.choice(("NET30", "NET60"))},
            }
        elif kind == "support":
            body |= {
                "subject": f"{rng.choice(WORDS)} {rng.choice(('missing', 'broken', 'late', 'wrong size'))}",
                "requester": {"name": person(rng.choice(PEOPLE)), "customer_id": ids.uuid()},
                "order_ref": ids.order(),
                "product": {"sku": ids.sku(), "refund_to": ids.payment()},
                "tags": rng.sample(("billing", "shipping", "vip", "warranty", "refund"), 2),
            }
        elif kind == "ops":
            body |= {
                "service": rng.choice(SERVICES),
                "hosts": [f"{rng.choice(('db', 'api', 'cache'))}-eu-{rng.randint(1, 9)}" for _ in range(2)],
                "change_ref": f"CHG-{rng.randint(1, 99999):05d}",
                "linked_ticket": ids.ticket(),
                "started_at": _stamp(rng),
            }
        else:
            body |= {
                "customer": {"id": ids.uuid(), "name": person(rng.choice(PEOPLE))},
                "items": [
                    {
                        "sku": ids.sku(),
                        "qty": rng.randint(1, 4),
                        "price": f"{rng.randint(5, 400)}.{rng.randint(0, 99):02d}",
                    }
                    for _ in range(rng.randint(1, 3))
                ],
                "shipping": {"carrier": rng.choice(CARRIERS), "tracking": f"1Z{rng.getrandbits(40):010X}"},
            }
        body |= {k: int(v) if v.isdigit() else v for k, v in fields.items()}  # counts as JSON numbers
        body["updated_at"] = _stamp(rng)
        return json.dumps(body, ensure_ascii=False)

    def _untracked(self) -> tuple[str, dict[str, str]]:
        key = self.ids.tracked(self.kind)
        fields = {
            "status": self.rng.choice(self.domain.statuses),
            self.domain.principal: person(self.rng.choice(PEOPLE)),
        }
        return key, fields | {name: self._value(name) for name in EXTRA_FIELDS[self.kind]}

    def _drift(self) -> None:
        """Someone else changed a tracked record: the agent only learns it from the next result."""
        if self.rng.random() < 0.2:
            self.change(self.rng.choice(list(self.state)))

    def list_call(self) -> None:
        self._drift()
        shown = self.rng.sample(list(self.state), self.rng.randint(1, min(3, len(self.state))))
        size = self.rng.randint(5, 20)
        records = [(k, dict(self.state[k])) for k in shown] + [self._untracked() for _ in range(size - len(shown))]
        self.rng.shuffle(records)
        filters = {"status": self.rng.choice(self.domain.statuses), "limit": size}
        self.call(self.domain.list_tool, filters)
        text = self.envelope([self.record(k, f) for k, f in records], size + self.rng.randint(0, 80))
        self.add(
            GenTurn("tool", text, self.domain.list_tool), [(k, a, v) for k in shown for a, v in self.state[k].items()]
        )

    def get_call(self) -> None:
        self._drift()
        key = self.rng.choice(list(self.state))
        self.call(self.domain.get_tool, {self.domain.id_field: key})
        self.add(
            GenTurn("tool", self.envelope([self.record(key, dict(self.state[key]))], 1), self.domain.get_tool),
            [(key, a, v) for a, v in self.state[key].items()],
        )

    def update_call(self) -> None:
        key = self.rng.choice(list(self.state))
        name, value = self.change(key)
        self.call(self.domain.update_tool, {self.domain.id_field: key, name: value, "reason": "requested by user"})
        self.add(
            GenTurn("tool", self.envelope([self.record(key, dict(self.state[key]))], 1), self.domain.update_tool),
            [(key, a, v) for a, v in self.state[key].items()],
        )

    def dump_call(self) -> None:
        """A 20-60 KiB answer: an inventory export (the tracked SKUs' stock in it) or a log dump."""
        rng = self.rng
        target = rng.randint(BIG_MIN_BYTES, BIG_MAX_BYTES)
        facts: list[tuple[str, str, str]] = []
        lines: list[str] = []
        if self.skus:
            for sku in self.skus:
                if rng.random() < 0.6:
                    self.skus[sku] = str(rng.randint(1000, 9999))
            self.call(self.domain.dump_tool, {"warehouse": f"WH-{rng.randint(1, 9)}", "format": "json"})
            tracked = list(self.skus)
            size = 0
            while size < target - 400:
                sku = tracked.pop() if tracked and rng.random() < 0.05 else self.ids.sku()
                on_hand = self.skus.get(sku, str(rng.randint(0, 99)))
                row = {
                    "sku": sku,
                    "name": f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.randint(2, 60)}mm",
                    "on_hand": int(on_hand),
                    "reserved": rng.randint(0, 40),
                    "bin": f"{rng.choice('ABCDEFG')}-{rng.randint(1, 40)}-{rng.randint(1, 9)}",
                }
                lines.append(json.dumps(row, ensure_ascii=False))
                size += len(lines[-1]) + 2
                if sku in self.skus:
                    facts.append((sku, "on_hand", on_hand))
            text = self.envelope(lines, len(lines))
        else:
            self.call(self.domain.dump_tool, {"service": rng.choice(SERVICES), "since": "-2h", "level": "debug"})
            size = 0
            while size < target:
                lines.append(
                    f"{_stamp(rng)} {rng.choice(('DEBUG', 'INFO', 'WARN', 'TRACE'))} [{rng.choice(SERVICES)}] "
                    f"req={self.ids.uuid()} span={rng.getrandbits(64):016x} "
                    f"{rng.choice(('retry', 'pool', 'lease', 'gc', 'flush'))} took={rng.randint(1, 900)}ms"
                )
                size += len(lines[-1]) + 1
            text = "\n".join(lines)
        self.add(GenTurn("tool", text, self.domain.dump_tool), facts)
        self.dumps += 1

    def user_turn(self) -> None:
        rng = self.rng
        key = rng.choice(list(self.state))
        title, first, last = rng.choice(PEOPLE)
        text = rng.choice(
            (
                f"Hi, this is {title} {first} {last}. Can you pull up {key} for me?",
                f"{title} {last} asked whether {key} went through. Please check.",
                f"I'm {title} {first} {last} from finance; what is the state of {key}?",
                f"Please ask {title} {last} to take over {key} if it is still stuck.",
                "Thanks. Anything else on the open ones?",
            )
        )
        self.add(GenTurn("user", text))

    def prose_turn(self) -> None:
        """The agent reports what it knows (current values: facts too)."""
        key = self.rng.choice(list(self.state))
        fields = self.state[key]
        principal = fields[self.domain.principal]
        title, _first, last = principal.split(" ", 2)
        text = (
            f"{key} is {fields['status']} now. {principal} is the {self.domain.principal} for it; "
            f"I will let {title} {last} know if anything changes."
        )
        self.add(
            GenTurn("assistant", text),
            [(key, "status", fields["status"]), (key, self.domain.principal, principal)],
        )

    def build(self) -> Session:
        # The big answers at set points (3 in a session of 200 turns or more), the rest drawn at random.
        dumps = 3 if self.limit >= 200 else 2 if self.limit >= 60 else 1
        dump_at = {self.limit * (k + 1) // (dumps + 1) for k in range(dumps)}
        self.user_turn()  # a session opens with the user's request
        while not self.full:
            if len(self.session.turns) >= min(dump_at, default=self.limit):
                dump_at.discard(min(dump_at))
                self.dump_call()
                continue
            r = self.rng.random()
            if r < 0.16:
                self.user_turn()
            elif r < 0.26:
                self.prose_turn()
            elif r < 0.56:
                self.list_call()
            elif r < 0.8:
                self.get_call()
            else:
                self.update_call()
        latest = {(e, a): n for n, (e, a, _v, _i) in enumerate(self.planted)}
        self.session.facts = [
            PlantedFact(e, a, v, i, latest[(e, a)] == n) for n, (e, a, v, i) in enumerate(self.planted)
        ]
        return self.session


def generate(kind: str, turns: int, seed: int, *, entities: int = 8) -> Session:
    """A tool-heavy session of exactly ``turns`` turns in domain ``kind`` (one of KINDS)."""
    if kind not in DOMAINS:
        raise ValueError(f"unknown kind {kind!r}; one of {', '.join(KINDS)}")
    return _Builder(kind, seed, turns, entities).build()
