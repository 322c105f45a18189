"""The inspector over HTTP (Starlette's TestClient): the token gate, escaping, and each page and write."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from starlette.routing import Route
from starlette.testclient import TestClient
from starlette.types import Message
from web_site import HOSTILE, OTHER_USER, SCOPE, TOKEN, open_engine, seed

from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.errors import InvalidInputError
from hermes_bowerbird.options import RecallOptions, TurnCapture
from hermes_bowerbird.web import Inspector, create_app
from hermes_bowerbird.web.actions import ACTIONS
from hermes_bowerbird.web.security import TokenGate
from hermes_bowerbird.web.server import DEFAULT_PORT, bind

if TYPE_CHECKING:
    from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder

BASE = "http://127.0.0.1:8767"


@pytest.fixture(scope="module")
def shared(
    tmp_path_factory: pytest.TempPathFactory, minilm: LocalEmbedder
) -> Iterator[tuple[Bowerbird, dict[str, int]]]:
    """One seeded home for the tests that only read (or are refused): seeding embeds and curates, which takes time."""
    opened = open_engine(tmp_path_factory.mktemp("shared"), minilm)
    ids = seed(opened)
    yield opened, ids
    opened.shutdown()


@pytest.fixture
def fresh(tmp_path: Path, minilm: LocalEmbedder) -> Iterator[tuple[Bowerbird, dict[str, int]]]:
    """A seeded home of the test's own, for the tests that change memory."""
    opened = open_engine(tmp_path, minilm)
    ids = seed(opened)
    yield opened, ids
    opened.shutdown()


def clients(engine: Bowerbird) -> tuple[TestClient, TestClient]:
    """(a client that never had the token, one that opened the printed link and so holds the cookie)."""
    anonymous = TestClient(
        create_app(Inspector(engine, TOKEN)), base_url=BASE, follow_redirects=False
    )
    holder = TestClient(create_app(Inspector(engine, TOKEN)), base_url=BASE)
    holder.get(f"/?token={TOKEN}")
    return anonymous, holder


@pytest.fixture
def engine(shared: tuple[Bowerbird, dict[str, int]]) -> Bowerbird:
    return shared[0]


@pytest.fixture
def ids(shared: tuple[Bowerbird, dict[str, int]]) -> dict[str, int]:
    return shared[1]


@pytest.fixture
def anonymous(engine: Bowerbird) -> TestClient:
    return clients(engine)[0]


@pytest.fixture
def client(engine: Bowerbird) -> TestClient:
    return clients(engine)[1]


def write_paths(memory_id: int) -> list[tuple[str, dict[str, str]]]:
    return [
        (f"/memories/{memory_id}/edit", {"content": "Rewritten by a stranger"}),
        (f"/memories/{memory_id}/forget", {"reason": "stranger"}),
        (f"/memories/{memory_id}/restore", {}),
        (f"/memories/{memory_id}/importance", {"importance": "0.05"}),
    ]


def test_the_write_table_covers_every_post_route(engine: Bowerbird) -> None:
    app = create_app(Inspector(engine, TOKEN))
    posts = {r.path for r in app.routes if isinstance(r, Route) and "POST" in (r.methods or ())}
    assert posts == {f"/memories/{{memory_id:int}}/{name}" for name in ACTIONS}


@pytest.mark.parametrize("token", [None, "", "wrong", TOKEN + "x", TOKEN.upper()])
@pytest.mark.parametrize("action", range(4))
def test_every_write_without_the_token_is_refused(
    client: TestClient, engine: Bowerbird, ids: dict[str, int], token: str | None, action: int
) -> None:
    """Even with the reading cookie (as a cross-site form would send it), a write needs the token in its form."""
    path, form = write_paths(ids["tea"])[action]
    if token is not None:
        form = {**form, "token": token}
    before = engine.inspect.show(ids["tea"], scopes=[SCOPE])
    response = client.post(path, data=form)
    assert response.status_code == 403
    assert engine.inspect.show(ids["tea"], scopes=[SCOPE]) == before


def test_a_write_with_the_token_only_in_the_url_is_refused(
    client: TestClient, engine: Bowerbird, ids: dict[str, int]
) -> None:
    response = client.post(f"/memories/{ids['tea']}/forget?token={TOKEN}", data={"reason": "x"})
    assert response.status_code == 403
    assert engine.inspect.show(ids["tea"], scopes=[SCOPE]).memory.forgotten is False


