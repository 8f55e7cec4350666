"""The message reactions of the fake Feishu (a part of `FakeFeishu`): add and remove, the
emoji types checked, within 50 calls a second per app."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from aiohttp import web

# A few of Feishu's emoji types (im/v1 message reactions); others are refused (231001).
EMOJI_TYPES = frozenset({"OK", "THUMBSUP", "OnIt", "DONE", "Get", "SMILE", "MUSCLE"})


def ok(data: dict[str, Any] | None = None) -> web.Response:
    """A Feishu success answer (also the fake's others: tests/fakes/feishu_server.py)."""
    return web.json_response({"code": 0, "msg": "success", "data": data or {}})


def err(code: int, msg: str = "error") -> web.Response:
    return web.json_response({"code": code, "msg": msg, "data": {}})


class ReactionSide:
    """What it needs of the fake is declared here."""

    reactions: dict[str, dict[str, str]]  # message id -> reaction id -> emoji type
    _reacted: deque[float]
    _rate: Callable[[str, str, deque[float], int], None]
    _new_id: Callable[[str], str]

    async def _reaction(self, request: web.Request, body: Any) -> web.Response:
        emoji = str(((body or {}).get("reaction_type") or {}).get("emoji_type"))
        if emoji not in EMOJI_TYPES:
            return err(231001, "reaction type is invalid.")
        self._rate("reaction", "app", self._reacted, 50)  # 50 a second per app
        rid = self._new_id("r")
        self.reactions.setdefault(request.match_info["mid"], {})[rid] = emoji
        return ok({"reaction_id": rid, "reaction_type": {"emoji_type": emoji}})

    async def _unreact(self, request: web.Request, body: Any) -> web.Response:
        mine = self.reactions.get(request.match_info["mid"], {})
        if request.match_info["rid"] not in mine:
            return err(231003, "The reaction does not exist.")
        self._rate("reaction", "app", self._reacted, 50)
        del mine[request.match_info["rid"]]
        return ok()
