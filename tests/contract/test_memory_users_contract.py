"""MemoryRepo.users on both relational stores: the client's (customer, user) pairs with active user-tier memories,
counted, by customer then user, paged by the last pair; shared-tier, stale and other clients' memories not."""

from __future__ import annotations

from dataclasses import replace

from acm.domain.models import MemoryStatus
from acm.domain.scope import Scope, Tier
from acm.ports.stores import UserSummary
from tests.contract import test_relational_contract as contract
from tests.contract.test_relational_contract import RelationalStore, mem

# The relational contract's fixtures: every test here runs on SQLite and on Postgres.
backend, store = contract.backend, contract.store


async def test_users_lists_who_has_memories_of_their_own(store: RelationalStore) -> None:
    alice, bob, carol = Scope("c1", "acme", "alice"), Scope("c1", "acme", "bob"), Scope("c1", "globex", "carol")
    await store.memories.upsert(
        [
            mem("a1", alice.owner(Tier.USER), "one"),
            mem("a2", alice.owner(Tier.USER), "two"),
            replace(mem("a3", alice.owner(Tier.USER), "old"), status=MemoryStatus.STALE),
            mem("b1", bob.owner(Tier.USER), "bob's"),
            mem("shared", bob.owner(Tier.CUSTOMER), "acme's"),
            mem("c1", carol.owner(Tier.USER), "carol's"),
            mem("client", carol.owner(Tier.CLIENT), "everyone's"),
            mem("other", Scope("c2", "acme", "zed").owner(Tier.USER), "another client's"),
        ]
    )
    assert await store.memories.users("c1", 10) == [
        UserSummary("acme", "alice", 2),
        UserSummary("acme", "bob", 1),
        UserSummary("globex", "carol", 1),
    ]
    assert await store.memories.users("c1", 1, ("acme", "alice")) == [UserSummary("acme", "bob", 1)]
    assert await store.memories.users("c1", 10, ("acme", "bob")) == [UserSummary("globex", "carol", 1)]
    assert await store.memories.users("c2", 10) == [UserSummary("acme", "zed", 1)]
    assert await store.memories.users("c3", 10) == []
