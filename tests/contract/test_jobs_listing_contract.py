"""JobRepo.of_client on both relational stores: a client's jobs newest first, of one status if asked, paged by
(created_at, job_id), never another client's."""

from __future__ import annotations

from datetime import timedelta

from acm.domain.models import Job, JobStatus
from tests.contract import test_relational_contract as contract
from tests.contract.test_relational_contract import ALICE, BOB, C2_ALICE, T0, RelationalStore

# The relational contract's fixtures: every test here runs on SQLite and on Postgres.
backend, store = contract.backend, contract.store


async def test_a_clients_jobs_newest_first_by_status_and_paged(store: RelationalStore) -> None:
    same_time = T0 + timedelta(minutes=2)
    jobs = [
        Job("j1", ALICE, "ingest", created_at=T0, updated_at=T0),
        Job("j2", BOB, "delete", created_at=same_time, updated_at=same_time),
        Job("j3", ALICE, "import", created_at=same_time, updated_at=same_time),  # same time: by id, descending
        Job("j4", ALICE, "forget", created_at=T0 + timedelta(minutes=3), updated_at=T0 + timedelta(minutes=3)),
        Job("theirs", C2_ALICE, "ingest", created_at=T0 + timedelta(minutes=4), updated_at=T0),
    ]
    for job in jobs:
        await store.jobs.create(job)
    await store.jobs.finish(ALICE, "j1", JobStatus.FAILED, {"memories": 0}, "no embedder: the model is missing")
    await store.jobs.finish(BOB, "j2", JobStatus.DONE, {"memories": 1})

    listed = await store.jobs.of_client("c1", 10)
    assert [j.job_id for j in listed] == ["j4", "j3", "j2", "j1"]
    assert listed[2].scope == BOB and listed[2].kind == "delete" and listed[2].counts == {"memories": 1}
    failed = await store.jobs.of_client("c1", 10, JobStatus.FAILED)
    assert [(j.job_id, j.error) for j in failed] == [("j1", "no embedder: the model is missing")]
    assert [j.job_id for j in await store.jobs.of_client("c1", 10, JobStatus.PENDING)] == ["j4", "j3"]

    first = await store.jobs.of_client("c1", 2)
    assert [j.job_id for j in first] == ["j4", "j3"]
    rest = await store.jobs.of_client("c1", 2, after=(first[-1].created_at, first[-1].job_id))
    assert [j.job_id for j in rest] == ["j2", "j1"]
    assert await store.jobs.of_client("c1", 2, after=(rest[-1].created_at, rest[-1].job_id)) == []
    assert [j.job_id for j in await store.jobs.of_client("c2", 10)] == ["theirs"]
    assert await store.jobs.of_client("nobody", 10) == []
