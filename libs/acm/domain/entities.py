"""Entity normalisation: one entity per real thing ("Sarah" / "Sarah Chen" / "SC" / "Ms. Chen" -> one entity).

Three pieces, all pure and deterministic (stdlib only):

- ``normalise_name``: the comparison key of a name (case, Unicode, accents, whitespace, honorifics,
  possessive "'s").
- ``aliases``: the lower-case keys under which an entity of a given type can be found later (first and
  last name, initials, an organisation without its legal suffix, acronyms, an id with or without its
  prefix ...). Stored with the entity so that a later mention finds it with one index look-up.
- ``resolve_mention``: which existing candidate a new mention denotes, or None (the caller then creates a
  new entity). It prefers a missed merge to a wrong one, because a wrong merge mixes two people's facts
  and cannot be undone without the source turns, while a missed merge only costs a duplicate.

Evidence, strongest first (a stronger stage always wins over a weaker one; two different entities in the
winning stage is "ambiguous" and gives None):

0. exact: the same key, a stated alias, or the same id once separators are ignored;
1. strong: the same first and last name (middle names ignored), an organisation's core name ("Acme Inc" /
   "Acme Corporation"), "New York" for "New York City", an id with its prefix left out;
2. weak (must be unique): first name only, last name only ("Ms. Chen"), initials ("SC"), initial and last
   name ("S. Chen"), acronym <-> expansion ("NYC"), a leading part of an organisation's name, a full name
   for a first-name-only entity;
3. fuzzy, only when nothing above matched: similarity >= 0.9, same initial letters, same last name, no
   digits (ids with one digit changed are different ids).

Never merged: different types (person "Jordan" vs place "Jordan"; generic types such as "name" may match
any one type), people whose last names differ ("Sarah Chen" vs "Sarah Lee"), records of owners the
mention's owner cannot see. Nicknames ("Bob" for "Robert") are not guessed: they match only when stated
as an alias of the entity.

Owners: ``Candidate.owner_key`` is ``owner_key(owner)``: "client", "client/customer" or
"client/customer/user". Callers pass scope-filtered candidates; when ``resolve_mention`` is also given the
mention's owner key it checks again and only links to the same owner or to an owner above it on the
mention's own chain (the tier rule of ``acm.domain.scope.visible``): a user's mention may link to a
customer-shared entity or to a client-tier canonical one (reason "canonical"), never to another user's or
another customer's. With an exact match at several tiers the most specific owner wins.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from acm.domain.scope import Owner, Tier

__all__ = [
    "Candidate",
    "Resolution",
    "aliases",
    "normalise_name",
    "owner_key",
    "resolve_mention",
    "type_kind",
]

# --- vocabulary ----------------------------------------------------------------------------------------------

_HONORIFICS = frozenset(
    "mr mrs ms miss mx dr doctor prof professor sir dame madam mme mlle herr frau rev fr sr sra srta".split()
)
_POST_NOMINALS = frozenset("jr sr ii iii iv phd md esq mba dds cpa".split())
# Legal-form suffixes, with the short spelling a speaker would also use.
_ORG_SUFFIXES = {
    "inc": "inc",
    "incorporated": "inc",
    "corp": "corp",
    "corporation": "corp",
    "co": "co",
    "company": "co",
    "ltd": "ltd",
    "limited": "ltd",
    "llc": "llc",
    "llp": "llp",
    "lp": "lp",
    "plc": "plc",
    "gmbh": "gmbh",
    "ag": "ag",
    "sa": "sa",
    "sarl": "sarl",
    "srl": "srl",
    "spa": "spa",
    "bv": "bv",
    "nv": "nv",
    "pty": "pty",
    "pte": "pte",
    "oy": "oy",
    "ab": "ab",
    "kg": "kg",
}
_LONG_SUFFIX = {"inc": "incorporated", "corp": "corporation", "co": "company", "ltd": "limited"}
_STOPWORDS = frozenset("of the and for & de la du der von van y".split())
_NAME_PARTICLES = frozenset("van von der den de del della da di du la le bin ibn al el st".split())
_PLACE_ABBREVIATIONS = {"st": "saint", "mt": "mount", "ft": "fort"}
_PLACE_GENERIC_TAIL = frozenset({"city"})

_KINDS = {
    "person": {"person", "people", "human", "per", "contact", "employee", "user", "individual"},
    "org": {"org", "organization", "organisation", "company", "corporation", "business", "vendor", "supplier"},
    "place": {"place", "location", "loc", "gpe", "city", "country", "region", "state", "town", "address"},
    "id": {"id", "identifier", "order", "order_id", "ticket", "invoice", "po", "reference", "ref", "case"},
}
_TYPE_KIND = {t: kind for kind, types in _KINDS.items() for t in types}
# Types that only say "some proper name": extract.py gives "name" for every capitalised name.
_GENERIC_TYPES = frozenset({"", "name", "entity", "unknown", "thing", "misc", "other", "mention", "proper_noun"})

_ID_LIKE = re.compile(r"^(?P<prefix>[a-z]{1,8})?[\s_-]?(?P<body>\d[\w-]*)$")
_HAS_DIGIT = re.compile(r"\d")
_SPACES = re.compile(r"\s+")
_LOOSE_HYPHEN = re.compile(r"(?<!\w)-|-(?!\w)")
_EDGE_PUNCT = "\"'“”‘’`()[]{}<>,;:!?*"

FUZZY_MIN_RATIO = 0.9


# --- normalisation -------------------------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def _fold(name: str) -> str:
    """Case, Unicode, accents, whitespace and possessive: the key of any name, whatever its type."""
    text = unicodedata.normalize("NFKC", name).replace("’", "'").replace("‘", "'").strip()
    text = text.strip(_EDGE_PUNCT + " .")
    if text.endswith("'s") or text.endswith("'S"):
        text = text[:-2]
    elif text.endswith("s'"):  # "James'" -> "James"
        text = text[:-1]
    text = "".join(ch for ch in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(ch))
    if not _HAS_DIGIT.search(text):
        # Punctuation inside a name is mostly spelling ("S. Chen", "U.S.A."); an id's separators are kept
        # (the id aliases deal with them). A hyphen inside a word is kept: "Mary-Jane" is one given name,
        # and _match treats "Jean-Luc" and "Jean Luc" as the same spelling.
        text = text.replace(".", " ").replace(",", " ").replace("_", " ").replace("'", "")
        text = _LOOSE_HYPHEN.sub(" ", text).replace(" & ", " and ")
        tokens = text.split()
        if len(tokens) > 1 and all(len(t) == 1 for t in tokens):
            return "".join(tokens)  # "U.S.A." -> "usa", "S.C." -> "sc"
    return _SPACES.sub(" ", text).strip(_EDGE_PUNCT + " ")


def _strip_titles(key: str) -> str:
    tokens = key.split(" ")
    while len(tokens) > 1 and tokens[0] in _HONORIFICS:
        tokens.pop(0)
    while len(tokens) > 1 and tokens[-1] in _POST_NOMINALS:
        tokens.pop()
    return " ".join(tokens)


def normalise_name(name: str) -> str:
    """The comparison key of a name: lower case, accents folded, whitespace collapsed, honorifics (Mr, Ms,
    Mrs, Dr, Prof ...) and post-nominals (Jr, PhD ...) and a possessive "'s" stripped.

    "Dr. Sarah  Chén's" -> "sarah chen"; a title alone is kept ("Dr" -> "dr").
    """
    return _strip_titles(_fold(name))


def _person_key(name: str) -> str:
    """normalise_name, and "Chen, Sarah" (family name first, as in a directory) read as "sarah chen"."""
    if name.count(",") == 1:
        left, right = name.split(",")
        right_tokens = _strip_titles(_fold(right)).split()
        if 1 <= len(right_tokens) <= 2 and len(_fold(left).split()) == 1 and right_tokens[0] not in _POST_NOMINALS:
            name = f"{right} {left}"
    return normalise_name(name)


@lru_cache(maxsize=8192)
def type_kind(type: str) -> str:
    """The alias family of a type: "person", "org", "place", "id", "generic" or the type itself."""
    t = type.strip().lower().replace("-", "_").replace(" ", "_")
    if t in _GENERIC_TYPES:
        return "generic"
    return _TYPE_KIND.get(t, t)


def _canonical_type(type: str) -> str:
    t = type.strip().lower().replace("-", "_").replace(" ", "_")
    kind = _TYPE_KIND.get(t)
    # Synonyms ("organisation", "company") collapse to their kind; subtypes ("city") stay themselves.
    return kind if kind is not None and t in _SYNONYM_OF_KIND[kind] else t


_SYNONYM_OF_KIND = {
    "person": {"person", "people", "human", "per", "individual"},
    "org": {"org", "organization", "organisation", "company", "corporation", "business"},
    "place": {"place", "location", "loc", "gpe"},
    "id": {"id", "identifier"},
}


@lru_cache(maxsize=8192)
def _types_compatible(a: str, b: str) -> bool:
    ka, kb = type_kind(a), type_kind(b)
    if "generic" in (ka, kb):
        return True
    ca, cb = _canonical_type(a), _canonical_type(b)
    # Same type, or a kind and one of its subtypes ("place" and "city"); never "city" and "country".
    return ca == cb or (ka == kb and (ca == ka or cb == kb))


def _is_id(key: str) -> bool:
    return bool(_HAS_DIGIT.search(key)) and _ID_LIKE.match(key) is not None


def _id_parts(key: str) -> tuple[str, str, str]:
    """(prefix, body, compact): "po-20261028-0098" -> ("po", "20261028-0098", "po202610280098")."""
    m = _ID_LIKE.match(key)
    prefix, body = (m["prefix"] or "", m["body"]) if m else ("", key)
    return prefix, body, re.sub(r"[\W_]", "", key)


def _acronyms(tokens: Sequence[str]) -> set[str]:
    """Acronyms of a multi-word name, with and without its small words ("Bank of America": "ba", "boa")."""
    out: set[str] = set()
    significant = [t for t in tokens if t not in _STOPWORDS]
    if len(significant) >= 2:
        out.add("".join(t[0] for t in significant))
    if len(tokens) >= 2 and tokens != significant and all(t[:1].isalnum() for t in tokens):
        out.add("".join(t[0] for t in tokens))
    return out


def _kind_acronyms(key: str, kind: str) -> set[str]:
    """Organisations and places from two words ("NYC", "IBM"); other things ("CRM") from three, because two
    letters of a product's name are more often a coincidence than an alias."""
    tokens = (_org_core(key)[0] if kind == "org" else key).split(" ")
    if kind in ("org", "place") or len(tokens) >= 3:
        return _acronyms(tokens)
    return set()


