"""The admission primitive: slots, a bounded waiting room, a bounded wait, and no slot lost on refusal."""

from __future__ import annotations

import asyncio

import pytest

from acm.admission import Admission, Limits, Overloaded


async def hold(admission: Admission, started: asyncio.Event, release: asyncio.Event) -> None:
    async with admission.admit():
        started.set()
        await release.wait()


async def occupy(admission: Admission, n: int) -> tuple[asyncio.Event, list[asyncio.Task[None]]]:
    """n calls holding their slots until the returned event is set."""
    release = asyncio.Event()
    tasks = []
    for _ in range(n):
        started = asyncio.Event()
        tasks.append(asyncio.create_task(hold(admission, started, release)))
        await started.wait()
    return release, tasks


async def until_queued(admission: Admission, n: int) -> None:
    for _ in range(1000):  # a few loop turns are enough: the waiter only has to reach the semaphore
        if admission.queued == n:
            return
        await asyncio.sleep(0)
    pytest.fail(f"{admission.queued} queued, never {n}")


async def test_runs_up_to_max_in_flight_then_refuses_when_nobody_may_wait() -> None:
    admission = Admission("Fetch", Limits(max_in_flight=2, max_queued=0, max_wait_s=1.0))
    release, tasks = await occupy(admission, 2)
    assert admission.in_flight == 2
    with pytest.raises(Overloaded, match=r"Fetch: the server is at capacity.*retry with exponential backoff"):
        async with admission.admit():
            pytest.fail("admitted beyond the limit")
    release.set()
    await asyncio.gather(*tasks)
    assert admission.in_flight == 0
    async with admission.admit():  # the slots came back
        assert admission.in_flight == 1


async def test_a_queued_call_runs_when_a_slot_frees() -> None:
    admission = Admission("Fetch", Limits(max_in_flight=1, max_queued=1, max_wait_s=5.0))
    release, tasks = await occupy(admission, 1)
    order: list[str] = []

    async def queued() -> None:
        async with admission.admit():
            order.append("queued")

    waiter = asyncio.create_task(queued())
    await until_queued(admission, 1)
    assert admission.queued == 1 and not order
    release.set()
    await asyncio.gather(*tasks, waiter)
    assert order == ["queued"] and admission.queued == 0 and admission.in_flight == 0


async def test_a_full_queue_refuses_at_once() -> None:
    admission = Admission("Ingest", Limits(max_in_flight=1, max_queued=1, max_wait_s=5.0))
    release, tasks = await occupy(admission, 1)
    waiter = asyncio.create_task(occupy(admission, 1))  # waits in the one queue place
    await until_queued(admission, 1)
    loop = asyncio.get_running_loop()
    before = loop.time()
    with pytest.raises(Overloaded, match="1 calls already waiting"):
        async with admission.admit():
            pass
    assert loop.time() - before < 0.5  # refused without waiting for the 5 s bound
    release.set()
    second_release, second = await waiter
    second_release.set()
    await asyncio.gather(*tasks, *second)
    assert (admission.in_flight, admission.queued) == (0, 0)


async def test_the_wait_is_bounded_and_a_refused_waiter_leaks_no_slot() -> None:
    admission = Admission("Fetch", Limits(max_in_flight=1, max_queued=4, max_wait_s=0.05))
    release, tasks = await occupy(admission, 1)
    loop = asyncio.get_running_loop()
    before = loop.time()
    with pytest.raises(Overloaded, match=r"no slot freed within 0\.05 s"):
        async with admission.admit():
            pass
    assert 0.05 <= loop.time() - before < 1.0
    assert admission.queued == 0
    release.set()
    await asyncio.gather(*tasks)
    async with admission.admit():
        assert admission.in_flight == 1


async def test_a_cancelled_waiter_leaves_the_queue_and_the_slots_as_they_were() -> None:
    admission = Admission("Fetch", Limits(max_in_flight=1, max_queued=1, max_wait_s=5.0))
    release, tasks = await occupy(admission, 1)
    waiter = asyncio.create_task(hold(admission, asyncio.Event(), asyncio.Event()))
    await until_queued(admission, 1)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert admission.queued == 0
    release.set()
    await asyncio.gather(*tasks)
    assert admission.in_flight == 0
    async with admission.admit():
        assert admission.in_flight == 1


async def test_an_error_in_the_block_frees_its_slot() -> None:
    admission = Admission("Fetch", Limits(max_in_flight=1, max_queued=0, max_wait_s=0.0))
    with pytest.raises(RuntimeError):
        async with admission.admit():
            raise RuntimeError("boom")
    async with admission.admit():
        assert admission.in_flight == 1


async def test_an_admitted_call_past_its_run_bound_is_cancelled_refused_and_frees_its_slot() -> None:
    admission = Admission("Fetch", Limits(max_in_flight=1, max_queued=0, max_wait_s=0.0, max_run_s=0.05))
    loop = asyncio.get_running_loop()
    before = loop.time()
    with pytest.raises(Overloaded, match=r"not answered within 0\.05 s.*retry with exponential backoff"):
        async with admission.admit():
            await asyncio.sleep(10)
    assert 0.05 <= loop.time() - before < 1.0
    async with admission.admit():
        assert admission.in_flight == 1


async def test_a_timeout_of_the_block_itself_stays_a_timeout() -> None:
    admission = Admission("Fetch", Limits(max_in_flight=1, max_queued=0, max_wait_s=0.0, max_run_s=5.0))
    with pytest.raises(TimeoutError):
        async with admission.admit():
            async with asyncio.timeout(0.01):
                await asyncio.sleep(10)


@pytest.mark.parametrize("limits", [(0, 0, 1.0), (1, -1, 1.0), (1, 0, -0.1), (1, 0, 1.0, 0.0)])
def test_limits_out_of_range_are_refused(limits: tuple[int, int, float] | tuple[int, int, float, float]) -> None:
    with pytest.raises(ValueError, match="admission limits out of range"):
        Limits(*limits)
