"""The operator console in headless Chromium (Debian's `chromium`, driven by playwright; no browser download)
against a real `acm serve`: an agent key is refused, an admin key logs in and sees the memories ingested over
the API, deletes one (gone through the API too), reads a session's context; stored `<script>` and event-handler
markup render as text and never run. Screenshots are saved in the test's tmp dir and checked (PNG, the page's
size, not blank). CI installs chromium (scripts/test.sh), so a missing browser fails here, never skips."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image
from playwright.sync_api import Browser, Page, expect, sync_playwright

from acm import topics
from acm.adapters.embedded_bus import EmbeddedBus
from acm.domain.scope import Scope
from tests.support.acm_serve import ACM, acm_serve
from tests.support.events import turn_envelope

ALICE = {"customerId": "acme", "userId": "alice", "sessionId": "s1"}
ALICE_QUERY = {"scope.customerId": "acme", "scope.userId": "alice"}
HOSTILE = 'My note is <script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> about Lisbon'
TURNS = ["I moved to Lisbon in May.", "My favourite colour is green.", HOSTILE]


@dataclass(frozen=True)
class Console:
    url: str  # the HTTP listener's base
    admin_key: str
    agent_key: str
    data_dir: Path  # acm serve's: its bus is <data_dir>/bus.db


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:  # CI installs it (scripts/test.sh): its absence is a broken setup, not a reason to skip
        pytest.fail("chromium is not on PATH: apt-get install -y chromium (scripts/test.sh does it)")
    return found


def _wait_done(http: httpx.Client, job_id: str) -> dict[str, Any]:
    job: dict[str, Any] = {}
    for _ in range(300):
        job = http.get(f"/v1/jobs/{job_id}", params=ALICE_QUERY).json()
        if job["status"] != "JOB_STATUS_PENDING":
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still pending: {job}")


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    root = tmp_path_factory.mktemp("console")
    # Port 0, read back from the banner: a port chosen first could be taken by another worker's server meanwhile.
    with acm_serve(root / "data", env={"ACM_HTTP_ADDR": "127.0.0.1:0"}) as served:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACM_")} | {"ACM_DATA_DIR": str(served.data_dir)}
        made = subprocess.run(
            [ACM, "keys", "create", "--client", "local", "--role", "agent", "--customers", "acme"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        agent_key = re.search(r"acm_[0-9a-f]+_\S+", made.stdout)
        assert agent_key is not None, made.stdout
        url = served.http
        assert url.startswith("http://127.0.0.1:"), url
        banner = (served.data_dir.parent / f"{served.data_dir.name}.serve.log").read_text()
        assert f"operator console: {url}/console/" in banner, banner  # the banner says where it is
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {served.api_key}"}, timeout=30) as http:
            for i, text in enumerate(TURNS):
                turn = {"role": "ROLE_USER", "content": text, "turnId": f"t{i}", "occurredAt": "2026-06-01T10:00:00Z"}
                accepted = http.post("/v1/turns", json={"scope": ALICE, "turn": turn})
                assert accepted.status_code == 200, accepted.text
                assert _wait_done(http, accepted.json()["jobId"])["status"] == "JOB_STATUS_DONE"
        yield Console(url, served.api_key, agent_key.group(0), served.data_dir)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=_chromium(), headless=True, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    yield opened
    context.close()


def _publish_unsigned_turn(data_dir: Path, text: str) -> None:
    async def publish() -> None:
        bus = EmbeddedBus(data_dir / "bus.db")
        try:
            env = turn_envelope(Scope("local", "acme", "alice", session_id="s1"), text, "t-unsigned", "j-unsigned")
            await bus.publish(topics.TURNS, "local/acme/alice/s1", env.SerializeToString())
        finally:
            await bus.stop()

    # On its own thread: playwright's sync API runs an event loop on this one.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, publish()).result(timeout=30)


def _screenshot(page: Page, path: Path) -> None:
    """Save the page and check the file: a PNG of the viewport's size with more on it than a blank page."""
    page.screenshot(path=str(path), full_page=False)
    with Image.open(path) as image:
        assert image.format == "PNG" and image.size == (1280, 900), (image.format, image.size)
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000) or []
        assert len(colours) > 20, f"{path} looks blank: {len(colours)} colours"


def _log_in(page: Page, console: Console, key: str) -> None:
    page.goto(f"{console.url}/console/")
    page.fill("#key", key)
    page.click("#login-form button")


def _open_alice(page: Page) -> None:
    """From the users view (the first one): acme's alice, then her memories."""
    alice = page.locator("#users-table tbody tr", has_text="alice")
    expect(alice).to_contain_text("acme")
    alice.click()
    expect(page.locator("#view-memories")).to_be_visible()


def test_an_agent_key_is_refused(page: Page, console: Console, tmp_path: Path) -> None:
    _log_in(page, console, console.agent_key)
    expect(page.locator("#login-error")).to_contain_text("admin key")
    expect(page.locator("#app")).to_be_hidden()
    _screenshot(page, tmp_path / "agent-refused.png")
    refused = httpx.get(f"{console.url}/console/api/whoami", headers={"Authorization": f"Bearer {console.agent_key}"})
    assert refused.status_code == 403, refused.text


def test_a_wrong_key_is_refused(page: Page, console: Console) -> None:
    _log_in(page, console, "acm_nope_nope")
    expect(page.locator("#login-error")).to_contain_text("unknown or revoked")
    expect(page.locator("#app")).to_be_hidden()


