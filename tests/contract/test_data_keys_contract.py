"""The gateway's data keys (SqlDataKeyRepo, acm.sealing.DataKeyRepo) on both relational stores: one key per
(client, customer, user, session), what each Forget level deletes, the rows a master-key rotation takes and its
conditional re-wrap; and api_keys migration 3 bringing a table of per-user keys (no session, no master id) up to
date in place, its rows still opening. Then a rotation over the store: what was sealed before opens with the
new master only."""

from __future__ import annotations

from acm.adapters.data_keys_sql import SqlDataKeyRepo
from acm.adapters.sql_migrations import POSTGRES, SQLITE, migrate
from acm.domain.scope import Scope
from acm.envelopes import envelope
from acm.sealing import (
    DataKey,
    MasterKeyMissing,
    MasterKeys,
    Rotation,
    StoredKey,
    StoreKeyring,
    master_id,
    master_key_bytes,
    new_master_key,
    readable_bytes,
    rotate_master,
    seal,
    wrap,
)
from tests.contract import test_relational_contract as contract
from tests.contract.test_relational_contract import Backend, RelationalStore

# The relational contract's fixtures: every test here runs on SQLite and on Postgres.
backend, store = contract.backend, contract.store

S1, S2 = ("c1", "acme", "alice", "s1"), ("c1", "acme", "alice", "s2")
ALICE, BOB, GLOBEX = ("c1", "acme", "alice", ""), ("c1", "acme", "bob", "s1"), ("c1", "globex", "carol", "s1")


def repo_of(store: RelationalStore) -> SqlDataKeyRepo:
    return SqlDataKeyRepo(store.executor)  # type: ignore[arg-type]


def stored(key_id: str, owner: tuple[str, str, str, str], master: bytes) -> StoredKey:
    return StoredKey(key_id, owner, wrap(master, key_id, owner, b"\x01" * 32), master_id(master))


def must(key: DataKey | None) -> DataKey:
    assert key is not None
    return key


async def test_one_key_per_session_and_what_each_forget_level_deletes(store: RelationalStore) -> None:
    repo, master = repo_of(store), master_key_bytes(new_master_key())
    owners = (S1, S2, ALICE, BOB, GLOBEX, ("c2", "acme", "alice", "s1"))
    added = [stored(f"k{i}", owner, master) for i, owner in enumerate(owners)]
    for key in added:
        await repo.add(key)
    await repo.add(stored("k-late", S1, master))  # a concurrent first use: the first key stays
    assert await repo.current(S1) == added[0] and await repo.by_id("k1") == added[1]
    assert await repo.by_id("k-late") is None

    assert await repo.destroy(S1) == 1  # a session Forget: that session's key only
    assert await repo.current(S1) is None and await repo.current(S2) == added[1]
    assert await repo.destroy(ALICE) == 2  # a user Forget: her other session's key and her own
    assert await repo.current(BOB) == added[3]
    assert await repo.destroy(("c1", "acme", "", "")) == 1  # a customer Forget: bob
    assert await repo.destroy(("c1", "", "", "")) == 1  # a client Forget: the rest of c1
    assert [await repo.current(o) is None for o in owners[4:]] == [True, False]


async def test_the_rows_a_rotation_takes_and_its_conditional_rewrap(store: RelationalStore) -> None:
    repo = repo_of(store)
    old, new = master_key_bytes(new_master_key()), master_key_bytes(new_master_key())
    for i in range(5):
        await repo.add(stored(f"k{i}", ("c1", "acme", f"u{i}", "s1"), old))
    await repo.add(stored("k9", ("c1", "acme", "u9", "s1"), new))
    assert await repo.count_not_wrapped_by(master_id(new)) == 5
    page = await repo.not_wrapped_by(master_id(new), "", 2)
    assert [k.key_id for k in page] == ["k0", "k1"]
    assert [k.key_id for k in await repo.not_wrapped_by(master_id(new), "k1", 10)] == ["k2", "k3", "k4"]
    fresh = stored("k0", page[0].owner, new)
    assert await repo.rewrap([(page[0], fresh)]) == 1
    assert await repo.rewrap([(page[0], fresh)]) == 0  # as read no more: a concurrent run re-wrapped it
    assert await repo.by_id("k0") == fresh
    await repo.destroy(("c1", "acme", "u1", ""))
    assert await repo.rewrap([(page[1], stored("k1", page[1].owner, new))]) == 0  # destroyed meanwhile: stays gone
    assert await repo.by_id("k1") is None
    assert await repo.count_not_wrapped_by(master_id(new)) == 3


async def test_a_rotation_over_the_store_opens_old_records_with_the_new_master_only(store: RelationalStore) -> None:
    repo = repo_of(store)
    old, new = master_key_bytes(new_master_key()), master_key_bytes(new_master_key())
    sealed = []
    for user in ("alice", "bob", "carol"):
        env = envelope(Scope("c1", "acme", user, session_id="s1"))
        env.turn_received.turn.content = f"{user} keeps the spare key under the blue planter"
        await seal(env, StoreKeyring(repo, old))
        sealed.append(env.SerializeToString())
    assert await rotate_master(repo, MasterKeys(new, (old,)), batch=2) == Rotation(3, 0)
    assert await rotate_master(repo, MasterKeys(new, (old,))) == Rotation(0, 0)
    after = StoreKeyring(repo, new)
    assert all([b"blue planter" in await readable_bytes(v, after) for v in sealed])
    stale = StoreKeyring(repo, old)
    for value in sealed:
        try:
            await readable_bytes(value, stale)
        except MasterKeyMissing:
            continue
        raise AssertionError("the old master key still opened a data key")


async def test_migration_3_brings_per_user_keys_up_to_date_in_place(backend: Backend) -> None:
    store = await backend.open()
    ex = store.executor
    master = master_key_bytes(new_master_key())
    # The table as api_keys migration 2 made it, with a row of then (a user's key, no session, no master id).
    await ex.execute("DROP TABLE data_keys")  # type: ignore[attr-defined]
    await ex.execute(  # type: ignore[attr-defined]
        "CREATE TABLE data_keys (key_id text PRIMARY KEY, client_id text NOT NULL, customer_id text NOT NULL, "
        "user_id text NOT NULL, wrapped text NOT NULL, created_at text NOT NULL, "
        "UNIQUE (client_id, customer_id, user_id))"
    )
    wrapped = wrap(master, "k-old", ALICE, b"\x02" * 32)  # a user's key is bound as it was then
    await ex.execute(  # type: ignore[attr-defined]
        "INSERT INTO data_keys VALUES ('k-old', 'c1', 'acme', 'alice', :wrapped, '2026-11-30T00:00:00+00:00')",
        {"wrapped": wrapped},
    )
    migrations = (SQLITE if backend.name == "sqlite" else POSTGRES).only(["api_keys"])
    for _ in range(2):  # re-runnable: a database whose versions table lost the row runs it again
        await ex.execute("DELETE FROM schema_versions WHERE grp = 'api_keys' AND version = 3")  # type: ignore[attr-defined]
        assert ("api_keys", 3) in await migrate(ex, migrations)  # type: ignore[arg-type]
    repo = repo_of(store)
    assert await repo.by_id("k-old") == StoredKey("k-old", ALICE, wrapped, "")
    assert await repo.current(ALICE) == StoredKey("k-old", ALICE, wrapped, "")
    ring = StoreKeyring(repo, master)
    assert must(await ring.by_id(S1, "k-old")).secret == b"\x02" * 32  # her sessions' records from before
    assert (await ring.current(S1)).key_id != "k-old"  # a session's own key from now on
    assert await repo.destroy(ALICE) == 2