def _org_core(key: str) -> tuple[str, str]:
    """(core, short suffix): "acme co ltd" -> ("acme", "co")."""
    tokens = key.split(" ")
    if len(tokens) > 1 and tokens[0] == "the":
        tokens.pop(0)
    suffix = ""
    while len(tokens) > 1 and tokens[-1] in _ORG_SUFFIXES:
        suffix = suffix or _ORG_SUFFIXES[tokens[-1]]
        tokens.pop()
    while len(tokens) > 1 and tokens[-1] in ("&", "and"):
        tokens.pop()
    return " ".join(tokens), suffix


def _place_key(key: str) -> str:
    tokens = key.split(" ")
    if tokens and tokens[0] in _PLACE_ABBREVIATIONS:
        tokens[0] = _PLACE_ABBREVIATIONS[tokens[0]]
    return " ".join(tokens)


def _place_head(name: str) -> str:
    """A place without its qualifier: "Los Angeles, CA" -> "los angeles"."""
    return _place_key(_fold(name.split(",")[0]))


def _person_last(tokens: Sequence[str]) -> str:
    """The family name, with its particle ("ludwig van beethoven" -> "van beethoven")."""
    i = len(tokens) - 1
    while i > 1 and tokens[i - 1] in _NAME_PARTICLES:
        i -= 1
    return " ".join(tokens[i:])


