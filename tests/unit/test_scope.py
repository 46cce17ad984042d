import pytest

from acm.domain.scope import ForgetLevel, Owner, Scope, ScopeError, Tier, forgets, visible

A = Scope("c1", "cust1", "alice", session_id="s1")


@pytest.mark.parametrize(
    ("owner", "seen"),
    [
        (Owner("c1", Tier.USER, "cust1", "alice"), True),
        (Owner("c1", Tier.USER, "cust1", "bob"), False),  # another user, same customer
        (Owner("c1", Tier.CUSTOMER, "cust1"), True),
        (Owner("c1", Tier.CUSTOMER, "cust2"), False),  # another customer's shared record
        (Owner("c1", Tier.USER, "cust2", "alice"), False),  # same user id, other customer
        (Owner("c1", Tier.CLIENT), True),
        (Owner("c2", Tier.CLIENT), False),  # another client, even client-tier
        (Owner("c2", Tier.USER, "cust1", "alice"), False),
    ],
)
def test_visibility(owner: Owner, seen: bool) -> None:
    assert visible(A, owner) is seen


def test_tiers_restrict_visibility() -> None:
    assert not visible(A, Owner("c1", Tier.CLIENT), tiers=(Tier.USER,))
    assert visible(A, Owner("c1", Tier.USER, "cust1", "alice"), tiers=(Tier.USER,))


@pytest.mark.parametrize(
    ("level", "owner", "session", "erased"),
    [
        (ForgetLevel.SESSION, Owner("c1", Tier.USER, "cust1", "alice"), "s1", True),
        (ForgetLevel.SESSION, Owner("c1", Tier.USER, "cust1", "alice"), "s2", False),
        (ForgetLevel.USER, Owner("c1", Tier.USER, "cust1", "alice"), "s2", True),
        (ForgetLevel.USER, Owner("c1", Tier.USER, "cust1", "bob"), "s1", False),
        (ForgetLevel.USER, Owner("c1", Tier.CUSTOMER, "cust1"), "", False),
        (ForgetLevel.CUSTOMER, Owner("c1", Tier.USER, "cust1", "bob"), "", True),
        (ForgetLevel.CUSTOMER, Owner("c1", Tier.CUSTOMER, "cust1"), "", True),
        (ForgetLevel.CUSTOMER, Owner("c1", Tier.CUSTOMER, "cust2"), "", False),
        (ForgetLevel.CUSTOMER, Owner("c1", Tier.CLIENT), "", False),
        (ForgetLevel.CLIENT, Owner("c1", Tier.CLIENT), "", True),
        (ForgetLevel.CLIENT, Owner("c2", Tier.CLIENT), "", False),
    ],
)
def test_forget_rule(level: ForgetLevel, owner: Owner, session: str, erased: bool) -> None:
    assert forgets(A, level, owner, session) is erased


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"client_id": "c1", "customer_id": "", "user_id": "u"}, "customer_id is required"),
        ({"client_id": "c1", "customer_id": "x", "user_id": ""}, "user_id is required"),
        ({"client_id": "c1", "customer_id": "a b", "user_id": "u"}, "customer_id 'a b' is malformed"),
        ({"client_id": "c1", "customer_id": "a:b", "user_id": "u"}, "malformed"),
        ({"client_id": "c1", "customer_id": "x", "user_id": "u" * 200}, "user_id"),
    ],
)
def test_scope_errors_say_what_to_fix(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ScopeError, match=message):
        Scope(**kwargs)


def test_owner_rejects_ids_that_do_not_belong_to_its_tier() -> None:
    with pytest.raises(ScopeError):
        Owner("c1", Tier.CLIENT, "cust1")
    with pytest.raises(ScopeError):
        Owner("c1", Tier.CUSTOMER, "cust1", "alice")
    with pytest.raises(ScopeError):
        Owner("c1", Tier.USER, "cust1")


def test_scope_owner_per_tier() -> None:
    assert A.owner(Tier.USER) == Owner("c1", Tier.USER, "cust1", "alice")
    assert A.owner(Tier.CUSTOMER) == Owner("c1", Tier.CUSTOMER, "cust1")
    assert A.owner(Tier.CLIENT) == Owner("c1", Tier.CLIENT)
