"""ApiKeyRepo.of_client on both relational stores: the client's keys newest first, revoked ones and agent keys'
rights included, never another client's."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from acm.domain.scope import ADMIN, Grant, KeyRole
from acm.ports.stores import ApiKey
from tests.contract import test_relational_contract as contract
from tests.contract.test_relational_contract import T0, RelationalStore

# The relational contract's fixtures: every test here runs on SQLite and on Postgres.
backend, store = contract.backend, contract.store


def _key(key_id: str, client_id: str, minutes: int, grant: Grant = ADMIN) -> ApiKey:
    return ApiKey(key_id, client_id, f"hash-{key_id}", f"name {key_id}", T0 + timedelta(minutes=minutes), grant=grant)


async def test_a_clients_keys_newest_first_with_their_rights(store: RelationalStore) -> None:
    agent = _key("k2", "c1", 2, Grant(KeyRole.AGENT, ("acme", "globex"), ("alice",)))
    revoked = replace(_key("k3", "c1", 3), revoked=True)
    for key in (_key("k1", "c1", 1), agent, revoked, _key("other", "c2", 4)):
        await store.api_keys.add(key)
    listed = list(await store.api_keys.of_client("c1"))
    assert [k.key_id for k in listed] == ["k3", "k2", "k1"]
    assert listed[0].revoked and listed[1].grant == agent.grant and listed[2].grant.role is KeyRole.ADMIN
    assert listed[1] == agent
    assert [k.key_id for k in await store.api_keys.of_client("c2")] == ["other"]
    assert list(await store.api_keys.of_client("nobody")) == []
