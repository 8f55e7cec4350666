"""The contract driver for WeCom: wecom-aibot-python-sdk against tests/fakes/wecom_server.py
(over TLS: the fake's CA is the channel's `ca_file`)."""

from __future__ import annotations

from typing import Any

from tests.channels.contract.driver import Driver
from tests.fakes.wecom_payloads import USER, media_body, press_body, shown_text
from tests.fakes.wecom_payloads import text_body as text
from tests.fakes.wecom_server import FakeWeCom

RATE = 45009  # WeCom's frequency limit


class WeComDriver(Driver[FakeWeCom]):
    name = "wecom"
    max_part = 5000
    fake_type = FakeWeCom
    edits_finished_replies = False  # no frame after a stream's finish
    updates_unpressed_cards = False  # a card changes only in answer to its press (5 s)

    def config(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "bot_id": self.fake.bot_id,
            "secret": self.fake.secret,
            "ws_url": self.fake.ws_url,
            "ca_file": self.fake.ca_file,
            "stream_interval": 0.1,
        }

    def named_bot(self) -> WeComDriver:
        """A second intelligent robot: its own bot id and secret."""
        other = WeComDriver()
        other.fake = FakeWeCom(bot_id="aib-second-bot", secret="wecom-second-secret")
        other.start()
        return other

    def send(self, text_: str, event: str) -> None:
        self.events[event] = text(text_)
        self.fake.push_message(self.events[event])

    def redeliver(self, event: str) -> None:
        self.fake.push_message(dict(self.events[event]))

    def send_file(self, text_: str, name: str, data: bytes) -> None:
        url, key = self.fake.add_media(name, data)
        self.fake.push_message(media_body("file", url, key))

    def shown(self) -> list[str]:
        texts = [shown_text(m) for m in self.fake.chat_messages(USER)]
        return [t for t in texts if t is not None]

    def updates(self) -> int:
        streams = [m for m in self.fake.chat_messages(USER) if m["kind"] == "stream"]
        return sum(len([f for f in s["frames"] if not f["finish"]]) for s in streams)

    def _card(self) -> dict[str, Any]:
        card = self.fake.cards(USER)[-1]
        updates = [u for u in self.fake.card_updates if u.get("task_id") == card["task_id"]]
        return updates[-1] if updates else card

    def buttons(self) -> list[str]:
        card = self._card()
        if card.get("replace_text"):  # pressed: WeCom shows this text in the buttons' place
            return []
        return [str(b["text"]) for b in card["button_list"]]

    def press(self, label: str) -> None:
        card = self._card()
        button = next(b for b in card["button_list"] if b["text"] == label)
        self.fake.push_press(press_body(card["task_id"], button["key"]))

    def files_out(self) -> dict[str, bytes]:
        return {u["name"]: u["data"] for u in self.fake.uploads}

    def rate_limit_final(self) -> None:
        self.fake.fail("aibot_respond_msg", RATE, lambda body: body["stream"]["finish"])

    def rate_limit_text(self, times: int) -> None:
        self.fake.fail("aibot_send_msg", RATE, lambda body: body["msgtype"] == "markdown", times)

    def rate_limits_served(self) -> int:
        return self.fake.served.get(RATE, 0)

    def saw_queued(self, label: str = "Queued") -> bool:
        frames = [f for m in self.fake.streams.values() for f in m["frames"]]
        pushed = [m.get("content", "") for m in self.fake.messages if m["kind"] == "markdown"]
        return any(label in text_ for text_ in [f["content"] for f in frames] + pushed)

    def violations(self) -> list[str]:
        return list(self.fake.violations)
