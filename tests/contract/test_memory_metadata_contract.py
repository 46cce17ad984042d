"""A memory's metadata (its turn's) on both relational stores: kept and read back as given, and ListMemories'
key=value filter (MemoryFilter.metadata) matching only memories that have every pair, inside what the scope sees."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from acm.domain.models import metadata_pairs
from acm.domain.scope import Tier
from acm.ports.stores import MemoryFilter
from tests.contract import test_relational_contract as contract
from tests.contract.test_relational_contract import ALICE, BOB, RelationalStore, mem

# The relational contract's fixtures: every test here runs on SQLite and on Postgres.
backend, store = contract.backend, contract.store

ODD = {'we"ird key': "ü ' \" = ; 7", "n": "7"}


async def test_metadata_is_kept_and_filtered_by_key_and_value(store: RelationalStore) -> None:
    user, shared = ALICE.owner(Tier.USER), ALICE.owner(Tier.CUSTOMER)
    email = replace(
        mem("email", user, "Alice asked by e-mail", minutes=1),
        metadata=metadata_pairs({"ticket": "T-1", "channel": "email"}),
    )
    chat = replace(
        mem("chat", user, "Alice asked in chat", minutes=2),
        metadata=metadata_pairs({"ticket": "T-2", "channel": "chat"}),
    )
    plain = mem("plain", user, "Alice said nothing special", minutes=3)
    odd = replace(mem("odd", user, "Alice odd metadata", minutes=4), metadata=metadata_pairs(ODD))
    team = replace(mem("team", shared, "Acme ticket policy", minutes=5), metadata=metadata_pairs({"ticket": "T-1"}))
    await store.memories.upsert([email, chat, plain, odd, team])

    read = {m.memory_id: m for m in await store.memories.page(ALICE, MemoryFilter(), 10)}
    assert read["email"].metadata == (("channel", "email"), ("ticket", "T-1"))
    assert read["plain"].metadata == ()
    assert dict(read["odd"].metadata) == ODD

    async def ids(**where: Any) -> list[str]:
        return [m.memory_id for m in await store.memories.page(ALICE, MemoryFilter(**where), 10)]

    assert await ids(metadata=(("ticket", "T-1"),)) == ["team", "email"]
    assert await ids(metadata=(("channel", "email"), ("ticket", "T-1"))) == ["email"]
    assert await ids(metadata=(("channel", "chat"), ("ticket", "T-1"))) == []
    assert await ids(metadata=(("ticket", "T-"),)) == []  # exact values, not prefixes
    assert await ids(metadata=(("channel", "email"),), tiers=(Tier.CUSTOMER,)) == []
    assert await ids(metadata=tuple(sorted(ODD.items()))) == ["odd"]
    assert await ids(metadata=(("n", "7"),)) == ["odd"]
    # Bob, another user of the customer: the shared memory only.
    assert [m.memory_id for m in await store.memories.page(BOB, MemoryFilter(metadata=(("ticket", "T-1"),)), 10)] == [
        "team"
    ]