def test_an_admin_sees_deletes_and_the_api_agrees(page: Page, console: Console, tmp_path: Path) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _log_in(page, console, console.admin_key)
    expect(page.locator("#who")).to_contain_text("admin key")
    _open_alice(page)
    rows = page.locator("#memories-table tbody tr")
    expect(rows.filter(has_text="Lisbon in May").first).to_be_visible()
    expect(rows.filter(has_text="green").first).to_be_visible()
    _screenshot(page, tmp_path / "memories.png")

    # Stored markup is shown as the text it is: no element made from it, no script run.
    hostile = rows.filter(has_text="onerror=").first
    expect(hostile).to_contain_text('</script><img src=x onerror="window.__pwned = 2">')
    assert page.locator("#memories-table script, #memories-table img").count() == 0
    assert page.evaluate("window.__pwned") is None

    target = rows.filter(has_text="favourite colour").first
    memory_id = target.get_attribute("data-memory-id")
    assert memory_id
    target.click()
    expect(page.locator("#memory-id")).to_have_text(memory_id)
    expect(page.locator("#history-table tbody tr")).to_have_count(1)
    _screenshot(page, tmp_path / "memory.png")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#memory-delete")
    expect(page.locator(f'#memories-table tbody tr[data-memory-id="{memory_id}"]')).to_have_count(0, timeout=15_000)

    with httpx.Client(base_url=console.url, headers={"Authorization": f"Bearer {console.admin_key}"}) as http:
        listed = http.get("/v1/memories", params=ALICE_QUERY).json()["memories"]
        assert memory_id not in {m["memory"]["memoryId"] for m in listed}
        assert any("Lisbon" in m["memory"]["text"] for m in listed)
        assert http.get(f"/v1/memories/{memory_id}", params=ALICE_QUERY).status_code == 404

    # Every job of the client, newest first: the delete just done, then the three ingests.
    page.click("nav a[data-view=jobs]")
    jobs = page.locator("#jobs-table tbody tr")
    expect(jobs).to_have_count(len(TURNS) + 1)
    expect(jobs.first).to_contain_text("delete")
    expect(jobs.first).to_contain_text("done")
    expect(jobs.filter(has_text="ingest")).to_have_count(len(TURNS))
    expect(jobs.filter(has_text="alice")).to_have_count(len(TURNS) + 1)
    _screenshot(page, tmp_path / "jobs.png")
    page.select_option("#jobs-form select[name=status]", "JOB_STATUS_FAILED")
    page.click("#jobs-form button")
    expect(jobs).to_have_count(0)

    page.click("nav a[data-view=context]")
    form = page.locator("#context-form")
    for name, value in (("customer", "acme"), ("user", "alice"), ("session", "s1"), ("query", "where do I live?")):
        form.locator(f"[name={name}]").fill(value)
    form.locator("button").click()
    expect(page.locator("#context-parts tbody")).to_contain_text("Lisbon")
    expect(page.locator("#context-summary")).to_contain_text("tokens")
    _screenshot(page, tmp_path / "context.png")

    # The benchmark plots of the checkout's results/ (acm serve's default), fetched with the key.
    page.click("nav a[data-view=benchmarks]")
    first = page.locator("#plots a").first
    expect(first).to_have_text(re.compile(r"\.png$"))
    first.click()
    expect(page.locator("#plot-image")).to_have_attribute("src", re.compile(r"^blob:"))
    page.wait_for_function("document.getElementById('plot-image').naturalWidth > 0")
    _screenshot(page, tmp_path / "plot.png")
    assert page.evaluate("window.__pwned") is None

    # An event no consumer can handle (an unsigned turn, written straight to the bus): the dead letters view shows
    # where it failed and why, never the event.
    _publish_unsigned_turn(console.data_dir, "my card number is PLUGH-XYZZY")
    with httpx.Client(base_url=console.url, headers={"Authorization": f"Bearer {console.admin_key}"}) as http:
        for _ in range(300):
            if any(x["group"] == "ingest" for x in http.get("/v1/dead-letters").json()["letters"]):
                break
            time.sleep(0.1)
    page.click("nav a[data-view=dead-letters]")
    letter = page.locator("#letters-table tbody tr", has_text="ingest")
    expect(letter).to_contain_text("signature does not verify")
    expect(letter).to_contain_text(topics.TURNS)
    expect(page.locator("#letters-table")).not_to_contain_text("PLUGH")
    _screenshot(page, tmp_path / "dead-letters.png")

    # A compaction of alice's session, then every session's compactions with their verification outcome.
    with httpx.Client(base_url=console.url, headers={"Authorization": f"Bearer {console.admin_key}"}) as http:
        compacted = http.post("/v1/sessions:compact", json={"scope": ALICE, "budgetTokens": 64}, timeout=60)
        assert compacted.status_code == 200, compacted.text
        outcome = compacted.json()["compaction"]["outcome"]
    page.click("nav a[data-view=compactions]")
    compaction = page.locator("#compactions-table tbody tr", has_text="alice")
    expect(compaction).to_have_count(1)
    expect(compaction).to_contain_text(outcome)
    expect(compaction).to_contain_text("s1")
    _screenshot(page, tmp_path / "compactions.png")

    # The client's keys: the agent key among them, with its rights.
    page.click("nav a[data-view=key]")
    agent_id = console.agent_key.split("_")[1]
    expect(page.locator(f'#keys-table tbody tr[data-key-id="{agent_id}"]')).to_contain_text("acme")
    assert not errors, errors


def test_probes_and_no_cors_by_default(console: Console) -> None:
    assert httpx.get(f"{console.url}/healthz").json() == {"status": "SERVING"}
    assert httpx.get(f"{console.url}/readyz").json() == {"status": "SERVING"}
    preflight = httpx.options(
        f"{console.url}/v1/memories",
        headers={"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "GET"},
    )
    assert "access-control-allow-origin" not in preflight.headers
