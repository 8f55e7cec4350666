"""A fake Telegram Bot API server (aiohttp, own thread) for the real python-telegram-bot.

It speaks the wire protocol PTB uses (`POST /bot<token>/<method>`, form fields with JSON-encoded
non-string values, multipart for uploads, `GET /file/bot<token>/<path>` for downloads), records
every call with its time, and checks Telegram's limits on what it sees:
- at most one visible call (send, edit, photo, document) per chat per second,
- at most one draft (sendMessageDraft) per chat per second, counted apart from messages:
  Telegram carries a draft as a typing action, not as a message,
- at most 20 visible calls per minute per group (negative chat id),
- at most `messages_per_second` (30) visible calls a second over the whole bot: a token bucket
  of that rate holding a second's worth (and what was already on its way, `IN_FLIGHT`),
- no API call while a 429 block lasts (getUpdates excepted: it receives, it does not send).
  A call that reaches the server after the 429 was announced and before its retry_after has
  passed is a violation; one that was already on its way (arrived within `IN_FLIGHT` of the
  announcement) is only counted in `in_flight`.
`storm(seconds)`: for that long every send/edit/draft/chat action answers 429 with a
retry_after of 1-3 s, blocking the whole bot, like Telegram under flood control.
`add_bot(token, ...)`: another bot (its own updates, calls, limits) at the same address.
It also checks messages like Telegram does: HTML must follow Telegram's rules
(telegram_html.py), text must be 1-4096 characters after entity parsing, an edit to the same
text is "message is not modified".
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

from aiohttp import web

from tests.fakes.telegram_files import FileSide
from tests.fakes.telegram_updates import UserSide
from tests.fakes.telegram_wire import (
    Failure,
    Hold,
    answer_error,
    answer_ok,
    reaction_emojis,
    read_body,
    visible_text,
)
from tests.fakes.threaded import Recorded, Served, ThreadedServer

__all__ = ["TOKEN", "FakeTelegram", "Hold", "visible_text"]

TOKEN = "123456:TEST-token"
VISIBLE = {"sendMessage", "editMessageText", "sendMessageDraft", "sendPhoto", "sendDocument"}
STORMED = VISIBLE | {"sendChatAction", "setMessageReaction"}
UNGATED = {"getUpdates"}
IN_FLIGHT = 0.1


class FakeTelegram(UserSide, FileSide, Served):
    """The fake server. `api_base` goes into TelegramConfig.api_base."""

    def __init__(
        self,
        token: str = TOKEN,
        *,
        bot_id: int = 999,
        username: str = "antler_bot",
        clock: Callable[[], float] = time.monotonic,
        messages_per_second: float = 30.0,
    ):
        self.token = token
        self.messages_per_second = messages_per_second  # the bot-wide limit it holds the bot to
        self._bot_tokens: float | None = None
        self._bot_stamp = 0.0
        self.clock = clock  # Telegram's limits are checked on it: virtual when a test shares one
        self.bot_user = {"id": bot_id, "is_bot": True, "first_name": "Antler", "username": username}
        self.calls: list[Recorded] = []
        self.violations: list[str] = []
        self.updates: list[dict[str, Any]] = []
        self.files: dict[str, tuple[bytes, int]] = {}
        self.messages: dict[tuple[int, int], str] = {}
        # reply_markup of each message as it is now (None: no keyboard)
        self.keyboards: dict[tuple[int, int], Any] = {}
        self.reactions: dict[tuple[int, int], list[str]] = {}  # the bot's, by chat and message
        self.chats: dict[int, dict[str, Any]] = {}
        self.drafts_supported = True
        self.blocked_until = 0.0
        self.announced_at = 0.0
        self.in_flight: list[str] = []
        self.storm_until = 0.0
        self.storm_429s = 0
        self._random = random.Random(12)
        self.poll_hold = 1.0
        self._closing = False
        self._failures: dict[str, deque[Failure]] = defaultdict(deque)
        self._holds: list[Hold] = []
        self._ids = itertools.count(1)
        self._message_ids = itertools.count(5000)
        self._sent_at: dict[int, deque[float]] = defaultdict(deque)
        self._draft_at: dict[int, float] = {}
        self._new_update: asyncio.Event | None = None
        self._others: dict[str, FakeTelegram] = {}  # more bots on this server, by token
        app = web.Application(client_max_size=80 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._api)
        app.router.add_get("/file/bot{token}/{path:.*}", self._download)
        self.server = ThreadedServer(app)
        self._canonical = {n[3:].lower(): n[3:] for n in dir(self) if n.startswith("_m_")}

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeTelegram:
        super().start()
        self._new_update = self.server.call(self._make_event())
        return self

    async def _make_event(self) -> asyncio.Event:
        return asyncio.Event()

    def stop(self) -> None:
        self._closing = True
        if self._new_update is not None:
            self.server.call_soon(self._new_update.set)
        super().stop()

    def add_bot(self, token: str, *, bot_id: int, username: str) -> FakeTelegram:
        """Another bot served by this (started) server for `token`, at the same `api_base`."""
        other = FakeTelegram(token, bot_id=bot_id, username=username, clock=self.clock)
        other.server, other._new_update = self.server, self.server.call(other._make_event())
        self._others[token] = other
        return other

    @property
    def api_base(self) -> str:
        return f"{self.server.base}/bot"

    def channel_config(self, **extra: Any) -> dict[str, Any]:
        """The `channels.telegram` section of a service polling this fake (1 s long polls);
        `extra` keys are added or replaced."""
        return {
            "enabled": True,
            "bot_token": self.token,
            "api_base": self.api_base,
            "poll_timeout": 1,
            **extra,
        }

    # ------------------------------------------------------------------ test helpers

    def add_file(self, file_id: str, data: bytes, *, size: int | None = None) -> None:
        self.files[file_id] = (data, len(data) if size is None else size)

    def fail_next(self, method: str, status: int, description: str, *,
                  retry_after: int | None = None, times: int = 1) -> None:  # fmt: skip
        for _ in range(times):
            self._failures[method].append(Failure(status, description, retry_after))

    def clear_failures(self) -> None:
        """Drop the failures `fail_next` queued that no call has taken yet."""
        self._failures.clear()

    def hold(
        self,
        method: str,
        when: Callable[[dict[str, Any]], bool] = lambda body: True,
        *,
        act: bool = True,
    ) -> Hold:
        """Hold the next matching call of `method` (see `Hold`)."""
        held = Hold(method, when, act)
        self._holds.append(held)
        return held

    def storm(self, seconds: float) -> None:
        """From now on, for `seconds`, every send/edit/draft/action answers 429 (1-3 s)."""
        self.storm_until = self.clock() + seconds

    def calls_of(self, *methods: str) -> list[Recorded]:
        return [c for c in list(self.calls) if c.method in methods]

    def sent_texts(self, chat_id: int) -> list[str]:
        """Texts of sendMessage calls to `chat_id`, in order."""
        calls = self.calls_of("sendMessage")
        return [c.body.get("text", "") for c in calls if c.body.get("chat_id") == chat_id]

    def shown_texts(self, chat_id: int) -> list[str]:
        """The current text of every message the bot has in `chat_id` (after edits), in order."""
        return [text for (chat, _), text in sorted(self.messages.items()) if chat == chat_id]

    async def wait_for(self, predicate: Any, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError("timed out waiting for the fake Telegram server")
            await asyncio.sleep(0.01)

    # ------------------------------------------------------------------ the API

    async def _api(self, request: web.Request) -> web.Response:
        bot = self._others.get(request.match_info["token"], self)  # the bot of that token
        if request.match_info["token"] != bot.token:
            return answer_error(401, "Unauthorized")
        return await bot._serve(request)

    async def _serve(self, request: web.Request) -> web.Response:
        method = self._canonical.get(
            request.match_info["method"].lower(), request.match_info["method"]
        )
        arrived = self.clock()  # before the body: what was sent before a 429 is not late
        body = await read_body(request)
        now = self.clock()
        self.calls.append(Recorded(method=method, path=request.path, body=body, at=now))
        if method not in UNGATED and arrived < self.blocked_until:
            left = self.blocked_until - arrived
            note = (
                f"{method} during a 429 block ({left:.2f}s left, "
                f"{arrived - self.announced_at:.2f}s after it was announced)"
            )
            if arrived - self.announced_at < IN_FLIGHT:
                self.in_flight.append(note)
            else:
                self.violations.append(note)
            return answer_error(429, "Too Many Requests: retry later", int(left) + 1)
        if method in STORMED and now < self.storm_until:
            self.storm_429s += 1
            seconds = self._random.randint(1, 3)
            self._announce(seconds)
            return answer_error(429, f"Too Many Requests: retry after {seconds}", seconds)
        failure = self._failures[method].popleft() if self._failures[method] else None
        if failure is not None:
            if failure.retry_after:
                self._announce(failure.retry_after)
            return answer_error(failure.status, failure.description, failure.retry_after)
        handler = getattr(self, f"_m_{method}", None)  # method names are case-insensitive
        if handler is None:
            return answer_error(404, "Not Found")
        held = self._take_hold(method, body)
        if held is not None and not held.act:
            await self._park(held, request)
        response = await handler(body, now)
        if held is not None and held.act:
            await self._park(held, request)
        return response

    def _take_hold(self, method: str, body: dict[str, Any]) -> Hold | None:
        for held in self._holds:
            if held.method == method and held.when(body):
                self._holds.remove(held)
                return held
        return None

    async def _park(self, held: Hold, request: web.Request) -> None:
        held.reached.set()
        while not held.released.is_set() and not self._closing:
            transport = request.transport
            if transport is None or transport.is_closing():
                return
            await asyncio.sleep(0.01)

    def _announce(self, seconds: float) -> None:
        self.announced_at = self.clock()
        self.blocked_until = max(self.blocked_until, self.announced_at + seconds)

    def _count_draft(self, chat_id: int, now: float) -> None:
        last = self._draft_at.get(chat_id)
        if last is not None and now - last < 1.0:
            self.violations.append(f"chat {chat_id}: two drafts {now - last:.3f}s apart")
        self._draft_at[chat_id] = now

    def _count_bot(self, now: float) -> None:
        rate = self.messages_per_second
        cap = rate * (1 + IN_FLIGHT)
        tokens = cap if self._bot_tokens is None else self._bot_tokens
        tokens = min(cap, tokens + max(0.0, now - self._bot_stamp) * rate) - 1
        if tokens < 0:
            self.violations.append(f"over {rate:g} visible calls a second over the bot")
            tokens = 0.0
        self._bot_tokens, self._bot_stamp = tokens, now

    def _count_visible(self, chat_id: int, now: float) -> None:
        self._count_bot(now)
        times = self._sent_at[chat_id]
        if times and now - times[-1] < 1.0:
            self.violations.append(
                f"chat {chat_id}: two visible calls {now - times[-1]:.3f}s apart"
            )
        times.append(now)
        while times and now - times[0] >= 60.0:
            times.popleft()
        if chat_id < 0 and len(times) > 20:
            self.violations.append(f"group {chat_id}: {len(times)} visible calls in a minute")

    def _check_text(self, body: dict, key: str = "text") -> tuple[str, web.Response | None]:
        text, error = visible_text(str(body.get(key, "")), body.get("parse_mode"))
        if error:
            return text, answer_error(400, f"Bad Request: can't parse entities: {error}")
        if not text.strip():
            return text, answer_error(400, "Bad Request: message text is empty")
        if len(text) > 4096:
            return text, answer_error(400, "Bad Request: message is too long")
        return text, None

    def _new_message(self, body: dict, **content: Any) -> dict[str, Any]:
        chat_id = int(body["chat_id"])
        msg = {"message_id": next(self._message_ids), "date": int(time.time()),
               "chat": self.chat(chat_id), "from": self.bot_user, **content}  # fmt: skip
        if body.get("message_thread_id"):
            msg["message_thread_id"] = body["message_thread_id"]
            msg["is_topic_message"] = True
        return msg

    async def _m_getMe(self, body: dict, now: float) -> web.Response:
        return answer_ok(self.bot_user)

    async def _m_getUpdates(self, body: dict, now: float) -> web.Response:
        offset = int(body.get("offset") or 0)
        if offset:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        hold = min(float(body.get("timeout") or 0), self.poll_hold)
        deadline = time.monotonic() + hold
        assert self._new_update is not None
        while not self.updates and not self._closing and (left := deadline - time.monotonic()) > 0:
            self._new_update.clear()
            try:
                await asyncio.wait_for(self._new_update.wait(), left)
            except TimeoutError:
                break
        return answer_ok(self.updates[:100])

    async def _m_sendMessage(self, body: dict, now: float) -> web.Response:
        text, error = self._check_text(body)
        if error:
            return error
        self._count_visible(int(body["chat_id"]), now)
        msg = self._new_message(body, text=text)
        self.messages[(msg["chat"]["id"], msg["message_id"])] = text
        self.keyboards[(msg["chat"]["id"], msg["message_id"])] = body.get("reply_markup")
        return answer_ok(msg)

    async def _m_editMessageText(self, body: dict, now: float) -> web.Response:
        text, error = self._check_text(body)
        if error:
            return error
        key = (int(body["chat_id"]), int(body["message_id"]))
        if key not in self.messages:
            return answer_error(400, "Bad Request: message to edit not found")
        if self.messages[key] == text:
            return answer_error(400, "Bad Request: message is not modified: same content")
        self._count_visible(key[0], now)
        self.messages[key] = text
        self.keyboards[key] = body.get("reply_markup")  # an edit without one removes it
        return answer_ok({**self._new_message(body, text=text), "message_id": key[1]})

    async def _m_sendMessageDraft(self, body: dict, now: float) -> web.Response:
        if not self.drafts_supported:
            return answer_error(404, "Not Found")
        if "text" in body:
            _, error = self._check_text(body)
            if error:
                return error
        self._count_draft(int(body["chat_id"]), now)
        return answer_ok(True)

    async def _m_setMessageReaction(self, body: dict, now: float) -> web.Response:
        emojis, error = reaction_emojis(body)
        if error:
            return answer_error(400, f"Bad Request: {error}")
        self._count_bot(now)  # no message, but within the bot-wide limit
        self.reactions[(int(body["chat_id"]), int(body["message_id"]))] = emojis
        return answer_ok(True)

    async def _m_sendChatAction(self, body: dict, now: float) -> web.Response:
        return answer_ok(True)

    _m_setMyCommands = _m_sendChatAction
    _m_deleteWebhook = _m_sendChatAction
    _m_setWebhook = _m_sendChatAction
    _m_answerCallbackQuery = _m_sendChatAction
