"""The gateway's dead letters (SqlDeadLetterRepo) on both relational stores: a client's letters newest first, paged
by (failed_at, letter_id), a redelivered letter kept once, never another client's."""

from __future__ import annotations

from datetime import timedelta

from acm.adapters.dead_letters_sql import SqlDeadLetterRepo
from acm.domain.scope import ForgetLevel, Scope
from acm.ports.stores import DeadLetterEntry
from tests.contract import test_relational_contract as contract
from tests.contract.test_relational_contract import T0, RelationalStore

# The relational contract's fixtures: every test here runs on SQLite and on Postgres.
backend, store = contract.backend, contract.store


def _letter(
    letter_id: str, client_id: str, minutes: int, reason: str = "PermanentError: bad", user: str = "alice"
) -> DeadLetterEntry:
    return DeadLetterEntry(
        letter_id=letter_id,
        client_id=client_id,
        group="ingest",
        topic="acm.turns.v1",
        key=f"{client_id}/acme/{user}/s1",
        reason=reason,
        attempts=1,
        size_bytes=42,
        failed_at=T0 + timedelta(minutes=minutes, microseconds=7),
        event_id=f"e-{letter_id}",
        customer_id="acme",
        user_id=user,
        session_id="s1",
    )


async def test_a_clients_dead_letters_newest_first_paged_and_kept_once(store: RelationalStore) -> None:
    letters = SqlDeadLetterRepo(store.executor)  # type: ignore[arg-type]
    first = _letter("dlq/0/1", "c1", 1, "PermanentError: not an acm.v1.Envelope")
    for letter in (first, _letter("dlq/0/2", "c1", 2), _letter("dlq/0/3", "c1", 2), _letter("dlq/0/4", "c2", 3)):
        await letters.add(letter)
    await letters.add(_letter("dlq/0/1", "c1", 9, "a redelivery"))  # the same letter: unchanged

    listed = await letters.of_client("c1", 10)
    assert [x.letter_id for x in listed] == ["dlq/0/3", "dlq/0/2", "dlq/0/1"]
    assert listed[-1] == first
    page = await letters.of_client("c1", 2)
    rest = await letters.of_client("c1", 2, after=(page[-1].failed_at, page[-1].letter_id))
    assert [x.letter_id for x in page + rest] == ["dlq/0/3", "dlq/0/2", "dlq/0/1"]
    assert [x.letter_id for x in await letters.of_client("c2", 10)] == ["dlq/0/4"]
    assert await letters.of_client("", 10) == []


async def test_a_forget_deletes_the_forgotten_scopes_letters_only(store: RelationalStore) -> None:
    letters = SqlDeadLetterRepo(store.executor)  # type: ignore[arg-type]
    for letter in (_letter("a", "c1", 1), _letter("b", "c1", 2, user="bob"), _letter("c", "c2", 3)):
        await letters.add(letter)
    assert await letters.forget(Scope("c1", "acme", "alice"), ForgetLevel.USER) == 1
    assert [x.letter_id for x in await letters.of_client("c1", 10)] == ["b"]
    assert (await letters.of_client("c1", 10))[0].user_id == "bob"
    assert await letters.forget(Scope("c1", "any", "one"), ForgetLevel.CLIENT) == 1  # the whole client
    assert await letters.of_client("c1", 10) == [] and len(await letters.of_client("c2", 10)) == 1
