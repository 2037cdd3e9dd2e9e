"""The web page at ``/`` in a real headless Chromium (Debian's ``chromium``, driven by
Playwright for Python; never a downloaded browser): search, open an entity, approve a
fact, and see the change in the page and in the store. A screenshot of the entity page
and of the phone-width review queue is kept in ``tests/artefacts/`` (git ignores it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..frontends.conftest import (
    child_env,
    free_port,
    knotwork_cmd,
    running,
    wait_served,
    write_vault,
)

CHROMIUM = "/usr/bin/chromium"
ARTEFACTS = Path(__file__).resolve().parents[1] / "artefacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, int]]:
    tmp = tmp_path_factory.mktemp("web")
    db = tmp / "s.db"
    vault = write_vault(tmp / "vault")
    env = child_env(KNOTWORK_EMBEDDER="none")
    done = subprocess.run(knotwork_cmd("--db", str(db), "ingest", str(vault), "-q"),
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    code = ("import sys; from knotwork import Knotwork\n"
            "with Knotwork.open(None, db=sys.argv[1], embedder='none') as kw:\n"
            "    print(kw.assert_fact('Traefik', 'maintainer', 'Bob',"
            " supporting_text='Bob said so in the standup').id)")
    done = subprocess.run([sys.executable, "-c", code, str(db)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    fact_id = int(done.stdout)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with running(knotwork_cmd("--db", str(db), "serve", "--port", str(port)),
                 tmp / "serve.log", env=env) as proc:
        wait_served(proc, base, tmp / "serve.log")
        yield base, db, fact_id


def test_search_open_an_entity_approve_a_fact(served: tuple[str, Path, int]) -> None:
    assert shutil.which(CHROMIUM), "Debian's chromium is installed by .ci/run"
    from playwright.sync_api import expect, sync_playwright

    base, db, fact_id = served
    ARTEFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page()
            page.goto(base + "/")
            # the keyboard: "/" focuses the search box, Enter searches
            page.keyboard.press("/")
            expect(page.locator("#q")).to_be_focused()
            page.keyboard.type("traefik")
            page.keyboard.press("Enter")
            expect(page.locator("h1")).to_contain_text("traefik")
            page.locator("ul.entities a", has_text="Traefik").first.click()
            expect(page.locator("h1")).to_have_text("Traefik")
            # the fact by what it says (ids depend on what the notes state first)
            row = page.locator("tr[data-fact]", has_text="maintainer").filter(
                has_text="Bob said so in the standup")
            expect(row).to_have_count(1)
            assert row.get_attribute("data-fact") == str(fact_id)
            expect(row).to_contain_text("Bob said so in the standup")  # the evidence
            expect(row).to_have_attribute("data-review", "unreviewed")
            expect(page.locator("tr[data-fact]").first).to_contain_text("services/Traefik.md")
            row.get_by_role("button", name=f"Approve fact {fact_id}").click()
            row = page.locator(f"#fact-{fact_id}")
            expect(row).to_have_attribute("data-review", "approved")
            expect(row.locator(".badge.approved")).to_be_visible()
            page.screenshot(path=str(ARTEFACTS / "web-entity.png"), full_page=True)
            # a phone: the review queue reads in one column
            phone = browser.new_page(viewport={"width": 390, "height": 844})
            phone.goto(base + "/ui/review?status=approved")
            expect(phone.locator(f"#fact-{fact_id}")).to_be_visible()
            width = phone.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, width
            phone.screenshot(path=str(ARTEFACTS / "web-review-phone.png"), full_page=True)
        finally:
            browser.close()
    print(f"screenshots: {ARTEFACTS}")
    # ... and in the store
    out = subprocess.run(knotwork_cmd("--db", str(db), "facts", "Traefik", "--json"),
                         env=child_env(KNOTWORK_EMBEDDER="none"), capture_output=True,
                         text=True, timeout=60)
    [fact] = [f for f in json.loads(out.stdout) if f["id"] == fact_id]
    assert fact["review"] == "approved"
    audit = subprocess.run(knotwork_cmd("--db", str(db), "audit", "--json"),
                           env=child_env(), capture_output=True, text=True, timeout=60)
    [event] = [e for e in json.loads(audit.stdout)
               if e["action"] == "review" and e["fact_id"] == fact_id]
    assert event["actor"] == "web:server" and event["detail"]["status"] == "approved"


def test_a_form_posted_from_another_site_is_refused(served: tuple[str, Path, int]) -> None:
    base, _, fact_id = served
    form = {"fact_id": str(fact_id), "decision": "reject", "next": "/ui/review"}
    r = httpx.post(base + "/ui/review", data=form, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403
    r = httpx.post(base + "/ui/review", data={**form, "next": "http://evil.example/"},
                   headers={"Origin": base}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/ui/review")
    httpx.post(base + "/ui/review", data={**form, "decision": "approve"},
               headers={"Origin": base})  # as the other test left it
