"""`web_fetch` and `web_search`, configured in `agent.tools[]`:

```yaml
- {name: web_fetch, group: web, use: "agent.tools.web:web_fetch_tool", max_chars: 20000}
- {name: web_search, group: web, use: "agent.tools.web:web_search_tool",
   api_key: $TAVILY_API_KEY, max_results: 5}
```
`web_fetch` refuses private, loopback and link-local addresses (also after redirects) unless
`allow_private_addresses: true`. `web_search` uses Tavily when a key is set, or any
`provider: "module:function"` (`async fn(query, max_results, options) -> list[dict]` with
`title`, `url`, `content`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from agent.import_path import resolve_variable
from agent.tools.configured import ToolUnavailable
from agent.tools.html_text import html_to_text

if TYPE_CHECKING:
    from agent.config import ToolEntry

MAX_REDIRECTS = 5
TAVILY_URL = "https://api.tavily.com"
SearchFn = Callable[[str, int, dict[str, Any]], Awaitable[list[dict[str, Any]]]]


class FetchError(Exception):
    pass


async def check_host(url: str, allow_private: bool) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError(f"only http(s) URLs can be fetched, not {url!r}")
    if allow_private:
        return
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(parts.hostname, parts.port or 443, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise FetchError(f"cannot resolve {parts.hostname}: {exc}") from exc
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global:
            raise FetchError(f"{parts.hostname} is a private or local address; not fetched")


async def fetch_text(
    url: str, *, max_bytes: int, max_chars: int, timeout: float, allow_private: bool
) -> str:
    import aiohttp

    client_timeout = aiohttp.ClientTimeout(total=timeout)
    headers = {"User-Agent": "Antler/0.1 (+web_fetch)", "Accept": "text/html,text/plain,*/*"}
    async with aiohttp.ClientSession(timeout=client_timeout, headers=headers) as session:
        for _ in range(MAX_REDIRECTS + 1):
            await check_host(url, allow_private)
            async with session.get(url, allow_redirects=False) as resp:
                if resp.status in (301, 302, 303, 307, 308) and resp.headers.get("Location"):
                    url = urljoin(url, resp.headers["Location"])
                    continue
                if resp.status >= 400:
                    raise FetchError(f"{url} answered HTTP {resp.status}")
                data = await resp.content.read(max_bytes + 1)
                kind = resp.headers.get("Content-Type", "")
                return _readable(url, data[:max_bytes], kind, len(data) > max_bytes, max_chars)
    raise FetchError(f"too many redirects from {url}")


def _readable(url: str, data: bytes, kind: str, truncated: bool, max_chars: int) -> str:
    if not any(t in kind for t in ("text", "html", "json", "xml")) and kind:
        return f"{url}: {kind} content ({len(data)} bytes) is not text; not shown."
    raw = data.decode("utf-8", errors="replace")
    title, text = html_to_text(raw) if "html" in kind or "<html" in raw[:500].lower() else ("", raw)
    header = f"# {title}\n{url}\n\n" if title else f"{url}\n\n"
    body = text[:max_chars]
    if truncated or len(text) > max_chars:
        body += "\n\n[truncated]"
    return header + body


def web_fetch_tool(entry: ToolEntry) -> Any:
    from langchain_core.tools import StructuredTool

    opts = entry.options()
    max_chars = int(opts.get("max_chars", 20_000))
    max_bytes = int(opts.get("max_bytes", 2_000_000))
    timeout = float(opts.get("timeout_seconds", 20))
    allow_private = bool(opts.get("allow_private_addresses", False))

    async def web_fetch(url: str) -> str:
        try:
            return await fetch_text(
                url,
                max_bytes=max_bytes,
                max_chars=max_chars,
                timeout=timeout,
                allow_private=allow_private,
            )
        except FetchError as exc:
            return f"Error: {exc}"
        except (TimeoutError, OSError) as exc:
            return f"Error: could not fetch {url}: {type(exc).__name__} {exc}".strip()

    return StructuredTool.from_function(
        coroutine=web_fetch,
        name=entry.name,
        description="Fetch a web page (http/https URL) and return its readable text. Use it "
        "to read pages found with web_search or given by the user.",
    )


async def tavily_search(query: str, max_results: int, opts: dict[str, Any]) -> list[dict[str, Any]]:
    import aiohttp

    base = str(opts.get("base_url") or TAVILY_URL).rstrip("/")
    body = {"query": query, "max_results": max_results, "search_depth": "basic"}
    headers = {"Authorization": f"Bearer {opts['api_key']}"}
    timeout = aiohttp.ClientTimeout(total=float(opts.get("timeout_seconds", 20)))
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.post(f"{base}/search", json=body, headers=headers) as resp,
    ):
        if resp.status >= 400:
            raise FetchError(f"search provider answered HTTP {resp.status}")
        data = await resp.json()
    return list(data.get("results") or [])


def _provider(opts: dict[str, Any]) -> SearchFn:
    provider = str(opts.get("provider") or "tavily")
    if provider == "tavily":
        opts.setdefault("api_key", os.environ.get("TAVILY_API_KEY", ""))
        if not opts.get("api_key"):
            raise ToolUnavailable(
                "no Tavily key: set TAVILY_API_KEY or the entry's api_key, or name another provider"
            )
        return tavily_search
    try:
        return resolve_variable(provider)
    except ValueError as exc:
        raise ToolUnavailable(str(exc)) from exc


def web_search_tool(entry: ToolEntry) -> Any:
    from langchain_core.tools import StructuredTool

    opts = {k: v for k, v in entry.options().items() if v not in (None, "")}
    search = _provider(opts)
    limit = int(opts.get("max_results", 5))

    async def web_search(query: str) -> str:
        try:
            results = await search(query, limit, opts)
        except Exception as exc:  # provider failures are the model's to work around
            return f"Error: search failed: {type(exc).__name__}: {exc}"
        if not results:
            return f"No results for {query!r}."
        return "\n\n".join(_result(i, r) for i, r in enumerate(results[:limit], start=1))

    return StructuredTool.from_function(
        coroutine=web_search,
        name=entry.name,
        description="Search the web. Returns titles, URLs and snippets; read a page with "
        "web_fetch. Cite sources as [title](url).",
    )


def _result(i: int, item: dict[str, Any]) -> str:
    snippet = " ".join(str(item.get("content") or item.get("snippet") or "").split())[:500]
    return f"{i}. {item.get('title') or '(untitled)'}\n{item.get('url', '')}\n{snippet}"
