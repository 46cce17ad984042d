"""The periodic runner: first run after one interval, survives a failing run, stops cleanly."""

from __future__ import annotations

import asyncio

import pytest

from acm.periodic import Periodic


async def test_runs_repeatedly_and_survives_a_failing_run(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []
    third = asyncio.Event()

    async def job() -> None:
        calls.append(len(calls))
        if len(calls) == 1:
            raise RuntimeError("store down")
        if len(calls) == 3:
            third.set()

    runner = Periodic("test job", job, every_s=0.001)
    await runner.start()
    await asyncio.wait_for(third.wait(), 10)
    await runner.stop()
    assert len(calls) >= 3 and runner.failures == 1 and not runner.running
    assert "test job failed" in caplog.text and "store down" in caplog.text


async def test_the_first_run_waits_one_interval_and_stop_is_prompt() -> None:
    calls: list[int] = []

    async def job() -> None:
        calls.append(1)

    runner = Periodic("hourly", job, every_s=3600)
    await runner.start()
    for _ in range(20):
        await asyncio.sleep(0)
    assert runner.running and calls == []
    await asyncio.wait_for(runner.stop(), 1)  # no waiting out the hour
    assert not runner.running and calls == [] and runner.runs == 0
    await runner.stop()  # twice is fine


async def test_stop_lets_a_run_in_progress_finish() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    finished: list[bool] = []

    async def job() -> None:
        started.set()
        await release.wait()
        finished.append(True)

    runner = Periodic("slow", job, every_s=0.001, grace_s=10)
    await runner.start()
    await asyncio.wait_for(started.wait(), 10)
    stopping = asyncio.create_task(runner.stop())
    await asyncio.sleep(0)
    assert not stopping.done()
    release.set()
    await asyncio.wait_for(stopping, 10)
    assert finished == [True] and runner.runs == 1


async def test_stop_cancels_a_run_that_outlives_the_grace() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def job() -> None:
        started.set()
        try:
            await asyncio.Event().wait()  # never ends by itself
        except asyncio.CancelledError:
            cancelled.set()
            raise

    runner = Periodic("stuck", job, every_s=0.001, grace_s=0.01)
    await runner.start()
    await asyncio.wait_for(started.wait(), 10)
    await asyncio.wait_for(runner.stop(), 10)
    assert cancelled.is_set() and not runner.running


async def test_interval_zero_disables_and_negative_is_refused() -> None:
    async def job() -> None:
        raise AssertionError("must not run")

    runner = Periodic("off", job, every_s=0)
    await runner.start()
    assert not runner.running
    await runner.stop()
    with pytest.raises(ValueError):
        Periodic("bad", job, every_s=-1)