def _key(name: str, kind: str) -> str:
    if kind == "person":
        return _person_key(name)
    if kind == "place":
        return _place_key(_fold(name))
    return _fold(name)


def aliases(name: str, type: str) -> set[str]:
    """Lower-case keys under which this entity can be found later.

    "Sarah Chen"/person -> {"sarah chen", "sarah", "chen", "sc", "s chen"}; "New York City"/place ->
    {"new york city", "new york", "nyc"}; "Acme Corporation"/org -> {"acme corporation", "acme",
    "acme corp"}; "PO-20261028-0098"/id -> {"po-20261028-0098", "20261028-0098", "po20261028-0098",
    "po202610280098"}. Short keys (a first name, initials) are shared by many entities:
    ``resolve_mention`` only follows them when they are unique.
    """
    return set(_aliases(name, type_kind(type)))


@lru_cache(maxsize=8192)
def _aliases(name: str, kind: str) -> frozenset[str]:
    key = _key(name, kind)
    if not key:
        return frozenset()
    out = {key, key.replace("-", " ")} if not _HAS_DIGIT.search(key) else {key}
    if kind == "id" or _is_id(key):
        prefix, body, compact = _id_parts(key)
        out |= {body, prefix + body, compact} if prefix else {compact}
        return frozenset(a for a in out if a)
    tokens = key.split(" ")
    if kind == "person" and len(tokens) >= 2:
        first, last = tokens[0], _person_last(tokens)
        out |= {first, last, f"{first} {last}", f"{first[0]} {last}", "".join(t[0] for t in tokens)}
    elif kind == "org":
        core, suffix = _org_core(key)
        out.add(core)
        if suffix:
            out |= {f"{core} {suffix}", f"{core} {_LONG_SUFFIX.get(suffix, suffix)}"}
    elif kind == "place":
        out |= {_fold(name), _place_head(name)}  # as written too ("st louis"), and without ", CA"
        if len(tokens) >= 2 and tokens[-1] in _PLACE_GENERIC_TAIL:
            out.add(" ".join(tokens[:-1]))
    if kind != "person":
        out |= _kind_acronyms(key, kind)
    return frozenset(a for a in out if a)


