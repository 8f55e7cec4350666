"""The soak's traffic: the four platforms' fakes, and one step of mixed traffic at a time.

Every step is one thing a person or an operator does, in turn: a streamed answer, a file, a
button, a command, a schedule on one of Telegram, Slack, Feishu and DingTalk, and now and then a
channel restart (a changed Telegram key through `/api/config`) or a config reload. The fakes run
in the bench's process; the service is its own process (bench/soak.py), so what it holds is
measured alone.
"""

from __future__ import annotations

import itertools
import json
import urllib.request
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

from tests.channels.feishu import payloads as feishu_payloads
from tests.channels.slack import events as slack_events
from tests.channels.slack.test_e2e import slack_cfg
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.feishu_server import FakeFeishu
from tests.fakes.openai_server import FakeOpenAI, text_of
from tests.fakes.openai_wire import Reply
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram

STREAMED = " ".join(f"word{i}" for i in range(60))  # a reply streamed over about 3 s
CHATS = 12  # conversations per platform, taken in turn
ROTATE = 120  # steps (4 minutes) after which the people move on to new conversations: a
# conversation's history stays a few turns long, so what grows is what the service keeps, not
# the histories it loads for a turn (the old conversations go idle; their memory must go too)
TOKEN = "soak-admin-token"


def responder(body: dict[str, Any]) -> Reply:
    """Echo, streamed at 20 tokens a second when the message asks for a story."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    last = text_of(users[-1].get("content")) if users else ""
    if "story" in last:
        return Reply(text=f"echo: {last} {STREAMED}", tokens_per_second=20)
    return Reply(text=f"echo: {last}")


class Fakes:
    """The fake model and the four platforms, started together; `channels()` is the service's
    `channels` section for them."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        self.openai = FakeOpenAI()
        self.openai.responder = responder
        self.telegram = FakeTelegram()
        self.slack = FakeSlack()
        self.feishu = FakeFeishu()
        self.dingtalk = FakeDingTalk()

    def __enter__(self) -> Fakes:
        for fake in (self.openai, self.telegram, self.slack, self.feishu, self.dingtalk):
            self._stack.enter_context(fake.start())
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def channels(self) -> dict[str, Any]:
        return {
            "telegram": self.telegram.channel_config(),
            "slack": slack_cfg(self.slack),
            "feishu": self.feishu.channel_config(),
            "dingtalk": {
                "enabled": True,
                "client_id": "ding-soak",
                "client_secret": "secret",
                "robot_code": "robot-code",
                "api_base": self.dingtalk.base,
                "stream_interval": 0.2,
            },
        }

    def forget(self) -> None:
        """What the fakes recorded so far (a 24-hour run would hold it all in the bench)."""
        self.openai.reset()
        self.openai.responder = responder
        for fake in (self.telegram, self.slack, self.feishu, self.dingtalk):
            calls = getattr(fake, "calls", None)
            if isinstance(calls, list):
                calls.clear()


