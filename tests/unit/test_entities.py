"""Entity normalisation: keys, aliases, and which existing entity a mention denotes (or none)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acm.domain.entities import Candidate, aliases, normalise_name, owner_key, resolve_mention, type_kind
from acm.domain.scope import Owner, Tier

DATA = Path(__file__).resolve().parents[1] / "data" / "entity_resolution.jsonl"
U1 = "c1/cuA/u1"


def cand(eid: str, name: str, type: str = "person", owner: str = U1, stated: tuple[str, ...] = ()) -> Candidate:
    return Candidate(eid, name, type, frozenset(stated), owner)


SARAH_CHEN = cand("sc", "Sarah Chen")
SARAH_LEE = cand("sl", "Sarah Lee")
TOM_BAKER = cand("tb", "Tom Baker")


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("Sarah Chen", "sarah chen"),
        ("  SARAH   chen ", "sarah chen"),
        ("Dr. Sarah Chen", "sarah chen"),
        ("Ms. Chen", "chen"),
        ("Mrs Lee", "lee"),
        ("Prof. Alan Turing", "alan turing"),
        ("Sarah Chen's", "sarah chen"),
        ("Sarah Chen’s", "sarah chen"),
        ("James'", "james"),
        ("Zoë Müller", "zoe muller"),
        ("Robert Smith Jr.", "robert smith"),
        ("Sarah Chen, PhD", "sarah chen"),
        ("Los Angeles, CA", "los angeles ca"),
        ("U.S.A.", "usa"),
        ("Mary-Jane Watson", "mary-jane watson"),
        ("Dr", "dr"),
        ("ＳＡＲＡＨ", "sarah"),
    ],
)
def test_normalise_name(raw: str, key: str) -> None:
    assert normalise_name(raw) == key


@pytest.mark.parametrize(
    ("name", "type", "expected"),
    [
        ("Sarah Chen", "person", {"sarah chen", "sarah", "chen", "sc", "s chen"}),
        ("New York City", "place", {"new york city", "nyc", "new york"}),
        ("PO-20261028-0098", "id", {"po-20261028-0098", "20261028-0098", "po20261028-0098"}),
        ("Acme Corporation", "org", {"acme corporation", "acme", "acme corp"}),
        ("Acme Co., Ltd.", "organisation", {"acme"}),
        ("International Business Machines", "org", {"ibm"}),
        ("Bank of America", "company", {"boa"}),
        ("Customer Relationship Management", "product", {"crm"}),
        ("St. Louis", "city", {"saint louis", "st louis"}),
        ("Los Angeles, CA", "place", {"los angeles"}),
    ],
)
def test_aliases_contain(name: str, type: str, expected: set[str]) -> None:
    found = aliases(name, type)
    assert expected <= found
    assert all(a == a.lower() for a in found)


def test_short_product_names_get_no_acronym() -> None:
    assert aliases("ACM Pro", "product") == {"acm pro"}


def test_type_kinds() -> None:
    assert [type_kind(t) for t in ("Person", "organisation", "city", "order", "name", "product")] == [
        "person",
        "org",
        "place",
        "id",
        "generic",
        "product",
    ]


def test_exact_alias_of_the_same_type_wins() -> None:
    r = resolve_mention("sarah  chen", "person", [SARAH_LEE, SARAH_CHEN])
    assert (r.entity_id, r.reason, r.confidence) == ("sc", "exact", 1.0)


def test_surname_first_with_a_comma() -> None:
    assert resolve_mention("Chen, Sarah", "person", [SARAH_CHEN, SARAH_LEE]).entity_id == "sc"
    assert resolve_mention("Chen, PhD", "person", [SARAH_CHEN]).entity_id == "sc"  # a post-nominal, not a name


def test_first_name_links_only_when_unique() -> None:
    assert resolve_mention("Sarah", "person", [SARAH_CHEN, TOM_BAKER]).entity_id == "sc"
    two_sarahs = resolve_mention("Sarah", "person", [SARAH_CHEN, SARAH_LEE])
    assert (two_sarahs.entity_id, two_sarahs.reason) == (None, "ambiguous")


def test_honorific_and_last_name() -> None:
    assert resolve_mention("Ms. Chen", "person", [SARAH_CHEN, TOM_BAKER]).entity_id == "sc"
    assert resolve_mention("Dr. Chen", "person", [SARAH_CHEN, cand("dc", "David Chen")]).entity_id is None


def test_initials_need_capitals_and_uniqueness() -> None:
    assert resolve_mention("SC", "person", [SARAH_CHEN, TOM_BAKER]).entity_id == "sc"
    assert resolve_mention("S.C.", "person", [SARAH_CHEN]).entity_id == "sc"
    assert resolve_mention("sc", "person", [SARAH_CHEN]).entity_id is None
    assert resolve_mention("SC", "person", [SARAH_CHEN, cand("scole", "Sam Cole")]).entity_id is None


def test_different_last_names_never_merge() -> None:
    for mention in ("Sarah Lee", "Sarah Chan", "Sarah Cheng"):
        assert resolve_mention(mention, "person", [SARAH_CHEN]).entity_id is None


def test_fuzzy_typo_is_the_last_resort() -> None:
    r = resolve_mention("Sara Chen", "person", [SARAH_CHEN, TOM_BAKER])
    assert (r.entity_id, r.reason) == ("sc", "fuzzy")
    assert r.confidence < 0.9
    # Exact beats fuzzy when both exist.
    assert resolve_mention("Sara Chen", "person", [SARAH_CHEN, cand("sara", "Sara Chen")]).entity_id == "sara"
    # Other initial letter: not a typo of the same name.
    assert resolve_mention("Katherine Johnson", "person", [cand("cj", "Catherine Johnson")]).entity_id is None


def test_types_never_mix() -> None:
    jordan_place = cand("jo", "Jordan", "place")
    r = resolve_mention("Jordan", "person", [jordan_place])
    assert (r.entity_id, r.reason) == (None, "type_mismatch")
    assert resolve_mention("Jordan", "place", [cand("mj", "Michael Jordan"), jordan_place]).entity_id == "jo"
    # A generic type ("name" from the naive extractor) may match one type, not choose between two.
    assert resolve_mention("Jordan", "name", [jordan_place]).entity_id == "jo"
    assert resolve_mention("Jordan", "name", [cand("jp", "Jordan"), jordan_place]).entity_id is None
    # A kind matches its subtypes, not sibling subtypes.
    assert resolve_mention("Berlin", "city", [cand("b", "Berlin", "place")]).entity_id == "b"
    assert resolve_mention("Berlin", "city", [cand("b", "Berlin", "country")]).entity_id is None


def test_acronyms_both_ways() -> None:
    assert resolve_mention("NYC", "place", [cand("nyc", "New York City", "place")]).entity_id == "nyc"
    assert resolve_mention("IBM", "org", [cand("ibm", "International Business Machines Corp.", "org")]).reason == (
        "acronym"
    )
    assert resolve_mention("International Business Machines", "org", [cand("ibm", "IBM", "org")]).entity_id == "ibm"
    sf = [cand("sf", "San Francisco", "place"), cand("sfe", "Santa Fe", "place")]
    assert resolve_mention("SF", "place", sf).entity_id is None


def test_organisation_suffixes() -> None:
    acme = cand("acme", "Acme Corporation", "org")
    for mention in ("Acme", "Acme Inc.", "Acme Corp", "ACME Co., Ltd."):
        assert resolve_mention(mention, "org", [acme]).entity_id == "acme", mention
    assert resolve_mention("Acme Holdings", "org", [acme]).entity_id is None
    labs_foods = [cand("l", "Acme Labs", "org"), cand("f", "Acme Foods", "org")]
    assert resolve_mention("Acme", "org", labs_foods).entity_id is None


def test_ids_with_and_without_prefix() -> None:
    po = cand("po", "PO-20261028-0098", "id")
    for mention in ("PO-20261028-0098", "po20261028-0098", "20261028-0098", "PO 20261028 0098"):
        assert resolve_mention(mention, "id", [po]).entity_id == "po", mention
    assert resolve_mention("PO-20261028-0099", "id", [po]).entity_id is None
    assert resolve_mention("INV-20261028-0098", "id", [po]).entity_id is None
    inv = cand("inv", "INV-20261028-0098", "id")
    assert resolve_mention("20261028-0098", "id", [po, inv]).entity_id is None


def test_nicknames_only_when_stated() -> None:
    assert resolve_mention("Bob", "person", [cand("rs", "Robert Smith")]).entity_id is None
    stated = cand("rs", "Robert Smith", stated=("Bob", "Bobby"))
    assert resolve_mention("Bob", "person", [stated]).reason == "alias"
    assert resolve_mention("Bobby Smith", "person", [stated]).entity_id == "rs"
    assert resolve_mention("Bobby Jones", "person", [stated]).entity_id is None


def test_lone_first_name_extends_unless_another_namesake_exists() -> None:
    lone = cand("s", "Sarah")
    assert resolve_mention("Sarah Chen", "person", [lone]).entity_id == "s"
    assert resolve_mention("Sarah Chen", "person", [lone, SARAH_LEE]).entity_id is None


def test_owners_other_customers_and_users_stay_apart() -> None:
    other_customer = cand("b", "Sarah Chen", owner="c1/cuB/u7")
    other_user = cand("u2", "Sarah Chen", owner="c1/cuA/u2")
    other_client = cand("c2", "Sarah Chen", owner="c2")
    for c in (other_customer, other_user, other_client):
        r = resolve_mention("Sarah Chen", "person", [c], owner_key=U1)
        assert (r.entity_id, r.reason) == (None, "other_owner")
    assert resolve_mention("Sarah Chen", "person", [other_customer, SARAH_CHEN], owner_key=U1).entity_id == "sc"
    # A customer-tier record cannot link to one user's private entity.
    assert resolve_mention("Sarah Chen", "person", [SARAH_CHEN], owner_key="c1/cuA").entity_id is None


def test_links_to_customer_shared_and_client_canonical_entities() -> None:
    shared = cand("atlas", "Project Atlas", "project", owner="c1/cuA")
    r = resolve_mention("Project Atlas", "project", [shared], owner_key=U1)
    assert (r.entity_id, r.reason) == ("atlas", "exact")
    canonical = cand("pro", "ACM Pro", "product", owner="c1")
    r = resolve_mention("acm pro", "product", [canonical], owner_key=U1)
    assert (r.entity_id, r.reason) == ("pro", "canonical")
    # The same name at two tiers: the most specific owner's entity.
    mine = cand("pro-u", "ACM Pro", "product")
    assert resolve_mention("ACM Pro", "product", [canonical, mine], owner_key=U1).entity_id == "pro-u"


def test_without_owner_key_the_caller_has_filtered() -> None:
    assert resolve_mention("Sarah Chen", "person", [cand("b", "Sarah Chen", owner="c1/cuB/u7")]).entity_id == "b"


def test_owner_key_matches_the_tier_chain() -> None:
    assert owner_key(Owner("c1", Tier.CLIENT)) == "c1"
    assert owner_key(Owner("c1", Tier.CUSTOMER, "cuA")) == "c1/cuA"
    assert owner_key(Owner("c1", Tier.USER, "cuA", "u1")) == U1


def test_no_candidates() -> None:
    assert resolve_mention("Sarah", "person", []).reason == "no_candidates"


def _cases() -> list[dict[str, Any]]:
    with DATA.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_resolution_set_is_well_formed() -> None:
    cases = _cases()
    assert len(cases) >= 120
    for case in cases:
        ids = {c["entity_id"] for c in case["candidates"]}
        assert case["expected"] is None or case["expected"] in ids, case
        assert {"mention", "type", "owner_key", "candidates", "expected"} <= case.keys()


def test_resolution_set_precision_floor() -> None:
    """A regression guard over tests/data/entity_resolution.jsonl (the benchmark reports the details)."""
    made = correct_merges = expected = correct = 0
    must_stay_apart = {"cross_owner", "different_last_name", "same_first_name", "type_conflict"}
    for case in _cases():
        candidates = [
            Candidate(c["entity_id"], c["name"], c["type"], frozenset(c.get("aliases", ())), c["owner_key"])
            for c in case["candidates"]
        ]
        got = resolve_mention(case["mention"], case["type"], candidates, owner_key=case["owner_key"]).entity_id
        if case["category"] in must_stay_apart:
            assert got == case["expected"], case
        made += got is not None
        expected += case["expected"] is not None
        correct_merges += got is not None and got == case["expected"]
        correct += got == case["expected"]
    assert correct_merges / made >= 0.97
    assert correct_merges / expected >= 0.9
    assert correct / len(_cases()) >= 0.95
