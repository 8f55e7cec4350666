"""The contract driver for Feishu/Lark: lark-oapi (long connection, CardKit) against
tests/fakes/feishu_server.py."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.channels.contract.driver import Driver
from tests.channels.feishu import payloads
from tests.fakes.feishu_server import RATE_LIMITED, FakeFeishu

DM = "oc_dm"


class FeishuDriver(Driver[FakeFeishu]):
    name = "feishu"
    max_part = 12_000
    fake_type = FakeFeishu

    def config(self) -> dict[str, Any]:
        return self.fake.channel_config()

    def send(self, text: str, event: str) -> None:
        self.events[event] = payloads.message_event(text, event_id=f"ev-{uuid.uuid4().hex}")
        self.fake.push_event(self.events[event])

    done_reaction = "DONE"
    audio = True

    def send_audio(self, name: str, data: bytes, seconds: int, recognition: str = "") -> None:
        self.fake.add_resource("om_audio", "audio_1", data, name)
        content = {"file_key": "audio_1", "duration": seconds * 1000}
        self.fake.push_event(
            payloads.message_event(content, msg_type="audio", message_id="om_audio")
        )

    def reactions(self, event: str) -> list[str]:
        mid = self.events[event]["event"]["message"]["message_id"]
        return list(self.fake.reactions.get(mid, {}).values())

    def redeliver(self, event: str) -> None:
        self.fake.wait_ack(self.fake.push_event(self.events[event]))

    def send_file(self, text: str, name: str, data: bytes) -> None:
        self.fake.add_resource("om_file", "file_1", data, name)
        self.fake.push_event(
            payloads.message_event(
                {"file_key": "file_1", "file_name": name}, msg_type="file", message_id="om_file"
            )
        )

    def _bot_messages(self) -> list[str]:
        ordered = sorted(self.fake.messages.items(), key=lambda item: item[1]["at"])
        return [mid for mid, m in ordered if m["msg_type"] != "file"]

    def _text(self, mid: str) -> str:
        card = self.fake.card_of(mid)
        if card is not None:
            return card.elements.get("answer", "").strip()
        content = json.loads(self.fake.messages[mid]["content"] or "{}")
        if "text" in content:
            return str(content["text"]).strip()
        return "\n".join(e.get("content", "") for e in content.get("elements", [])).strip()

    def shown(self) -> list[str]:
        return [self._text(mid) for mid in self._bot_messages()]

    def updates(self) -> int:
        return len(self.fake.recorded("element_content")) + len(self.fake.recorded("patch"))

    def _buttons(self) -> dict[str, dict[str, Any]]:
        card = self.fake.card_of(self._bot_messages()[-1])
        return card.buttons() if card is not None else {}

    def buttons(self) -> list[str]:
        return list(self._buttons())

    def press(self, label: str) -> None:
        latest = self._bot_messages()[-1]
        self.fake.push_event(
            payloads.card_action(self._buttons()[label], chat_id=DM, message_id=latest)
        )

    def files_out(self) -> dict[str, bytes]:
        return dict(self.fake.uploads.values())

    def rate_limit_final(self) -> None:
        self.fake.fail_next("card_update", RATE_LIMITED)  # the final card (green header)
        self._limits += 1

    def rate_limit_text(self, times: int) -> None:
        self.fake.fail_next("reply", RATE_LIMITED, times=times)  # a text card replying to the DM
        self._limits += times

    def rate_limits_served(self) -> int:
        ops = ("card_update", "reply")
        return self._limits - sum(len(self.fake._failures[op]) for op in ops)

    def saw_queued(self, label: str = "Queued") -> bool:
        return any(
            label in json.dumps(c.body, ensure_ascii=False)
            for c in self.fake.calls
            if c.headers.get("op", "").startswith("card")
        )

    def violations(self) -> list[str]:
        return list(self.fake.violations)
