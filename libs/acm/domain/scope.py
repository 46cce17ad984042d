"""Scope tiers and the visibility rule every store enforces.

A record is owned at one tier: ``client`` (global knowledge of the operator), ``customer`` (shared
inside one organisation) or ``user`` (private). A reader in scope S sees record R iff they share the
client and R is client-tier, or they share the customer and R is customer-tier, or they share the
customer and the user and R is user-tier.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from acm.domain.errors import InvalidRequest

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")


class ScopeError(InvalidRequest):
    """A scope or owner is missing a part or has a malformed id."""


class Tier(StrEnum):
    USER = "user"
    CUSTOMER = "customer"
    CLIENT = "client"


ALL_TIERS: tuple[Tier, ...] = (Tier.USER, Tier.CUSTOMER, Tier.CLIENT)


@lru_cache(maxsize=8192)
def _well_formed(value: str) -> bool:
    # Memoised: every record read back from a store re-validates the same few ids.
    return _ID.match(value) is not None


def check_id(kind: str, value: str, *, required: bool = True) -> str:
    if not value:
        if required:
            raise ScopeError(f"{kind} is required")
        return value
    if not _well_formed(value):
        raise ScopeError(
            f"{kind} {value[:40]!r} is malformed: use 1-128 characters from letters, digits and . _ @ -, "
            "starting with a letter or digit"
        )
    return value


@dataclass(frozen=True, slots=True)
class Scope:
    """Who is asking: the client comes from the credential; customer and user live inside it."""

    client_id: str
    customer_id: str
    user_id: str
    agent_id: str = ""
    session_id: str = ""

    def __post_init__(self) -> None:
        check_id("client_id", self.client_id)
        check_id("customer_id", self.customer_id)
        check_id("user_id", self.user_id)
        check_id("agent_id", self.agent_id, required=False)
        check_id("session_id", self.session_id, required=False)

    def owner(self, tier: Tier) -> Owner:
        """The owner of a record this scope writes at ``tier``."""
        if tier is Tier.CLIENT:
            return Owner(self.client_id, tier)
        if tier is Tier.CUSTOMER:
            return Owner(self.client_id, tier, self.customer_id)
        return Owner(self.client_id, tier, self.customer_id, self.user_id)

    @property
    def session_key(self) -> str:
        """Partition key: keeps one session's events in order on the bus."""
        return "/".join((self.client_id, self.customer_id, self.user_id, self.session_id))


@dataclass(frozen=True, slots=True)
class Owner:
    """Which tier a record belongs to, with the ids that tier needs (others are empty)."""

    client_id: str
    tier: Tier
    customer_id: str = ""
    user_id: str = ""

    def __post_init__(self) -> None:
        check_id("client_id", self.client_id)
        needs_customer = self.tier in (Tier.CUSTOMER, Tier.USER)
        check_id("customer_id", self.customer_id, required=needs_customer)
        check_id("user_id", self.user_id, required=self.tier is Tier.USER)
        if not needs_customer and self.customer_id:
            raise ScopeError("a client-tier record must not carry a customer_id")
        if self.tier is not Tier.USER and self.user_id:
            raise ScopeError(f"a {self.tier}-tier record must not carry a user_id")


def visible(scope: Scope, owner: Owner, tiers: tuple[Tier, ...] = ALL_TIERS) -> bool:
    """The one visibility rule; every store adapter expresses it in its own query language."""
    if owner.tier not in tiers or owner.client_id != scope.client_id:
        return False
    if owner.tier is Tier.CLIENT:
        return True
    if owner.customer_id != scope.customer_id:
        return False
    return owner.tier is Tier.CUSTOMER or owner.user_id == scope.user_id


class ForgetLevel(StrEnum):
    SESSION = "session"
    USER = "user"
    CUSTOMER = "customer"
    CLIENT = "client"


def forgets(scope: Scope, level: ForgetLevel, owner: Owner, session_id: str = "") -> bool:
    """Whether erasing ``level`` of ``scope`` removes a record with this owner (and session)."""
    if owner.client_id != scope.client_id:
        return False
    if level is ForgetLevel.CLIENT:
        return True
    if owner.customer_id != scope.customer_id:
        return False
    if level is ForgetLevel.CUSTOMER:
        return True
    if owner.user_id != scope.user_id:
        return False
    return level is ForgetLevel.USER or session_id == scope.session_id


def owner_columns(owner: Owner) -> dict[str, str]:
    """The owner as the flat columns (node properties, payload keys) every store keeps, "" where its tier has
    none: what visible() and forgets() are stated over."""
    return {
        "client_id": owner.client_id,
        "customer_id": owner.customer_id,
        "user_id": owner.user_id,
        "tier": owner.tier.value,
    }