class Traffic:
    """`step(n)` does the n-th thing of the cycle; `admin` is the service's admin base URL."""

    def __init__(self, fakes: Fakes, admin: Callable[[], str]) -> None:
        self.f = fakes
        self.admin = admin
        self.counts: dict[str, int] = {}
        self._n = itertools.count(1)
        self._cycle: list[tuple[str, Callable[[int], object]]] = [
            ("telegram story", lambda n: self.f.telegram.push_message(self._tg(n), f"story {n}")),
            ("slack text", self._slack_text),
            ("feishu story", self._feishu),
            ("dingtalk text", self._dingtalk),
            ("telegram file", self._telegram_file),
            ("telegram command", self._telegram_command),
            ("slack command", lambda n: self.f.slack.push_command("help")),
            ("telegram buttons", self._telegram_buttons),
            ("telegram text", lambda n: self.f.telegram.push_message(self._tg(n), f"hello {n}")),
            ("dingtalk story", self._dingtalk),
        ]

    def step(self, n: int) -> str:
        what, act = self._cycle[n % len(self._cycle)]
        act(next(self._n))
        self.counts[what] = self.counts.get(what, 0) + 1
        return what

    def schedule(self) -> None:
        """A run a minute from now, in a Telegram chat."""
        n = next(self._n)
        self.f.telegram.push_message(self._tg(n), f"/schedule in 1m soak reminder {n}")
        self.counts["schedule"] = self.counts.get("schedule", 0) + 1

    def restart_channel(self, flip: bool) -> None:
        """A changed Telegram key through the API: the channel restarts under live traffic."""
        self._admin("PATCH", "/api/config/channels/telegram", {"poll_timeout": 2 if flip else 1})
        self.counts["channel restart"] = self.counts.get("channel restart", 0) + 1

    def reload_config(self) -> None:
        self._admin("POST", "/api/config/reload", None)
        self.counts["config reload"] = self.counts.get("config reload", 0) + 1

    # ------------------------------------------------------------------ the steps

    @staticmethod
    def _chat(n: int) -> int:
        """The conversation of step `n`: CHATS at a time, new ones every ROTATE steps."""
        return (n // ROTATE) * CHATS + n % CHATS

    def _tg(self, n: int) -> int:
        return 7000 + self._chat(n)

    def _slack_text(self, n: int) -> None:
        ts = f"1700{n:06d}.000100"
        text = f"story {n}" if n % 2 else f"hello {n}"
        event = slack_events.dm(text, ts=ts, channel=f"D{self._chat(n):05d}")
        self.f.slack.push_event(event, event_id=f"Ev{n}")

    def _feishu(self, n: int) -> None:
        chat = f"oc_soak{self._chat(n)}"
        event = feishu_payloads.message_event(f"story {n}", chat_id=chat, sender=f"ou_{chat}")
        self.f.feishu.push_event(event)

    def _dingtalk(self, n: int) -> None:
        data = self.f.dingtalk.chatbot_data(
            f"hello {n}", conversation_id=f"cid-soak-{self._chat(n)}"
        )
        self.f.dingtalk.push_message(data)

    def _telegram_file(self, n: int) -> None:
        file_id = f"soak-file-{n}"
        self.f.telegram.add_file(file_id, f"line {n}\n".encode() * 200)
        document = {
            "file_id": file_id,
            "file_unique_id": f"u{file_id}",
            "file_name": f"notes{n}.txt",
            "mime_type": "text/plain",
            "file_size": 1600,
        }
        self.f.telegram.push_message(self._tg(n), None, document=document, caption="read this")
        self.f.telegram.files.pop(f"soak-file-{n - 50}", None)  # the fake keeps what is recent

    def _telegram_command(self, n: int) -> None:
        command = ("/help", "/status", "/new", "/usage")[n % 4]
        self.f.telegram.push_message(self._tg(n), command)

    def _telegram_buttons(self, n: int) -> None:
        """Press the first button of the last keyboard the bot showed (the /models picker,
        asked for a step earlier), then ask for it again."""
        chat = self._tg(n)
        for call in reversed(self.f.telegram.calls_of("sendMessage")):
            markup = call.body.get("reply_markup")
            if markup and int(call.body.get("chat_id", 0)) == chat:
                rows = json.loads(markup) if isinstance(markup, str) else markup
                button = rows["inline_keyboard"][0][0]
                mid = max((m for (c, m) in self.f.telegram.messages if c == chat), default=1)
                self.f.telegram.push_callback(chat, mid, button["callback_data"])
                break
        self.f.telegram.push_message(chat, "/models")

    def _admin(self, method: str, path: str, body: dict[str, Any] | None) -> None:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.admin() + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as resp:
                resp.read()
        except OSError as exc:  # a slow answer on a loaded machine is a figure, not the end
            print(f"{method} {path} failed: {exc}", flush=True)
            self.counts["admin call failed"] = self.counts.get("admin call failed", 0) + 1
