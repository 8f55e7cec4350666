"""The console's auth: the admin token buys a strict session cookie; every change needs the
session's CSRF token from the same origin; open without a token only on loopback, like the API."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from gateway.console.login_page import LOGIN_ASSETS
from tests.console.client import Console
from tests.fakes.openai_server import FakeOpenAI
from tests.gateway.conftest import AUTH, TOKEN
from tests.harness import ServiceHarness


def cookie_header(resp: aiohttp.ClientResponse) -> str:
    values = resp.headers.getall("Set-Cookie", [])
    assert len(values) == 1, values
    return values[0]


async def test_login_gives_a_strict_httponly_cookie_and_a_new_session(console: Console) -> None:
    status, _, resp = await console.get("/console/channels")
    assert status == 303
    assert resp.headers["Location"] == "/console/login?next=%2Fconsole%2Fchannels"
    status, page, resp = await console.get("/console/login?next=%2Fconsole%2Fchannels")
    assert status == 200
    assert 'type="password"' in page
    before = console.cookie
    assert before

    status, page, _ = await console.post(
        "/console/login", {"token": "wrong", "next": "/console/channels"}
    )
    assert status == 401
    assert "not the admin token" in page
    assert 'aria-invalid="true"' in page
    status, _, resp = await console.post(
        "/console/login", {"token": TOKEN, "next": "/console/channels"}
    )
    assert status == 303
    assert resp.headers["Location"] == "/console/channels"
    flags = [part.strip().lower() for part in cookie_header(resp).split(";")]
    assert "httponly" in flags
    assert "samesite=strict" in flags
    assert "path=/console" in flags
    assert console.cookie != before  # a planted (pre-login) session id is worth nothing
    status, page, resp = await console.get("/console/channels")
    assert status == 200
    assert 'id="channel-test"' in page
    assert resp.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in resp.headers["Content-Security-Policy"]
    assert resp.headers["Cache-Control"] == "no-store"


async def test_every_change_needs_the_csrf_token_and_the_same_origin(admin: Console) -> None:
    await admin.get("/console/channels")
    path = "/console/channels/test/restart"
    assert (await admin.post(path, csrf=False))[0] == 403
    assert (await admin.post(path, {"csrf": "x" * 43}, csrf=False))[0] == 403
    status, _, _ = await admin.post(path, headers={"Origin": "http://evil.example"})
    assert status == 403
    status, _, _ = await admin.post(path, headers={"Referer": "http://evil.example/x"})
    assert status == 403
    status, _, _ = await admin.post(path, headers={"Origin": "null"})
    assert status == 403
    status, _, resp = await admin.post(path, headers={"Origin": admin.base})
    assert status == 303
    assert "test restarted." in await admin.follow(resp)
    status, _, resp = await admin.post(path, csrf=False, headers={"X-CSRF-Token": admin.csrf})
    assert status == 303


async def test_a_change_without_a_session_is_refused(console: Console) -> None:
    await console.get("/console/login")  # an anonymous session with its own csrf token
    status, _, _ = await console.post("/console/channels/test/restart")
    assert status == 303  # not logged in: sent to the login page, nothing restarted
    console.http.cookie_jar.clear()
    status, page, _ = await console.post("/console/channels/test/restart")
    assert status == 403
    assert "Refused" in page


async def test_cookie_and_bearer_token_do_not_stand_in_for_each_other(
    admin: Console, svc: ServiceHarness
) -> None:
    status, _, _ = await admin.get("/api/channels")
    assert status == 401
    async with (
        aiohttp.ClientSession() as http,
        http.get(
            svc.gateway_url + "/console/channels", headers=AUTH, allow_redirects=False
        ) as resp,
    ):
        assert resp.status == 303


async def test_logout_ends_the_session(admin: Console) -> None:
    await admin.get("/console/channels")
    old = admin.cookie
    status, _, resp = await admin.post("/console/logout")
    assert status == 303
    assert resp.headers["Location"] == "/console/login"
    admin.http.cookie_jar.update_cookies({"antler_console": old})
    status, _, _ = await admin.get("/console/channels")
    assert status == 303


async def test_next_never_leaves_the_console(console: Console) -> None:
    await console.get("/console/login")
    for target in (
        "//evil.example/console/",
        "https://evil.example/",
        "/api/channels",
        "/console\\..\\x",
    ):
        console.http.cookie_jar.clear()
        await console.get("/console/login")
        status, _, resp = await console.post("/console/login", {"token": TOKEN, "next": target})
        assert status == 303, target
        assert resp.headers["Location"] == "/console/channels", target


async def test_without_a_token_the_console_is_open_on_loopback_and_still_csrf_safe(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> None:
    harness = ServiceHarness(tmp_path, fake_openai, {"test": {"enabled": True}})
    async with harness as svc:
        console = Console(svc.gateway_url)
        try:
            status, page, resp = await console.get("/console/channels")
            assert status == 200
            assert 'id="channel-test"' in page
            assert "Log out" not in page
            assert "samesite=strict" in cookie_header(resp).lower()
            assert (await console.post("/console/channels/test/restart", csrf=False))[0] == 403
            status, _, _ = await console.post(
                "/console/channels/test/restart", headers={"Origin": "http://evil.example"}
            )
            assert status == 403
            assert (await console.post("/console/channels/test/restart"))[0] == 303
        finally:
            await console.close()


async def test_static_assets_are_served_with_their_licences(console: Console) -> None:
    """The login page's own assets are public; the others need a logged-in session."""
    status, _, resp = await console.get("/console/static/vendor/LICENSE-uplot.txt")
    assert status == 303
    assert resp.headers["Location"].startswith("/console/login?next=")
    for path in LOGIN_ASSETS:
        assert (await console.get(path))[0] == 200, path
    await console.login(TOKEN)
    for path in (
        "/console/static/vendor/htmx-2.0.11.min.js",
        "/console/static/vendor/uPlot-1.6.32.iife.min.js",
        "/console/static/vendor/LICENSE-htmx.txt",
        "/console/static/vendor/LICENSE-uplot.txt",
        "/console/static/console.css",
    ):
        status, _, resp = await console.get(path)
        assert status == 200, path
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
    status, _, _ = await console.get("/console/static/../templates/base.html")
    assert status in (403, 404)


async def test_a_trailing_slash_finds_the_console(admin: Console) -> None:
    status, _, resp = await admin.get("/console/")
    assert status == 308
    assert resp.headers["Location"] == "/console"


async def test_repeated_wrong_tokens_are_throttled(console: Console) -> None:
    await console.get("/console/login")
    for _ in range(10):
        status, _, _ = await console.post("/console/login", {"token": "guess"})
        assert status == 401
    status, page, _ = await console.post("/console/login", {"token": TOKEN})
    assert status == 429
    assert "Too many wrong tokens" in page
    assert (await console.get("/console/channels"))[0] == 303  # still not logged in