# --- resolution ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """An existing entity the mention might denote. ``aliases`` are the stated ones (e.g. a nickname the
    user gave); the derived ones are computed from ``name`` and ``type``."""

    entity_id: str
    name: str
    type: str
    aliases: frozenset[str] = frozenset()
    owner_key: str = ""


@dataclass(frozen=True, slots=True)
class Resolution:
    entity_id: str | None
    confidence: float
    reason: str  # how it matched ("exact", "first_name", "canonical", ...) or why not ("ambiguous", "no_match")


def owner_key(owner: Owner) -> str:
    """ "client", "client/customer" or "client/customer/user": a key whose prefixes are the owners above."""
    if owner.tier is Tier.CLIENT:
        return owner.client_id
    if owner.tier is Tier.CUSTOMER:
        return f"{owner.client_id}/{owner.customer_id}"
    return f"{owner.client_id}/{owner.customer_id}/{owner.user_id}"


def _owner_visible(mention_owner: str | None, cand_owner: str) -> bool:
    if mention_owner is None:  # the caller vouches that candidates are already scope-filtered
        return True
    return cand_owner == mention_owner or mention_owner.startswith(cand_owner + "/")


@dataclass(frozen=True, slots=True)
class _Form:
    """A name seen through its kind's rules."""

    key: str
    tokens: tuple[str, ...]
    core: str  # org: without legal suffix; place: without a trailing "city"; else the key
    acronyms: frozenset[str]
    initials: str
    head: str  # place: before the first comma ("Paris, Texas" -> "paris"); else the key
    is_id: bool
    id_prefix: str
    id_body: str
    id_compact: str
    upper: bool  # written in capitals ("NYC", "S.C."): may be an acronym


@lru_cache(maxsize=8192)
def _form(name: str, kind: str) -> _Form:
    key = _key(name, kind)
    tokens = tuple(key.split(" ")) if key else ()
    is_id = kind == "id" or _is_id(key)
    prefix, body, compact = _id_parts(key) if is_id else ("", "", "")
    if kind == "org":
        core = _org_core(key)[0]
    elif kind == "place" and len(tokens) >= 2 and tokens[-1] in _PLACE_GENERIC_TAIL:
        core = " ".join(tokens[:-1])
    else:
        core = key
    letters = [ch for ch in name if ch.isalpha()]
    return _Form(
        key=key,
        tokens=tokens,
        core=core,
        acronyms=frozenset(_kind_acronyms(key, kind)) if key and kind != "person" else frozenset(),
        initials="".join(t[0] for t in tokens) if len(tokens) >= 2 else "",
        head=_place_head(name) if kind == "place" else key,
        is_id=is_id,
        id_prefix=prefix,
        id_body=body,
        id_compact=compact,
        upper=len(letters) >= 2 and all(ch.isupper() for ch in letters),
    )


