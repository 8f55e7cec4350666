"""web_fetch and web_search against a local aiohttp server; configured-tool loading errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from agent.config import ToolEntry
from agent.tools.configured import load_configured_tools
from bot.config.schema import ConfigError, settings_from_dict

PAGE = (
    """<html><head><title>Antler  Docs</title><script>var secret = 1;</script>
<style>body {color: red}</style></head><body><nav>Home | About</nav>
<h1>Getting started</h1><p>Install it &amp; run it.</p><ul><li>one</li><li>two</li></ul>
<table><tr><th>plan</th><th>price</th></tr><tr><td>free</td><td>0</td></tr></table>
<form><button>Subscribe</button></form><footer>All rights reserved</footer>
<p>"""
    + "filler " * 500
    + "</p></body></html>"
)


@pytest.fixture
async def site() -> AsyncIterator[dict[str, Any]]:
    seen: dict[str, Any] = {}

    async def page(_req: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    async def moved(_req: web.Request) -> web.Response:
        raise web.HTTPFound("/page")

    async def search(req: web.Request) -> web.Response:
        seen["auth"] = req.headers.get("Authorization")
        seen["body"] = await req.json()
        return web.json_response(
            {
                "results": [
                    {
                        "title": "Antler",
                        "url": "https://example.org/a",
                        "content": "An agent  in chat.",
                    },
                    {"title": "Other", "url": "https://example.org/b", "content": "More."},
                ]
            }
        )

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/moved", moved)
    app.router.add_post("/search", search)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    seen["base"] = f"http://127.0.0.1:{server.port}"
    yield seen
    await server.close()


def make(name: str, use: str, **opts: Any) -> Any:
    [tool], notes = load_configured_tools(
        [ToolEntry(name=name, use=use, **opts)], bash_enabled=False
    )
    assert notes == []
    return tool


async def test_web_fetch_returns_readable_capped_text(site: dict[str, Any]) -> None:
    fetch = make(
        "web_fetch", "agent.tools.web:web_fetch_tool", max_chars=300, allow_private_addresses=True
    )
    text = await fetch.ainvoke({"url": site["base"] + "/moved"})
    assert text.startswith("# Antler Docs\n" + site["base"] + "/page")
    assert "# Getting started" in text
    assert "Install it & run it." in text
    assert "* one\n* two" in text
    assert "secret" not in text
    assert "color" not in text
    assert "Home | About" not in text
    assert "| plan | price |\n| --- | --- |\n| free | 0 |" in text
    assert "Subscribe" not in text
    assert "All rights reserved" not in text
    assert text.endswith("[truncated]")
    assert len(text) < 500


async def test_web_fetch_refuses_private_addresses_and_bad_schemes(site: dict[str, Any]) -> None:
    fetch = make("web_fetch", "agent.tools.web:web_fetch_tool")
    refused = await fetch.ainvoke({"url": site["base"] + "/page"})
    assert refused.startswith("Error: 127.0.0.1 is a private or local address")
    assert (await fetch.ainvoke({"url": "file:///etc/passwd"})).startswith(
        "Error: only http(s) URLs"
    )


async def test_web_search_with_tavily(site: dict[str, Any]) -> None:
    search = make(
        "web_search",
        "agent.tools.web:web_search_tool",
        api_key="tv-test",
        base_url=site["base"],
        max_results=1,
    )
    text = await search.ainvoke({"query": "antler agent"})
    assert text == "1. Antler\nhttps://example.org/a\nAn agent in chat."
    assert site["auth"] == "Bearer tv-test"
    assert site["body"]["query"] == "antler agent"


def test_web_search_without_key_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    tools, notes = load_configured_tools(
        [
            ToolEntry.model_validate(
                {"name": "web_search", "use": "agent.tools.web:web_search_tool", "api_key": ""}
            )
        ],
        bash_enabled=False,
    )
    assert tools == []
    assert "agent.tools[0] (web_search): not available: no Tavily key" in notes[0]


def test_bad_tool_path_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        settings_from_dict(
            {
                "agent": {
                    "tools": [
                        {"name": "ok", "use": "agent.tools.web:web_fetch_tool"},
                        {"name": "gone", "use": "no_such_pkg.tools:thing"},
                        {"name": "typo", "use": "agent.tools.web:web_fetch_tol"},
                    ]
                }
            }
        )
    problems = "\n".join(info.value.problems)
    assert "agent.tools[1].use" in problems
    assert "cannot import 'no_such_pkg.tools'" in problems
    assert "agent.tools[2].use" in problems
    assert "has no 'web_fetch_tol'" in problems
    assert "agent.tools[0]" not in problems
