"""The archetype library: a ready schema for each common kind of agent, and matching a plain-words
description to one of them (keywords, plus embeddings when an embedder is given).

Each archetype is data: its categories and what to extract for each, cue words that put a fact in a
category, category → scope tier and retention layer, retention TTLs, retrieval preset and weights,
entity types, pinned fields, PII and gate rules, and the prefetch budget per session. DefineAgent drafts
from one of them and merges the caller's overrides over it (acm.domain.schema.merge), then validates."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from acm.domain.schema import AgentSchema, SchemaInvalid, default_schema, merge, parse, to_data

GENERAL = "general"
# A description must score at least this to be matched; below it the general schema is used.
MIN_KEYWORD_SCORE = 0.05
MIN_EMBEDDING_SCORE = 0.30

Embed = Callable[[list[str]], Sequence[Sequence[float]]]


@dataclass(frozen=True, slots=True)
class Archetype:
    name: str
    summary: str  # embedded and compared with the description
    keywords: tuple[str, ...]  # matched in the description
    template: dict[str, Any]  # schema fields (no agent_id / version)


def _a(name: str, summary: str, keywords: str, **template: Any) -> Archetype:
    return Archetype(name, summary, tuple(keywords.split()), {"archetype": name, **template})


ARCHETYPES: dict[str, Archetype] = {
    a.name: a
    for a in (
        _a(
            "customer_support",
            "Customer support and billing agent: answers customers about orders, refunds, invoices, "
            "subscriptions, payments and product problems, opens and follows tickets.",
            "support customer customers ticket tickets billing invoice invoices refund refunds order orders "
            "subscription helpdesk complaint payment payments charge account",
            categories=["turn", "billing", "order", "product_issue", "issue", "preference", "contact"],
            extract={
                "issue": "the customer's problem, its status and what was tried",
                "order": "order ids, items, delivery state and dates",
                "billing": "invoices, charges, refunds, amounts with currency, payment methods",
                "preference": "how the customer wants to be contacted or served",
                "contact": "names, roles and channels of people on the customer side",
                "product_issue": "known problems of a product that affect every user of the organisation",
            },
            category_keywords={
                "billing": ["refund", "invoice", "charge", "charged", "billing", "payment", "paid", "credit"],
                "order": ["order", "delivery", "shipped", "package", "arrived", "tracking"],
                "product_issue": ["outage", "known issue", "all our users", "everyone in"],
                "issue": ["broken", "error", "not working", "issue", "problem", "fail", "fails", "crash"],
                "preference": ["prefer", "rather", "please always", "don't call", "contact me"],
                "contact": ["manager", "colleague", "my boss", "reach me"],
            },
            category_tiers={"product_issue": "customer", "contact": "customer"},
            category_layers={"turn": "short", "issue": "mid", "order": "mid", "billing": "long", "preference": "long"},
            fallback_category="",
            related_categories={"order": ["billing", "issue"], "billing": ["order"], "issue": ["product_issue"]},
            open_task_categories=["issue"],
            entity_types=["customer", "order", "ticket", "invoice", "product", "amount"],
            pinned_fields=["ticket_id", "order_id", "invoice_id", "amount", "currency", "refund_status"],
            retention={"short_ttl_days": 2, "mid_ttl_days": 30, "long_ttl_days": 365, "promote_after_mentions": 2},
            retrieval={"preset": "recent", "alpha_similarity": 0.6, "beta_recency": 0.3, "gamma_frequency": 0.1},
            privacy={"redact_emails": True, "redact_phones": True},
            prefetch={"max_entries": 150, "max_bytes": 196_608},
        ),
        _a(
            "coding_agent",
            "Coding agent: reads and edits a code repository, runs builds and tests, fixes errors, "
            "follows the team's conventions and architecture decisions.",
            "code coding repository repo developer programming build test tests bug bugs refactor commit "
            "branch pull compiler python typescript software engineer api",
            categories=["turn", "decision", "convention", "error", "code_fact", "task", "preference"],
            extract={
                "decision": "architecture and design decisions with their reason",
                "convention": "team conventions: style, tools, layout, review rules",
                "error": "errors and failing tests with file, line and cause, and the fix once known",
                "code_fact": "facts about files, modules, APIs and dependencies",
                "task": "open work items and their state",
                "preference": "how the developer likes to work",
            },
            category_keywords={
                "decision": ["decided", "we chose", "we will use", "instead of", "architecture"],
                "convention": ["convention", "always use", "never use", "style", "lint", "we use"],
                "error": ["error", "exception", "traceback", "fails", "failing", "crash", "broken"],
                "task": ["todo", "need to", "next step", "open task", "remaining"],
                "preference": ["prefer", "i like", "rather"],
                "code_fact": [".py", ".ts", "function", "module", "class", "branch", "commit", "api", "file"],
            },
            category_tiers={"decision": "customer", "convention": "customer"},
            category_layers={"turn": "short", "error": "mid", "task": "mid", "decision": "long", "convention": "long"},
            fallback_category="",
            related_categories={"error": ["code_fact", "decision"], "task": ["decision"], "code_fact": ["convention"]},
            open_task_categories=["task"],
            entity_types=["file", "module", "function", "branch", "service", "error"],
            pinned_fields=["file_path", "branch", "commit", "error_message", "test_name"],
            retention={"short_ttl_days": 1, "mid_ttl_days": 14, "long_ttl_days": 730, "promote_after_mentions": 3},
            retrieval={"preset": "precise", "alpha_similarity": 0.85, "beta_recency": 0.1, "gamma_frequency": 0.05},
            gate={"drop_log_noise": True, "drop_repeated_errors": True, "drop_seen_stack_traces": True},
            prefetch={"max_entries": 250, "max_bytes": 327_680},
        ),
        _a(
            "sales_crm",
            "Sales and CRM agent: tracks leads, accounts, deals, pipeline stages, quotes and follow-ups "
            "with prospects and customers.",
            "sales crm lead leads deal deals pipeline prospect prospects quote quotes account accounts "
            "opportunity opportunities follow-up revenue contract renewal",
            categories=["turn", "deal", "follow_up", "objection", "contact", "account", "preference", "fact"],
            extract={
                "deal": "deal name, stage, value with currency, close date",
                "contact": "people, roles, decision power, channels",
                "account": "company facts: size, industry, tools in use",
                "objection": "concerns raised and how they were answered",
                "follow_up": "promised next steps with dates",
                "preference": "how the prospect wants to be approached",
                "fact": "anything else said about the account",
            },
            category_keywords={
                "deal": ["deal", "quote", "price", "discount", "contract", "renewal", "budget", "stage"],
                "follow_up": ["follow up", "call back", "next week", "send over", "demo"],
                "objection": ["concern", "too expensive", "competitor", "worried", "objection"],
                "contact": ["ceo", "cto", "head of", "manager", "decision maker", "director"],
                "account": ["employees", "company", "headquarters", "industry", "we use"],
                "preference": ["prefer", "rather"],
            },
            category_tiers={"account": "customer", "contact": "customer", "deal": "customer"},
            category_layers={"turn": "short", "follow_up": "mid", "deal": "long", "account": "long"},
            fallback_category="fact",
            related_categories={"deal": ["contact", "objection"], "follow_up": ["deal"]},
            open_task_categories=["follow_up"],
            entity_types=["company", "person", "deal", "product", "amount"],
            pinned_fields=["deal_id", "stage", "amount", "currency", "close_date", "owner"],
            retention={"short_ttl_days": 3, "mid_ttl_days": 60, "long_ttl_days": 730, "promote_after_mentions": 2},
            retrieval={"preset": "balanced", "alpha_similarity": 0.7, "beta_recency": 0.2, "gamma_frequency": 0.1},
            prefetch={"max_entries": 200, "max_bytes": 262_144},
        ),
        _a(
            "it_operations",
            "IT operations and incident agent: handles alerts, incidents, outages, on-call escalations, "
            "runbooks, hosts and services, postmortems.",
            "incident incidents outage alert alerts on-call oncall sre ops operations runbook postmortem "
            "server servers host hosts latency downtime monitoring deploy deployment kubernetes",
            categories=["turn", "incident", "action", "runbook", "error", "system", "fact"],
            extract={
                "incident": "incident id, severity, impact, status and timeline",
                "action": "what was done, by whom, when, with what result",
                "system": "hosts, services, versions, dependencies",
                "runbook": "procedures that worked",
                "error": "error messages and symptoms",
                "fact": "other operational facts",
            },
            category_keywords={
                "incident": ["incident", "outage", "sev", "severity", "impact", "down", "degraded"],
                "action": ["restarted", "rolled back", "scaled", "deployed", "escalated", "paged", "mitigated"],
                "runbook": ["runbook", "procedure", "steps to"],
                "error": ["error", "exception", "timeout", "5xx", "failed"],
                "system": ["host", "server", "cluster", "service", "database", "version"],
            },
            category_tiers={"runbook": "customer", "system": "customer"},
            category_layers={"turn": "short", "incident": "mid", "action": "mid", "runbook": "long", "system": "long"},
            fallback_category="fact",
            related_categories={"incident": ["action", "system", "runbook"], "error": ["system", "runbook"]},
            open_task_categories=["incident"],
            entity_types=["incident", "host", "service", "alert", "person"],
            pinned_fields=["incident_id", "severity", "status", "started_at", "owner"],
            retention={"short_ttl_days": 1, "mid_ttl_days": 90, "long_ttl_days": 1095, "promote_after_mentions": 2},
            retrieval={"preset": "recent", "alpha_similarity": 0.55, "beta_recency": 0.35, "gamma_frequency": 0.1},
            gate={"drop_log_noise": True, "drop_repeated_errors": True, "drop_seen_stack_traces": True},
            prefetch={"max_entries": 200, "max_bytes": 262_144},
        ),
        _a(
            "procurement",
            "Procurement and finance approvals agent: purchase requests, purchase orders, suppliers, "
            "budgets, approval chains, invoices to match and pay.",
            "procurement purchase purchasing po supplier suppliers vendor vendors approval approvals approve "
            "budget finance spend invoice requisition sourcing",
            categories=["turn", "policy", "approval", "request", "supplier", "budget", "fact"],
            extract={
                "request": "purchase requests and orders: id, items, amount with currency, requester",
                "approval": "who approved or rejected what, when, and the state of the chain",
                "supplier": "supplier names, terms, contacts",
                "budget": "budget lines, remaining amounts",
                "policy": "spend rules and thresholds",
                "fact": "other facts about the purchase",
            },
            category_keywords={
                "approval": ["approve", "approved", "approval", "reject", "rejected", "sign off", "pending"],
                "request": ["purchase", "po-", "order", "requisition", "request"],
                "supplier": ["supplier", "vendor", "terms"],
                "budget": ["budget", "cost center", "remaining", "spend"],
                "policy": ["policy", "threshold", "must be approved", "limit"],
            },
            category_tiers={"supplier": "customer", "policy": "customer", "budget": "customer"},
            category_layers={"turn": "short", "approval": "long", "request": "long", "policy": "long"},
            fallback_category="fact",
            related_categories={"request": ["approval", "budget", "supplier"], "approval": ["policy"]},
            open_task_categories=["approval"],
            entity_types=["purchase_order", "supplier", "approver", "budget", "amount"],
            pinned_fields=["po_number", "amount", "currency", "approver", "approval_status", "supplier"],
            retention={"short_ttl_days": 2, "mid_ttl_days": 90, "long_ttl_days": 2555, "promote_after_mentions": 2},
            retrieval={"preset": "precise", "alpha_similarity": 0.7, "beta_recency": 0.2, "gamma_frequency": 0.1},
            prefetch={"max_entries": 150, "max_bytes": 196_608},
        ),
        _a(
            "personal_assistant",
            "Personal assistant: remembers the user's life, family and friends, plans, events, habits and "
            "preferences across long conversations.",
            "personal assistant companion life friend friends family hobby hobbies calendar plans trip travel "
            "habits remember diary chat conversation",
            categories=["turn", "plan", "preference", "person", "event", "fact"],
            extract={
                "fact": "what the user states about themselves",
                "preference": "likes, dislikes, habits",
                "event": "things that happened, with their date",
                "person": "people in the user's life and how they relate",
                "plan": "intentions and upcoming events, with their date",
            },
            category_keywords={
                "plan": ["going to", "planning", "will go", "next week", "next month", "tomorrow"],
                "preference": ["love", "like", "prefer", "favorite", "favourite", "hate", "enjoy"],
                "person": ["my friend", "my mom", "my dad", "my sister", "my brother", "my husband", "my wife"],
                "event": ["yesterday", "last week", "went to", "visited", "attended"],
            },
            category_layers={"turn": "short", "preference": "long", "person": "long"},
            fallback_category="fact",
            related_categories={"plan": ["event", "person"], "event": ["person"], "person": ["event"]},
            open_task_categories=["plan"],
            entity_types=["person", "place", "event", "date"],
            pinned_fields=["name", "relationship", "date"],
            retention={"short_ttl_days": 7, "mid_ttl_days": 180, "long_ttl_days": 3650, "promote_after_mentions": 2},
            retrieval={"preset": "recall", "alpha_similarity": 0.8, "beta_recency": 0.1, "gamma_frequency": 0.1},
            prefetch={"max_entries": 300, "max_bytes": 393_216},
        ),
    )
}

NAMES: tuple[str, ...] = (GENERAL, *ARCHETYPES)

_WORD = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True, slots=True)
class Match:
    archetype: str
    keyword_score: float
    embedding_score: float | None
    rationale: str


def keyword_scores(description: str) -> dict[str, float]:
    """Share of the description's words that are an archetype's keywords (0 when it names none)."""
    words = _WORD.findall(description.lower())
    if not words:
        return {name: 0.0 for name in ARCHETYPES}
    return {name: sum(1 for w in words if w in a.keywords) / len(words) for name, a in ARCHETYPES.items()}


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def embedding_scores(description: str, embed: Embed) -> dict[str, float]:
    names = list(ARCHETYPES)
    vectors = embed([description, *(ARCHETYPES[n].summary for n in names)])
    return {n: _cosine(vectors[0], v) for n, v in zip(names, vectors[1:], strict=True)}


def match(description: str, embed: Embed | None = None) -> Match:
    """The archetype closest to ``description``: keywords decide when they are clear, the embedding
    (when given) breaks ties and catches descriptions that use none of the keywords."""
    kw = keyword_scores(description)
    emb = embedding_scores(description, embed) if embed is not None and description.strip() else None
    # Keywords weigh more: they are precise when present; the embedding is the fallback signal.
    combined = {n: 2.0 * kw[n] + (emb[n] if emb else 0.0) for n in ARCHETYPES}
    best = max(combined, key=lambda n: combined[n])
    if kw[best] < MIN_KEYWORD_SCORE and (emb is None or emb[best] < MIN_EMBEDDING_SCORE):
        why = "no archetype matched the description"
        return Match(GENERAL, kw[best], emb[best] if emb else None, f"{why}; using the general schema")
    emb_text = f", embedding {emb[best]:.2f}" if emb else ""
    return Match(best, kw[best], emb[best] if emb else None, f"matched {best!r} (keywords {kw[best]:.2f}{emb_text})")


# The fields that describe an agent's categories: a drafted set replaces the archetype's whole.
CATEGORY_FIELDS = (
    "categories",
    "extract",
    "category_keywords",
    "category_tiers",
    "category_layers",
    "fallback_category",
    "related_categories",
    "open_task_categories",
    "entity_types",
    "pinned_fields",
)


def draft(
    agent_id: str,
    archetype: str,
    description: str,
    overrides: dict[str, Any] | None = None,
    *,
    replacing: Sequence[str] = (),
) -> AgentSchema:
    """The archetype's schema for ``agent_id`` with ``overrides`` merged over it, validated (version 1;
    the caller sets the version). Fields in ``replacing`` are not taken from the archetype at all.
    Raises SchemaInvalid naming the field."""
    if archetype == GENERAL:
        base = to_data(default_schema(agent_id, description))
    elif archetype in ARCHETYPES:
        base = {**ARCHETYPES[archetype].template, "agent_id": agent_id, "version": 1, "description": description}
    else:
        raise SchemaInvalid(f"archetype {archetype!r} does not exist; use one of: {', '.join(NAMES)}")
    base = {k: v for k, v in base.items() if k not in replacing}
    data = merge(base, overrides or {})
    for fixed in ("agent_id", "version"):
        if fixed in (overrides or {}):
            raise SchemaInvalid(f"{fixed} cannot be overridden")
    if data.get("archetype") not in (*NAMES, "custom"):
        raise SchemaInvalid(f"archetype {data.get('archetype')!r} does not exist; use one of: {', '.join(NAMES)}")
    return parse(data)
