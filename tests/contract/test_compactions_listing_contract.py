"""WorkingMemoryRepo.of_client on Postgres and SQLite: a client's compactions in every session with their scope,
newest first, paged by (created_at, compaction_id), never another client's."""

from __future__ import annotations

from acm.domain.scope import Scope
from acm.ports.working_memory import WorkingMemoryRepo
from tests.contract import test_working_memory_contract as contract
from tests.contract.test_working_memory_contract import ALICE, memory, record

# The working memory contract's fixture: every test here runs on SQLite and on Postgres.
repo = contract.repo

BOB = Scope("c1", "acme", "bob", session_id="s7")
THEIRS = Scope("c2", "acme", "alice", session_id="s1")


async def test_a_clients_compactions_newest_first_with_their_sessions(repo: WorkingMemoryRepo) -> None:
    first, failed, bobs, theirs = record(minutes=1), record("failed", 2), record(minutes=3), record(minutes=4)
    assert await repo.swap(ALICE, memory(1), first)
    await repo.record(ALICE, failed)
    assert await repo.swap(BOB, memory(1), bobs)
    assert await repo.swap(THEIRS, memory(1), theirs)

    listed = await repo.of_client("c1", 10)
    assert listed == [(BOB, bobs), (ALICE, failed), (ALICE, first)]
    page = await repo.of_client("c1", 2)
    last = page[-1][1]
    assert page + await repo.of_client("c1", 2, after=(last.created_at, last.compaction_id)) == listed
    assert await repo.of_client("c2", 10) == [(THEIRS, theirs)]
    assert await repo.of_client("nobody", 10) == []