_FORGET_IDS = ("client_id", "customer_id", "user_id", "session_id")
_NARROWING = {ForgetLevel.CLIENT: 1, ForgetLevel.CUSTOMER: 2, ForgetLevel.USER: 3, ForgetLevel.SESSION: 4}


def forgotten_ids(level: ForgetLevel) -> tuple[str, ...]:
    """The ids a Forget of ``level`` matches on, widest first: each level narrows the previous one by one more
    (every store states forgets() over these columns or properties)."""
    return _FORGET_IDS[: _NARROWING[level]]


def forget_columns(scope: Scope, level: ForgetLevel) -> list[tuple[str, str]]:
    """forgets() as (column, value) pairs that all must match, for the SQL stores."""
    if level is ForgetLevel.SESSION and not scope.session_id:
        # forgets() would match every session-less row of the user; that is never what is meant.
        raise ScopeError("forgetting a session needs scope.session_id")
    return [(column, getattr(scope, column)) for column in forgotten_ids(level)]


class KeyRole(StrEnum):
    """What an API key may do inside its client. Keys stored before roles existed are admin keys."""

    ADMIN = "admin"  # every RPC of its client, Forget at any level, DefineAgent
    AGENT = "agent"  # an agent's work, inside the customers (or users) its key names


class Action(StrEnum):
    INGEST = "ingest"
    FETCH = "fetch"
    GET_JOB = "get_job"
    COMPACT = "compact"
    READ_AGENT = "read_agent"  # GetAgent, ListAgents
    DEFINE_AGENT = "define_agent"
    FORGET_SESSION = "forget_session"
    FORGET_USER = "forget_user"
    FORGET_CUSTOMER = "forget_customer"
    FORGET_CLIENT = "forget_client"

    @classmethod
    def forget(cls, level: ForgetLevel) -> Action:
        return cls(f"forget_{level.value}")


AGENT_ACTIONS = frozenset(
    {
        Action.INGEST,
        Action.FETCH,
        Action.GET_JOB,
        Action.COMPACT,
        Action.READ_AGENT,
        Action.FORGET_SESSION,
        Action.FORGET_USER,
    }
)
_ADMIN_ONLY = {
    Action.DEFINE_AGENT: "define or change an agent's schema",
    Action.FORGET_CUSTOMER: "forget a whole customer",
    Action.FORGET_CLIENT: "forget the whole client",
}


@dataclass(frozen=True, slots=True)
class Grant:
    """An API key's rights: its role and, for an agent key, the customers (and optionally the users of
    those customers) it acts for."""

    role: KeyRole = KeyRole.ADMIN
    customers: tuple[str, ...] = ()
    users: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for c in self.customers:
            check_id("customers", c)
        for u in self.users:
            check_id("users", u)
        if self.role is KeyRole.AGENT and not self.customers:
            raise ScopeError("an agent key must name the customers it acts for")
        if self.role is KeyRole.ADMIN and (self.customers or self.users):
            raise ScopeError("an admin key acts for its whole client: name customers and users only on agent keys")


ADMIN = Grant()


def _listed(values: tuple[str, ...]) -> str:
    shown = ", ".join(repr(v) for v in values[:5])
    return shown + (f" and {len(values) - 5} more" if len(values) > 5 else "")


def denial(grant: Grant, scope: Scope, action: Action) -> str:
    """Why a key with ``grant`` may not do ``action`` in ``scope``, as a message a person can act on;
    "" when it may."""
    if grant.role is KeyRole.ADMIN:
        return ""
    if action not in AGENT_ACTIONS:
        what = _ADMIN_ONLY.get(action, action.value)
        return f"this API key has the role 'agent', which may not {what}: use an admin key of the client"
    if scope.customer_id not in grant.customers:
        return (
            f"this agent key acts only for customer {_listed(grant.customers)}, not {scope.customer_id!r}: "
            "use a key that names this customer (acm keys create --role agent --customers …)"
        )
    if grant.users and scope.user_id not in grant.users:
        return (
            f"this agent key acts only for user {_listed(grant.users)}, not {scope.user_id!r}: "
            "use a key that names this user (acm keys create --role agent --customers … --users …)"
        )
    return ""


def edit_denial(grant: Grant, tier: Tier, what: str, memory_id: str) -> str:
    """Why a key with ``grant`` may not ``what`` (update, delete) memory ``memory_id`` of ``tier``, as a message a
    person can act on; "" when it may. An agent key changes only its users' own (user-tier) memories; the shared
    tiers are the admin's. (The gateway's Memory API and ingest, for edits published to the bus directly.)"""
    if tier is Tier.USER or grant.role is KeyRole.ADMIN:
        return ""
    return (
        f"this API key has the role 'agent', which may {what} only user-tier memories; "
        f"memory {memory_id!r} is {tier}-tier: use an admin key of the client"
    )
