"""The fake Telegram's wire: request bodies, answers, injected failures and holds, and the text
Telegram shows for an HTML message (a part of `FakeTelegram`, tests/fakes/telegram_server.py)."""

from __future__ import annotations

import html
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.telegram_html import TelegramHtmlError, check_html


@dataclass
class Failure:
    status: int
    description: str
    retry_after: int | None = None


@dataclass
class Hold:
    """Parks the first call of `method` whose body matches `when`: after acting on it
    (`act=True`: the chat already shows it) or before, and holds the answer until `release()`
    or until the client goes away (killed). `reached` is set when the call arrived."""

    method: str
    when: Callable[[dict[str, Any]], bool]
    act: bool = True
    reached: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        self.released.set()


# The emoji a bot may react with (Bot API ReactionTypeEmoji); a bot sets at most one.
_REACTION_EMOJI = (
    "👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 🌚 🌭 💯 🤣 ⚡ 🍌 "
    "🏆 💔 🤨 😐 🍓 🍾 💋 😈 😴 😭 🤓 👻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ 💅 🤪 🗿 🆒 💘 "
    "🙉 🦄 😘 💊 🙊 😎 👾 🤷 😡"
)
REACTIONS = frozenset(_REACTION_EMOJI.split())


def reaction_emojis(body: dict[str, Any]) -> tuple[list[str], str]:
    """(the emoji of a setMessageReaction, error) as Telegram checks them."""
    reaction = body.get("reaction") or []
    if isinstance(reaction, str):
        reaction = json.loads(reaction)
    if len(reaction) > 1:
        return [], "REACTIONS_TOO_MANY"
    emojis = [str(r.get("emoji")) for r in reaction if r.get("type") == "emoji"]
    if len(emojis) != len(reaction) or any(e not in REACTIONS for e in emojis):
        return [], "REACTION_INVALID"
    return emojis, ""


def visible_text(text: str, parse_mode: str | None) -> tuple[str, str]:
    """(text after entity parsing, error) like Telegram's HTML parse mode."""
    if parse_mode != "HTML":
        return text, ""
    try:
        return check_html(text), ""
    except TelegramHtmlError as exc:
        if str(exc) in ("message text is empty", "message is too long"):
            return html.unescape(re.sub(r"<[^>]*>", "", text)), ""
        return text, str(exc)


async def read_body(request: web.Request) -> dict[str, Any]:
    if request.content_type == "application/json":
        return dict(await request.json())
    form = await request.post()
    body: dict[str, Any] = {}
    for key, value in form.items():
        if isinstance(value, web.FileField):
            data = value.file.read()
            body[key] = {"filename": value.filename, "size": len(data), "data": data}
        else:
            try:
                body[key] = json.loads(value)
            except ValueError:
                body[key] = value
    return body


def answer_ok(result: Any) -> web.Response:
    return web.json_response({"ok": True, "result": result})


def answer_error(status: int, description: str, retry_after: int | None = None) -> web.Response:
    payload: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if retry_after:
        payload["parameters"] = {"retry_after": retry_after}
    return web.json_response(payload, status=status)
