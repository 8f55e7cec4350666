"""The contract driver for DingTalk: dingtalk-stream (Stream mode) with AI cards, against
tests/fakes/dingtalk_server.py."""

from __future__ import annotations

import json
from typing import Any

from tests.channels.contract.driver import Driver
from tests.fakes.dingtalk_server import FakeDingTalk

CARDS = "/v1.0/card/instances"
FINAL_STATE = ("PUT", CARDS)  # the card's flow status set when its final is out
MARKDOWN_PATHS = ("/robot/sendBySession", "/v1.0/robot/oToMessages/batchSend")


class DingTalkDriver(Driver[FakeDingTalk]):
    name = "dingtalk"
    max_part = 4000
    fake_type = FakeDingTalk

    client_id = "ding-contract"

    def config(self) -> dict[str, Any]:
        return self.fake.channel_config(self.client_id, card_template_id="tpl")

    def named_bot(self) -> DingTalkDriver:
        """A second app (robot): its own client id and secret, its own stream connection."""
        other = DingTalkDriver()
        other.client_id = "ding-second"
        other.start()
        return other

    def send(self, text: str, event: str) -> None:
        self.events[event] = self.fake.chatbot_data(text)
        self.fake.push_message(self.events[event])

    def redeliver(self, event: str) -> None:
        self.fake.push_message(self.events[event])

    def send_file(self, text: str, name: str, data: bytes) -> None:
        self.fake.files["file-1"] = data
        self.fake.push_message(
            self.fake.chatbot_data(
                msgtype="file", content={"downloadCode": "file-1", "fileName": name}
            )
        )

    audio = own_recognition = True

    def send_audio(self, name: str, data: bytes, seconds: int, recognition: str = "") -> None:
        self.fake.files["audio-1"] = data
        content = {"downloadCode": "audio-1", "duration": seconds * 1000}
        if recognition:
            content["recognition"] = recognition
        self.fake.push_message(self.fake.chatbot_data(msgtype="audio", content=content))

    def _ai_card(self, body: dict[str, Any]) -> bool:
        return body.get("cardTemplateId") == "tpl"

    def shown(self) -> list[str]:
        """AI cards (their latest streamed content) and markdown messages, in the order they
        were first shown; button cards carry no text of their own."""
        texts = []
        for call in list(self.fake.calls):
            if (call.method, call.path) == ("POST", CARDS) and self._ai_card(call.body):
                streams = self.fake.streams(call.body["outTrackId"])
                texts.append(streams[-1]["content"].strip() if streams else "")
            elif call.method == "POST" and call.path in MARKDOWN_PATHS and not call.refused:
                texts += _markdown(call.body)
        return texts

    def updates(self) -> int:
        return len([s for s in self.fake.streams() if not s["isFinalize"]])

    def _button_card(self) -> str:
        return self.fake.button_cards()[-1]

    def buttons(self) -> list[str]:
        return list(self.fake.card_buttons(self._button_card()))

    def press(self, label: str) -> None:
        card = self._button_card()
        self.fake.push_card_press(card, self.fake.card_buttons(card)[label])

    def files_out(self) -> dict[str, bytes]:
        return {u["filename"]: u["data"] for u in self.fake.uploads}

    def rate_limit_final(self) -> None:
        self.fake.rate_limit(*FINAL_STATE, retry_after=0.3)
        self._limits += 1

    def rate_limit_text(self, times: int) -> None:
        self.fake.webhook_error(130101, times=times)  # the robot is throttled on the session
        self._limits += times

    def rate_limits_served(self) -> int:
        keys = (FINAL_STATE, ("POST", MARKDOWN_PATHS[0]))
        return self._limits - sum(len(self.fake._failures.get(k) or []) for k in keys)

    def saw_queued(self, label: str = "Queued") -> bool:
        created = [
            json.dumps(c.body["cardData"], ensure_ascii=False)
            for c in self.fake.requests("POST", CARDS)
            if self._ai_card(c.body)
        ]
        streamed = [s["content"] for s in self.fake.streams()]
        return any(label in text for text in created + streamed)

    def violations(self) -> list[str]:
        return list(self.fake.violations)


def _markdown(body: dict[str, Any]) -> list[str]:
    if "markdown" in body:
        return [str(body["markdown"]["text"]).strip()]
    if body.get("msgKey") == "sampleMarkdown":
        return [str(json.loads(body["msgParam"])["text"]).strip()]
    return []