@lru_cache(maxsize=8192)
def _stated(aliases_: frozenset[str], kind: str) -> frozenset[str]:
    return frozenset(k for k in (_key(a, kind) for a in aliases_) if k)


_Match = tuple[int, float, str]  # (stage, confidence, reason)


def _match(m: _Form, c: _Form, kind: str, stated: frozenset[str]) -> _Match | None:
    """How strongly mention form ``m`` denotes candidate form ``c`` (both read as ``kind``)."""
    if not m.key or not c.key:
        return None
    if m.key == c.key or m.key.replace("-", " ") == c.key.replace("-", " "):
        return 0, 1.0, "exact"
    if m.key in stated:
        return 0, 0.95, "alias"
    if m.is_id or c.is_id:
        if not (m.is_id and c.is_id):
            return None
        if m.id_compact == c.id_compact:
            return 0, 0.97, "id"
        # A prefix left out ("20261028-0098" for "PO-20261028-0098"); two different prefixes never match.
        if bool(m.id_prefix) != bool(c.id_prefix) and re.sub(r"\W", "", m.id_body) == re.sub(r"\W", "", c.id_body):
            return 1, 0.85, "id_prefix"
        return None
    if kind == "person":
        return _match_person(m, c, stated)
    if c.core and m.core == c.core:
        return 1, 0.9, "org_core" if kind == "org" else "core"
    if m.upper and m.key in c.acronyms:
        return 2, 0.8, "acronym"
    if c.upper and c.key in m.acronyms:
        return 2, 0.8, "acronym"
    if kind == "org" and len(m.tokens) < len(c.core.split(" ")) and c.core.startswith(m.core + " "):
        return 2, 0.6, "prefix"
    # "Los Angeles, CA" and "Los Angeles": only when one side is unqualified ("Paris, TX" is not "Paris, FR").
    if kind == "place" and m.head == c.head and (m.head == m.key) != (c.head == c.key):
        return 2, 0.7, "place_head"
    return None


def _match_person(m: _Form, c: _Form, stated: frozenset[str]) -> _Match | None:
    mt, ct = m.tokens, c.tokens
    if len(mt) == 1:
        word = mt[0]
        if len(ct) >= 2 and word == ct[0]:
            return 2, 0.75, "first_name"
        if len(ct) >= 2 and word == _person_last(ct):
            return 2, 0.7, "last_name"
        if m.upper and len(ct) >= 2 and word == c.initials:
            return 2, 0.7, "initials"
        return None
    m_last = _person_last(mt)
    if len(ct) >= 2 and m.key == _person_last(ct):
        return 2, 0.7, "last_name"  # a family name with its particle: "van Beethoven"
    if len(ct) >= 2:
        if m_last != _person_last(ct):
            return None  # different family names are different people, however close the rest is
        if mt[0] == ct[0]:
            return 1, 0.9, "full_name"  # middle names and initials ignored
        if mt[0] in stated:
            return 1, 0.9, "alias"  # a stated nickname with the family name: "Bobby Smith" for Robert Smith
        if (len(mt[0]) == 1 and mt[0] == ct[0][0]) or (len(ct[0]) == 1 and ct[0] == mt[0][0]):
            return 2, 0.8, "initial_last"
        return None
    if ct[0] == mt[0]:
        return 2, 0.7, "expansion"  # "Sarah" was known alone, now "Sarah Chen" appears
    return None


def _fuzzy(m: _Form, c: _Form, kind: str) -> float:
    """Similarity for typos only: same initial letters, same family name, no digits; else 0."""
    if m.is_id or c.is_id or len(m.tokens) != len(c.tokens):
        return 0.0
    if [t[0] for t in m.tokens] != [t[0] for t in c.tokens]:
        return 0.0
    if kind == "person" and len(m.tokens) >= 2 and _person_last(m.tokens) != _person_last(c.tokens):
        return 0.0
    shorter, longer = sorted((len(m.key), len(c.key)))
    # ratio = 2 * matches / total <= 2 * shorter / total: skip pairs too unequal to ever reach the bar.
    if shorter < 5 or 2 * shorter < FUZZY_MIN_RATIO * (shorter + longer):
        return 0.0
    matcher = difflib.SequenceMatcher(None, m.key, c.key, autojunk=False)
    if matcher.quick_ratio() < FUZZY_MIN_RATIO:
        return 0.0
    return matcher.ratio()