@pytest.mark.parametrize(
    "path", ["/", "/memories", "/memories?q=tea", "/memories/1", "/bulletin", "/status"]
)
def test_reads_without_the_token_are_refused(anonymous: TestClient, path: str) -> None:
    response = anonymous.get(path)
    assert response.status_code == 403
    assert "Token needed" in response.text


def test_a_wrong_token_in_the_link_is_refused(anonymous: TestClient) -> None:
    assert anonymous.get("/memories?token=guess").status_code == 403


def test_the_link_sets_a_strict_cookie_and_drops_the_token_from_the_address(
    anonymous: TestClient,
) -> None:
    response = anonymous.get(f"/memories?type=fact&token={TOKEN}")
    assert response.status_code == 303
    assert response.headers["location"] == "/memories?type=fact"
    cookie = response.headers["set-cookie"].lower()
    assert cookie.startswith(f"bowerbird_token_8767={TOKEN.lower()};")
    assert "httponly" in cookie
    assert "samesite=strict" in cookie


def test_the_link_never_redirects_to_another_site() -> None:
    """A raw request path of //host must not become a protocol-relative Location."""
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": "//elsewhere.example/x",
        "raw_path": b"//elsewhere.example/x",
        "query_string": f"token={TOKEN}".encode(),
        "headers": [(b"host", b"127.0.0.1:8767")],
        "server": ("127.0.0.1", 8767),
        "scheme": "http",
        "root_path": "",
        "http_version": "1.1",
    }
    asyncio.run(TokenGate(create_app(Inspector(None, TOKEN)), TOKEN)(scope, receive, send))  # type: ignore[arg-type]
    headers = dict(sent[0]["headers"])
    assert headers[b"location"] == b"/elsewhere.example/x"


def test_static_files_need_no_token(anonymous: TestClient) -> None:
    assert anonymous.get("/static/inspector.css").status_code == 200


def test_another_host_name_is_refused(engine: Bowerbird, ids: dict[str, int]) -> None:
    """A DNS-rebound name pointing at 127.0.0.1 must not reach the pages."""
    rebound = TestClient(
        create_app(Inspector(engine, TOKEN)), base_url="http://attacker.example:8767"
    )
    assert rebound.get(f"/memories?token={TOKEN}").status_code == 400


@pytest.mark.parametrize(
    ("header", "value"),
    [
        (
            "content-security-policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
        ("referrer-policy", "no-referrer"),
        ("x-frame-options", "DENY"),
        ("cache-control", "no-store"),
    ],
)
def test_pages_carry_security_headers(client: TestClient, header: str, value: str) -> None:
    assert client.get("/memories").headers[header] == value


@pytest.mark.parametrize(
    "path", ["/memories", "/memories?q=note+remember", "/memories/{hostile}", "/bulletin"]
)
def test_hostile_memory_text_is_escaped(client: TestClient, ids: dict[str, int], path: str) -> None:
    html = client.get(path.format(hostile=ids["hostile"])).text
    assert HOSTILE not in html
    assert "&lt;img src=x onerror=" in html
    assert "<img" not in html
    assert "<script>document" not in html
    assert "{{ 7*7 }}" in html


def test_listing_filters_by_type_and_scope(client: TestClient, ids: dict[str, int]) -> None:
    html = client.get("/memories?type=decision").text
    assert "ship the Quillstack beta" in html
    assert "green tea" not in html
    assert "spare bike key" in client.get(f"/memories?scope={OTHER_USER}").text
    assert "green tea" not in client.get(f"/memories?scope={OTHER_USER}").text


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/memories?type=gossip", 400),
        ("/memories?scope=user:nobody", 404),
        ("/memories/99999", 404),
    ],
)
def test_bad_filters_and_ids_get_a_clear_error_page(
    client: TestClient, path: str, status: int
) -> None:
    assert client.get(path).status_code == status


def test_search_shows_the_reasons_each_hit_ranked(client: TestClient, ids: dict[str, int]) -> None:
    html = client.get("/memories?q=what+tea+do+I+like").text
    first = html.index('class="hit"')
    assert f'href="/memories/{ids["tea"]}"' in html[first : first + 800]
    assert "Why it ranked #1" in html
    assert re.search(r"<td>vector_memory</td><td class=\"num\">0\.\d{3}</td>", html)
    assert "<td>final</td>" in html


def test_memory_page_shows_source_turn_entities_and_history(
    client: TestClient, ids: dict[str, int]
) -> None:
    html = client.get(f"/memories/{ids['maya']}").text
    assert "session session-1 · turn 0 · user" in html
    assert "<li>Maya <span" in html
    assert "<td>create</td>" in html


