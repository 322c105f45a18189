"""The inspector in a real browser: Debian's chromium, headless, driven by Playwright through `executable_path`
(no browser download). Screenshots go to $BOWERBIRD_SCREENSHOTS, else the test's own temporary folder."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from web_site import SCOPE, TOKEN, open_engine, running, seed

from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.web import Inspector

if TYPE_CHECKING:
    from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NO_CHROMIUM = (
    "no chromium found: install Debian's chromium (`make test` does so when run as root with apt-get) "
    "or point BOWERBIRD_CHROMIUM at a chromium binary"
)
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "ensure-chromium.sh"


def find_chromium() -> str | None:
    """$BOWERBIRD_CHROMIUM, else chromium or chromium-browser on the PATH."""
    configured = os.environ.get("BOWERBIRD_CHROMIUM")
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    return next(
        (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
    )


@dataclass
class Site:
    engine: Bowerbird
    ids: dict[str, int]
    url: str


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
    )
    chromium = find_chromium()
    if chromium is None:
        pytest.skip(NO_CHROMIUM)
    with sync_api.sync_playwright() as driver:
        # Playwright gives each launch a new, empty profile (its own temporary --user-data-dir).
        launched = driver.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, minilm: LocalEmbedder) -> Iterator[Site]:
    engine = open_engine(tmp_path_factory.mktemp("browser"), minilm)
    ids = seed(engine)
    with running(Inspector(engine, TOKEN)) as url:
        yield Site(engine, ids, url)
    engine.shutdown()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("BOWERBIRD_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    opened = context.new_page()
    yield opened
    context.close()


def test_search_open_edit_see_the_supersession_and_forget(
    site: Site, page: Any, shots: Path
) -> None:
    from playwright.sync_api import expect

    page.goto(f"{site.url}/?token={TOKEN}")
    expect(page).to_have_url(re.compile(r"/memories$"))
    expect(page.locator("table.memories")).to_contain_text("Quillstack stores its data in SQLite")
    page.screenshot(path=str(shots / "1-memories.png"), full_page=True)

    page.fill("form.filters input[name=q]", "which tea do I like")
    page.click("form.filters button[type=submit]")
    first = page.locator("li.hit").first
    expect(first.locator("p.content")).to_have_text("I prefer green tea over coffee in the morning")
    expect(first.locator("table.explain")).to_contain_text("vector_memory")
    page.screenshot(path=str(shots / "2-search.png"), full_page=True)

    first.locator("a.open").click()
    expect(page.locator("h1")).to_contain_text(f"#{site.ids['tea']}")
    page.fill("textarea[name=content]", "I prefer black tea now, without sugar")
    page.click("text=Save new version")
    expect(page.locator(".notice.ok")).to_contain_text("Saved as a new version")
    versions = page.locator("ol.versions li")
    expect(versions).to_have_count(2)
    expect(versions.nth(0)).to_contain_text("superseded by #")
    expect(versions.nth(1)).to_contain_text("I prefer black tea now, without sugar")
    page.screenshot(path=str(shots / "3-supersession.png"), full_page=True)
    new_id = int(page.url.split("?")[0].rsplit("/", 1)[1])
    assert site.engine.inspect.show(site.ids["tea"], scopes=[SCOPE]).memory.superseded_by == new_id

    page.goto(f"{site.url}/memories/{site.ids['db']}")
    page.once("dialog", lambda dialog: dialog.accept())
    page.fill("input[name=reason]", "we moved to Postgres")
    page.click("button.danger")
    expect(page.locator("h1 .state")).to_have_text("forgotten")
    expect(page.locator("table.audit")).to_contain_text("we moved to Postgres")
    page.screenshot(path=str(shots / "4-forgotten.png"), full_page=True)
    page.goto(f"{site.url}/memories")
    expect(page.locator("table.memories")).not_to_contain_text("SQLite with WAL")
    assert site.engine.inspect.show(site.ids["db"], scopes=[SCOPE]).memory.forgotten is True


def test_bulletin_and_status_pages(site: Site, page: Any, shots: Path) -> None:
    from playwright.sync_api import expect

    page.goto(f"{site.url}/?token={TOKEN}")
    page.click("header nav >> text=Bulletin")
    expect(page.locator("pre.bulletin")).to_contain_text(
        "We decided to ship the Quillstack beta on Friday"
    )
    page.screenshot(path=str(shots / "5-bulletin.png"), full_page=True)
    page.click("header nav >> text=Status")
    expect(page.locator("#embedding")).to_contain_text("all-MiniLM-L6-v2 (384 dims)")
    expect(page.locator("#backlog")).to_have_text("0 turns waiting to be curated")
    page.screenshot(path=str(shots / "6-status.png"), full_page=True)


def test_cancelling_the_confirmation_forgets_nothing(site: Site, page: Any) -> None:
    page.goto(f"{site.url}/?token={TOKEN}")
    page.goto(f"{site.url}/memories/{site.ids['ship']}")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("button.danger")
    page.wait_for_timeout(300)
    assert site.engine.inspect.show(site.ids["ship"], scopes=[SCOPE]).memory.forgotten is False


def test_hostile_memory_text_stays_inert(site: Site, page: Any) -> None:
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(f"{site.url}/?token={TOKEN}")
    page.goto(f"{site.url}/memories/{site.ids['hostile']}")
    content = page.locator("blockquote.memory-content").inner_text()
    assert content.startswith("<img src=x onerror=")
    assert page.title() == f"fact #{site.ids['hostile']} · bowerbird"
    assert page.locator("main img").count() == 0
    assert dialogs == []


def test_pages_read_without_javascript(site: Site, browser: Any) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{site.url}/?token={TOKEN}")
    listing = page.locator("table.memories").inner_text()
    page.goto(f"{site.url}/memories?q=Quillstack+beta")
    hit = page.locator("li.hit p.content").first.inner_text()
    context.close()
    assert "We decided to ship the Quillstack beta on Friday" in listing
    assert hit == "We decided to ship the Quillstack beta on Friday"


def test_a_browser_without_the_token_sees_only_the_refusal(site: Site, page: Any) -> None:
    response = page.goto(f"{site.url}/memories")
    assert response is not None
    assert response.status == 403
    assert "Token needed" in page.locator("h1").inner_text()
    assert "green tea" not in page.content()


def test_ensure_chromium_never_fails_where_it_cannot_install(tmp_path: Path) -> None:
    """Not root and no chromium on the PATH: it says why the browser tests will skip, and exits 0."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "id").write_text("#!/bin/sh\necho 1000\n")
    (bin_dir / "id").chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    done = subprocess.run(
        ["/bin/sh", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0
    assert "the browser tests will skip" in done.stderr
