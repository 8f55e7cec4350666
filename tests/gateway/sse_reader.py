"""A small SSE reader for the UI-flow tests (frames as the browser's EventSource parses them)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp


@dataclass
class Frame:
    event: str
    data: Any
    id: str | None = None


async def read_frames(resp: aiohttp.ClientResponse) -> AsyncIterator[Frame]:
    """Frames until `end` (comments such as `: heartbeat` skipped)."""
    event, data, ident = "message", list[str](), None
    async for raw in resp.content:
        line = raw.decode().rstrip("\r\n")
        if not line:
            if data:
                frame = Frame(event, json.loads("\n".join(data)), ident)
                yield frame
                if frame.event == "end":
                    return
            event, data, ident = "message", list[str](), None
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)
            elif name == "id":
                ident = value
