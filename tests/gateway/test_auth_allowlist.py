"""The gateway's auth is an allowlist: every route of the real aiohttp app, in every spelling
and with every method, refuses a request without the right token, except `/health`, the
console's login (and the assets it renders with) and the channels' declared webhook paths."""

from __future__ import annotations

import re
from typing import Any

import aiohttp
from aiohttp import web
from yarl import URL

from gateway.console.login_page import LOGIN_ASSETS, Gate
from tests.gateway.conftest import TOKEN, Api

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
CREDENTIALS: tuple[dict[str, str], ...] = (
    {},
    {"Authorization": "Bearer wrong"},
    {"Authorization": "Bearer"},
    {"Authorization": "Basic dGVzdDp0ZXN0"},
)
HOOK = "/hooks/test-channel"
PUBLIC = {"/health", "/health/", HOOK} | set(Gate.public)
REFUSED = {401, 403, 404, 405}
STATIC_SAMPLES = ("metrics.js", "vendor/LICENSE-htmx.txt", "vendor/uPlot-1.6.32.min.css")


def sample_paths(app: web.Application) -> set[str]:
    """A concrete path for every registered resource: `{var}` filled in, the static folder's
    files, the catch-all as a few unknown paths and the declared webhook."""
    paths: set[str] = {"/", "/favicon.ico", "/api", "/nothing", HOOK, *LOGIN_ASSETS}
    for resource in app.router.resources():
        info = resource.get_info()
        if "directory" in info:  # the console's static files
            paths |= {f"{info['prefix']}/{name}" for name in STATIC_SAMPLES}
        elif "path" in info:
            paths.add(info["path"])
        elif info.get("formatter") == "/{tail:.*}":
            continue  # the catch-all: the unknown paths above
        else:
            paths.add(re.sub(r"{[^}]+}", "x1", info["formatter"]))
    return paths


def spellings(path: str) -> set[str]:
    """The path with and without a trailing slash, and with a doubled one."""
    bare = path.rstrip("/") or "/"
    return {bare, bare + "/" if bare != "/" else "/", bare + "//"}


async def refused(api: Api, method: str, path: str, headers: dict[str, str]) -> str | None:
    """None when the request was refused; otherwise what was answered."""
    url = URL(api.base + path, encoded=True)  # exactly this spelling
    async with api.session.request(method, url, headers=headers, allow_redirects=False) as resp:
        status = resp.status
        location = resp.headers.get("Location", "")
    if status in REFUSED:
        return None
    if 300 <= status < 400 and location.startswith("/console/login"):
        return None  # the console sends a stranger to its login page, nothing else
    return f"{method} {path} {headers} -> {status} {location}"


async def test_every_route_refuses_a_request_without_the_token(api: Api) -> None:
    hits: list[str] = []

    async def hook(request: web.Request) -> web.Response:
        hits.append(request.method)
        return web.Response(text="hook")

    api.app.contexts["test"].add_route("POST", HOOK, hook)  # as a channel declares one
    gateway_app = api.app.gateway.app
    paths = sample_paths(gateway_app)
    assert {"/metrics", "/docs", "/openapi.json", "/api/channels", "/console/channels"} <= paths
    leaks: list[str] = []
    sent = 0
    for path in sorted(paths):
        for spelled in sorted(spellings(path)):
            if spelled in PUBLIC:
                continue
            for method in METHODS:
                for headers in CREDENTIALS if method == "GET" else CREDENTIALS[:2]:
                    sent += 1
                    if (leak := await refused(api, method, spelled, headers)) is not None:
                        leaks.append(leak)
    print(f"auth walk: {len(paths)} paths, {sent} requests")
    assert not leaks, "\n".join(leaks)
    assert hits == []


async def test_the_allowlist_answers_without_the_token(api: Api) -> None:
    async def hook(request: web.Request) -> web.Response:
        return web.Response(text="hook")

    api.app.contexts["test"].add_route("POST", HOOK, hook)
    assert (await api.call("GET", "/health", auth=False))[0] == 200
    assert (await api.call("POST", HOOK, auth=False))[:2] == (200, "hook")
    assert (await api.call("GET", HOOK, auth=False))[0] == 405  # declared path, other method
    status, page, _ = await api.call("GET", "/console/login", auth=False)
    assert status == 200
    loaded = set(re.findall(r'(?:src|href)="(/console/static/[^"]+)"', page))
    assert loaded == LOGIN_ASSETS  # what the login page needs, and no more, is public
    for asset in loaded:
        assert (await api.call("GET", asset, auth=False))[0] == 200, asset


async def test_the_token_and_a_console_session_still_open_what_they_opened(api: Api) -> None:
    for path in ("/metrics", "/metrics/", "/docs", "/docs/", "/openapi.json", "/api/channels"):
        assert (await api.call("GET", path))[0] == 200, path
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as browser:
        await _login(browser, api.base)
        for path in ("/console/channels", "/console/static/metrics.js"):
            async with browser.get(api.base + path, allow_redirects=False) as resp:
                assert resp.status == 200, path
        async with browser.get(api.base + "/metrics", allow_redirects=False) as resp:
            assert resp.status == 401  # the console's cookie opens the console only


async def _login(browser: aiohttp.ClientSession, base: str) -> None:
    async with browser.get(base + "/console/login") as resp:
        page = await resp.text()
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None
    form: dict[str, Any] = {"csrf": csrf.group(1), "token": TOKEN, "next": "/console/channels"}
    async with browser.post(base + "/console/login", data=form, allow_redirects=False) as resp:
        assert resp.status == 303
