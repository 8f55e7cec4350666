"""A cookie-keeping HTTP client for the console, as a browser without JavaScript uses it."""

from __future__ import annotations

import re
from typing import Any

import aiohttp

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


class Console:
    def __init__(self, base: str) -> None:
        self.base = base
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.csrf = ""

    async def close(self) -> None:
        await self.http.close()

    async def get(self, path: str, **kw: Any) -> tuple[int, str, aiohttp.ClientResponse]:
        async with self.http.get(self.base + path, allow_redirects=False, **kw) as resp:
            text = await resp.text()
            if found := CSRF.search(text):
                self.csrf = found.group(1)
            return resp.status, text, resp

    async def post(
        self, path: str, data: Any = None, *, csrf: bool = True, **kw: Any
    ) -> tuple[int, str, aiohttp.ClientResponse]:
        form: aiohttp.FormData | dict[str, Any]
        if isinstance(data, aiohttp.FormData):
            form = data
            if csrf:
                form.add_field("csrf", self.csrf)
        else:
            form = {**({"csrf": self.csrf} if csrf else {}), **(data or {})}
        async with self.http.post(self.base + path, data=form, allow_redirects=False, **kw) as resp:
            return resp.status, await resp.text(), resp

    async def page(self, path: str) -> str:
        """The page at `path`, which must answer 200."""
        status, text, _ = await self.get(path)
        assert status == 200, (path, status, text[:500])
        return text

    async def follow(self, resp: aiohttp.ClientResponse) -> str:
        """The page a 303 leads to (with its flash message)."""
        assert resp.status == 303, resp.status
        return await self.page(resp.headers["Location"])

    async def login(self, token: str) -> None:
        status, _, _ = await self.get("/console/login")
        assert status == 200
        status, _, resp = await self.post("/console/login", {"token": token})
        assert status == 303, status
        await self.follow(resp)

    @property
    def cookie(self) -> str:
        for cookie in self.http.cookie_jar:
            if cookie.key == "antler_console":
                return cookie.value
        return ""