def test_memory_page_shows_the_questions_it_is_found_by(
    client: TestClient, ids: dict[str, int]
) -> None:
    html = client.get(f"/memories/{ids['tea']}").text
    assert "Found by the questions" in html
    assert re.search(
        r'<ul class="questions"><li>[^<]+<span class="muted">from the rules</span>', html
    )


def test_edit_writes_a_new_version_that_supersedes(fresh: tuple[Bowerbird, dict[str, int]]) -> None:
    engine, ids = fresh
    client = clients(engine)[1]
    response = client.post(
        f"/memories/{ids['tea']}/edit", data={"token": TOKEN, "content": "I prefer black tea now"}
    )
    new_id = int(response.url.path.rsplit("/", 1)[1])
    assert engine.inspect.show(ids["tea"], scopes=[SCOPE]).memory.superseded_by == new_id
    assert f"superseded by #{new_id}" in response.text
    assert "I prefer black tea now" in response.text


def test_forget_then_restore(fresh: tuple[Bowerbird, dict[str, int]]) -> None:
    engine, ids = fresh
    client = clients(engine)[1]
    client.post(
        f"/memories/{ids['db']}/forget", data={"token": TOKEN, "reason": "moved to Postgres"}
    )
    assert engine.inspect.show(ids["db"], scopes=[SCOPE]).memory.forgotten is True
    assert "SQLite with WAL" not in client.get("/memories").text
    page = client.post(f"/memories/{ids['db']}/restore", data={"token": TOKEN}).text
    assert engine.inspect.show(ids["db"], scopes=[SCOPE]).memory.forgotten is False
    assert "moved to Postgres" in page


def test_importance_is_set_and_checked(fresh: tuple[Bowerbird, dict[str, int]]) -> None:
    engine, ids = fresh
    client = clients(engine)[1]
    client.post(f"/memories/{ids['ship']}/importance", data={"token": TOKEN, "importance": "0.35"})
    assert engine.inspect.show(ids["ship"], scopes=[SCOPE]).memory.importance == 0.35
    for bad in ("1.5", "-0.1", "lots"):
        assert (
            client.post(
                f"/memories/{ids['ship']}/importance", data={"token": TOKEN, "importance": bad}
            ).status_code
            == 400
        )
    assert engine.inspect.show(ids["ship"], scopes=[SCOPE]).memory.importance == 0.35


def test_empty_edit_is_refused(client: TestClient, ids: dict[str, int]) -> None:
    response = client.post(f"/memories/{ids['tea']}/edit", data={"token": TOKEN, "content": "   "})
    assert response.status_code == 400


def test_a_user_scoped_inspector_cannot_see_or_change_another_user(
    engine: Bowerbird, ids: dict[str, int]
) -> None:
    alice = TestClient(create_app(Inspector(engine, TOKEN, ("user:alice", SCOPE))), base_url=BASE)
    alice.get(f"/?token={TOKEN}")
    assert "spare bike key" not in alice.get("/memories").text
    assert alice.get(f"/memories/{ids['bob']}").status_code == 404
    assert alice.post(f"/memories/{ids['bob']}/forget", data={"token": TOKEN}).status_code == 404
    assert engine.inspect.show(ids["bob"], scopes=[OTHER_USER]).memory.forgotten is False


def test_bulletin_page_shows_what_the_next_session_gets(
    client: TestClient, engine: Bowerbird
) -> None:
    html = client.get("/bulletin").text
    expected = engine.bulletin(SCOPE, synthesise=False)
    assert expected is not None
    assert "green tea" in expected.text
    assert "I prefer green tea over coffee in the morning" in html


def test_status_shows_backlog_embedding_and_last_maintenance(
    fresh: tuple[Bowerbird, dict[str, int]],
) -> None:
    engine = fresh[0]
    client = clients(engine)[1]
    engine.capture_turn(TurnCapture("Not curated yet", "ok", scope=SCOPE, session_id="session-2"))
    engine.admin.maintain("decay")
    html = client.get("/status").text
    assert '<dd id="backlog">1 turn waiting to be curated</dd>' in html
    assert "all-MiniLM-L6-v2 (384 dims)" in html
    assert re.search(r"<tr><td>decay</td><td>\d{4}-\d\d-\d\d \d\d:\d\d</td>", html)


