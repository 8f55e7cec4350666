"""Shared fixtures: no proxies, ever (slack_sdk ignores NO_PROXY); the fake OpenAI server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from bot.runtime import freeze_startup_objects, tune_gc
from tests.fakes.openai_server import FakeOpenAI
from tests.scheduling import spread

_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests spread over the workers' first shares (tests/scheduling.py)."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    order = spread([item.nodeid for item in items], workers)
    items[:] = [items[i] for i in order]


def pytest_collection_finish(session: pytest.Session) -> None:
    """The service's own collector settings (bot/runtime.py) in each test process: what
    collection imported (the SDKs, LangChain; lark_oapi alone is 11,000 modules) is frozen out
    of the collector's sight. Without it every full collection walked all of it again: a
    sixth of the suite's CPU went to the collector."""
    tune_gc()
    freeze_startup_objects()
    _frozen_with[0] = len(sys.modules)


_frozen_with = [0]  # modules loaded when the collector last froze what was alive


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """A test that loaded a big SDK (lark-oapi loads when a Feishu test first needs it, 11,000
    modules) has it frozen too, like what collection imported."""
    if len(sys.modules) > _frozen_with[0] + 1000:
        freeze_startup_objects()
        _frozen_with[0] = len(sys.modules)


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in _PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture(autouse=True)
def _fresh_openai_http_clients() -> None:
    """langchain-openai caches its httpx client per (base_url, timeout), across event loops: a
    fake server on a port an earlier test used would get that test's client, bound to a closed
    loop ("Event loop is closed"). Each test starts without the cache."""
    from langchain_openai.chat_models import _client_utils

    cached = getattr(_client_utils, "_cached_async_httpx_client", None)
    if cached is not None:
        cached.cache_clear()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fresh fake OpenAI-compatible server for one test (`fake_openai.base_url` ends in /v1)."""
    fake = FakeOpenAI().start()
    try:
        yield fake
    finally:
        fake.release()
        fake.stop()


@pytest.fixture
def test_channel_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Register the recording channel as platform `test` for this test."""
    import channels
    from bot.config.schema import channels_model

    monkeypatch.setitem(
        channels.REGISTRY,
        "test",
        (
            "tests.fakes.recording_channel:RecordingConfig",
            "tests.fakes.recording_channel:RecordingChannel",
        ),
    )
    channels_model.cache_clear()
    yield
    channels_model.cache_clear()


def _a_server(kind: Any) -> Iterator[str]:
    """The address of a server of `kind` (tests/pg_server.py, tests/redis_server.py): the
    machine's, or a throwaway one started now and stopped at the end; without either the test
    is skipped (failed in CI) with what to install."""
    address, throwaway = kind.find_server()
    if address is None:
        if kind.required():
            pytest.fail(kind.INSTALL_HINT)
        pytest.skip(kind.INSTALL_HINT)
    try:
        yield address
    finally:
        if throwaway is not None:
            throwaway.stop()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A PostgreSQL server's DSN (see tests/pg_server.py)."""
    from tests import pg_server

    yield from _a_server(pg_server)


@pytest.fixture
def pg_dsn(pg_server: str) -> Iterator[str]:
    """A DSN on a schema of its own for this test (dropped afterwards)."""
    from tests import pg_server as pg

    name, dsn = pg.new_schema(pg_server)
    try:
        yield dsn
    finally:
        pg.drop_schema(pg_server, name)


@pytest.fixture(params=["sqlite", "postgres"])
def storage(request: pytest.FixtureRequest) -> dict[str, object]:
    """The `storage` config section for each backend (data_dir is the harness's own)."""
    if request.param == "sqlite":
        return {"backend": "sqlite"}
    dsn = request.getfixturevalue("pg_dsn")
    return {"backend": "postgres", "postgres": {"dsn": dsn}}


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """A Redis server's URL (see tests/redis_server.py)."""
    from tests import redis_server

    yield from _a_server(redis_server)


@pytest.fixture
def redis_bus(redis_server: str) -> Iterator[dict[str, object]]:
    """The `bus` config section for a Redis bus under a key prefix of this test's own."""
    from tests import redis_server as rs

    prefix = rs.new_prefix()
    try:
        yield {
            "backend": "redis",
            "redis": {
                "url": redis_server,
                "key_prefix": prefix,
                "partitions": 8,
                "lease_seconds": 2,
            },
        }
    finally:
        rs.drop_prefix(redis_server, prefix)
