"""Gateway fixtures: the whole service (recording channel `test`, fake OpenAI models) with the
admin API on an ephemeral loopback port and a bearer token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from yarl import URL

from gateway.registry import GATEWAY_KEY
from tests.fakes.openai_server import FakeOpenAI
from tests.harness import ServiceHarness

TOKEN = "test-admin-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class Api:
    """A thin aiohttp client for the admin API with the token set."""

    def __init__(self, svc: ServiceHarness, session: aiohttp.ClientSession) -> None:
        self.svc = svc
        self.base = svc.gateway_url
        self.session = session

    @property
    def app(self) -> Any:
        assert self.svc.app is not None
        return self.svc.app

    @property
    def gw(self) -> Any:
        assert self.app.gateway is not None
        return self.app.gateway.app[GATEWAY_KEY]

    async def call(
        self, method: str, path: str, *, auth: bool = True, raw: bool = False, **kw: Any
    ) -> tuple[int, Any, aiohttp.ClientResponse]:
        """`raw=True` sends the path exactly as given (no `..` folding, no re-encoding)."""
        headers = {**(AUTH if auth else {}), **kw.pop("headers", {})}
        url = URL(self.base + path, encoded=True) if raw else self.base + path
        async with self.session.request(method, url, headers=headers, **kw) as resp:
            data = await resp.read()
            ctype = resp.headers.get("Content-Type", "")
            body: Any = data
            if "json" in ctype:
                body = await resp.json()
            elif ctype.startswith("text/"):
                body = data.decode()
            return resp.status, body, resp


def make_harness(tmp_path: Path, fake: FakeOpenAI, **extra: Any) -> ServiceHarness:
    gateway = {"auth_token": TOKEN, **extra.pop("gateway", {})}
    agent = {
        "extensions_config": str(tmp_path / "extensions_config.json"),
        **extra.pop("agent", {}),
    }
    return ServiceHarness(
        tmp_path, fake, {"test": {"enabled": True}}, gateway=gateway, agent=agent, **extra
    )


@asynccontextmanager
async def served_api(tmp_path: Path, fake: FakeOpenAI, **extra: Any) -> AsyncIterator[Api]:
    """The service (`make_harness`'s, with `extra`) started, and a client of its API."""
    async with make_harness(tmp_path, fake, **extra) as svc, aiohttp.ClientSession() as session:
        yield Api(svc, session)


@pytest.fixture
async def api(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> AsyncIterator[Api]:
    async with served_api(tmp_path, fake_openai) as api:
        yield api


@pytest.fixture
async def api_on_backend(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    test_channel_registered: None,
    storage: dict[str, object],
) -> AsyncIterator[Api]:
    """`api` on each storage backend (the `storage` fixture's: SQLite, PostgreSQL)."""
    async with served_api(tmp_path, fake_openai, storage=storage) as api:
        yield api