def _depth(key: str) -> int:
    return key.count("/") + 1 if key else 0


def _finish(cand: Candidate, confidence: float, reason: str, mention_owner: str | None) -> Resolution:
    # A link from below to a client-tier entity is the "canonical" link DESIGN.md asks for.
    if mention_owner is not None and cand.owner_key != mention_owner and "/" not in cand.owner_key:
        reason = "canonical"
    return Resolution(cand.entity_id, round(confidence, 3), reason)


def resolve_mention(
    mention: str,
    type: str,
    candidates: Sequence[Candidate],
    owner_key: str | None = None,
) -> Resolution:
    """The one candidate ``mention`` (of ``type``) denotes, or ``Resolution(None, ...)`` for a new entity.

    ``owner_key``: the mention's owner (see ``owner_key()``); None means the caller has already filtered
    the candidates to what this owner may link to. See the module doc for the rules.
    """
    mention_kind = type_kind(type)
    usable: list[tuple[Candidate, str]] = []  # (candidate, the kind both sides are read as)
    for cand in candidates:
        if not _owner_visible(owner_key, cand.owner_key) or not _types_compatible(type, cand.type):
            continue
        cand_kind = type_kind(cand.type)
        usable.append((cand, cand_kind if mention_kind == "generic" else mention_kind))
    if not usable:
        return Resolution(None, 0.0, _why_not(mention, type, candidates, owner_key) if candidates else "no_candidates")

    matched: list[tuple[Candidate, _Match]] = []
    for cand, kind in usable:
        found = _match(_form(mention, kind), _form(cand.name, kind), kind, _stated(cand.aliases, kind))
        if found is not None:
            matched.append((cand, found))

    if matched:
        best_stage = min(found[0] for _, found in matched)
        top = [(cand, found) for cand, found in matched if found[0] == best_stage]
        if best_stage == 0:
            # The same name at several tiers: the most specific owner's entity is the one meant.
            deepest = max(_depth(cand.owner_key) for cand, _ in top)
            top = [(cand, found) for cand, found in top if _depth(cand.owner_key) == deepest]
        if len({cand.entity_id for cand, _ in top}) > 1:
            return Resolution(None, 0.0, "ambiguous")
        cand, (_, confidence, reason) = max(top, key=lambda cf: cf[1][1])
        if reason == "expansion" and _expansion_conflicts(mention, cand, usable):
            return Resolution(None, 0.0, "ambiguous")
        return _finish(cand, confidence, reason, owner_key)

    scored: list[tuple[float, Candidate]] = []
    for cand, kind in usable:
        ratio = _fuzzy(_form(mention, kind), _form(cand.name, kind), kind)
        if ratio >= FUZZY_MIN_RATIO:
            scored.append((ratio, cand))
    if scored:
        scored.sort(key=lambda rc: -rc[0])
        best_ratio, best = scored[0]
        if any(r > best_ratio - 0.02 and c.entity_id != best.entity_id for r, c in scored[1:]):
            return Resolution(None, 0.0, "ambiguous")
        return _finish(best, 0.6 * best_ratio, "fuzzy", owner_key)
    return Resolution(None, 0.0, _why_not(mention, type, candidates, owner_key))


def _expansion_conflicts(mention: str, chosen: Candidate, usable: Sequence[tuple[Candidate, str]]) -> bool:
    """ "Sarah Chen" may extend a lone "Sarah" only if no other Sarah with another family name is known."""
    m = _form(mention, "person")
    first, last = m.tokens[0], _person_last(m.tokens)
    for cand, kind in usable:
        if cand.entity_id == chosen.entity_id or kind != "person":
            continue
        c = _form(cand.name, "person")
        if len(c.tokens) >= 2 and c.tokens[0] == first and _person_last(c.tokens) != last:
            return True
    return False


def _why_not(mention: str, type: str, candidates: Sequence[Candidate], owner: str | None) -> str:
    """Diagnostics for a miss: the same key existed but under another type or another owner."""
    key = _fold(mention)
    for cand in candidates:
        if _fold(cand.name) != key:
            continue
        if not _types_compatible(type, cand.type):
            return "type_mismatch"
        if not _owner_visible(owner, cand.owner_key):
            return "other_owner"
    return "no_match"