@pytest.mark.slow
def test_bowerbird_serve_prints_a_token_link_that_works(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    env = {
        **os.environ,
        "BOWERBIRD_EMBEDDING_BACKEND": "none",
        "BOWERBIRD_LLM_BACKEND": "none",
        "BOWERBIRD_MAINTENANCE_ENABLED": "false",
    }
    command = [sys.executable, "-m", "hermes_bowerbird.cli", "--hermes-home", str(home)]
    subprocess.run(
        [*command, "remember", "The garden gate sticks in wet weather"],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    server = subprocess.Popen(
        [*command, "serve", "--no-open", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", line)
        assert url is not None, line
        base = url.group(0).split("/?")[0]
        assert httpx.get(base + "/memories", timeout=30).status_code == 403
        page = httpx.get(url.group(0), follow_redirects=True, timeout=30)
        assert "The garden gate sticks in wet weather" in page.text
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.slow
def test_bowerbird_serve_finds_a_users_platform_and_shows_only_their_memories(
    tmp_path: Path,
) -> None:
    home = tmp_path / "hermes"
    env = {
        **os.environ,
        "BOWERBIRD_EMBEDDING_BACKEND": "none",
        "BOWERBIRD_LLM_BACKEND": "none",
        "BOWERBIRD_MAINTENANCE_ENABLED": "false",
    }
    command = [sys.executable, "-m", "hermes_bowerbird.cli", "--hermes-home", str(home)]
    for user, text in (("cli:u2", "The garden gate sticks"), ("cli:u20", "The shed door creaks")):
        subprocess.run(
            [*command, "--user", user, "remember", text],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
    server = subprocess.Popen(
        [*command, "--user", "u2", "serve", "--no-open", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", line)
        assert url is not None, line
        page = httpx.get(url.group(0), follow_redirects=True, timeout=30).text
        assert ("The garden gate sticks" in page, "The shed door creaks" in page) == (True, False)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_searching_in_the_inspector_leaves_access_counts_alone(
    fresh: tuple[Bowerbird, dict[str, int]],
) -> None:
    engine, ids = fresh
    before = engine.inspect.show(ids["tea"], scopes=[SCOPE]).memory.access_count
    clients(engine)[1].get("/memories?q=green+tea")
    assert engine.inspect.show(ids["tea"], scopes=[SCOPE]).memory.access_count == before


def test_bind_listens_on_loopback_only() -> None:
    sock = bind(0)
    try:
        assert sock.getsockname()[0] == "127.0.0.1"
    finally:
        sock.close()


def test_a_taken_port_given_explicitly_is_a_clear_error() -> None:
    taken = bind(0)
    try:
        with pytest.raises(InvalidInputError, match=r"cannot listen on 127\.0\.0\.1:\d+"):
            bind(taken.getsockname()[1])
    finally:
        taken.close()


def test_a_taken_default_port_falls_back_to_a_free_one() -> None:
    holder = socket.socket()
    try:
        with contextlib.suppress(OSError):  # already taken by someone else serves the test as well
            holder.bind(("127.0.0.1", DEFAULT_PORT))
            holder.listen()
        sock = bind(None)
        try:
            assert sock.getsockname()[1] != DEFAULT_PORT
        finally:
            sock.close()
    finally:
        holder.close()


def test_versions_run_oldest_to_newest_through_any_version(
    fresh: tuple[Bowerbird, dict[str, int]],
) -> None:
    engine, ids = fresh
    client = clients(engine)[1]
    second = client.post(
        f"/memories/{ids['ship']}/edit", data={"token": TOKEN, "content": "Ship the beta on Monday"}
    )
    second_id = int(second.url.path.rsplit("/", 1)[1])
    client.post(
        f"/memories/{second_id}/edit", data={"token": TOKEN, "content": "Ship the beta on Tuesday"}
    )
    html = client.get(f"/memories/{second_id}").text
    versions = html[html.index('id="versions"') : html.index('id="edges"')]
    found = [versions.index(text) for text in ("Friday", "Monday", "Tuesday")]
    assert found == sorted(found)


def test_a_restored_memory_is_found_by_meaning_again(
    fresh: tuple[Bowerbird, dict[str, int]],
) -> None:
    engine, ids = fresh
    client = clients(engine)[1]
    client.post(f"/memories/{ids['tea']}/forget", data={"token": TOKEN})
    client.post(f"/memories/{ids['tea']}/restore", data={"token": TOKEN})
    hits = engine.recall(
        "hot drinks before breakfast",
        scopes=[SCOPE],
        options=RecallOptions(explain=True, include_episodes=False),
    )
    tea = [h for h in hits if h.id == ids["tea"]]
    assert "vector_memory" in tea[0].signals
