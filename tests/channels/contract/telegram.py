"""The contract driver for Telegram: python-telegram-bot against tests/fakes/telegram_server.py."""

from __future__ import annotations

from typing import Any

from tests.channels.contract.driver import Driver
from tests.fakes.telegram_server import FakeTelegram

DM = 555
SECOND_TOKEN = "333333:SECOND-token"


class TelegramDriver(Driver[FakeTelegram]):
    name = "telegram"
    max_part = 4096
    fake_type = FakeTelegram

    def config(self) -> dict[str, Any]:
        return self.fake.channel_config()

    def named_bot(self) -> TelegramDriver:
        """A second bot (its own token) served by the same fake Telegram, as Telegram does."""
        other = TelegramDriver()
        other.fake = self.fake.add_bot(SECOND_TOKEN, bot_id=333333, username="second_bot")
        other.owns_fake = False
        return other

    def send(self, text: str, event: str) -> None:
        self.events[event] = self.fake.message(DM, text)
        self.fake.push_update({"message": self.events[event]})

    edits = True
    audio = True

    def send_audio(self, name: str, data: bytes, seconds: int, recognition: str = "") -> None:
        self.fake.add_file("VOICE1", data)
        voice = {"file_id": "VOICE1", "file_unique_id": name, "duration": seconds,
                 "mime_type": "audio/ogg", "file_size": len(data)}  # fmt: skip
        self.fake.push_message(DM, None, voice=voice)

    done_reaction = "👍"

    def reactions(self, event: str) -> list[str]:
        return self.fake.reactions.get((DM, self.events[event]["message_id"]), [])

    def edit(self, event: str, text: str, *, again: bool = False) -> None:
        if again:
            self.fake.push_update({"edited_message": dict(self.events[event])})
        else:
            self.events[event] = self.fake.push_edit(self.events[event], text)

    def redeliver(self, event: str) -> None:
        self.fake.push_update({"message": dict(self.events[event])})

    def send_file(self, text: str, name: str, data: bytes) -> None:
        self.fake.add_file("DOC1", data)
        document = {
            "file_id": "DOC1",
            "file_unique_id": "u1",
            "file_name": name,
            "mime_type": "text/plain",
            "file_size": len(data),
        }
        self.fake.push_message(DM, None, document=document, caption=text)

    def shown(self) -> list[str]:
        return self.fake.shown_texts(DM)

    def updates(self) -> int:
        return len(self.fake.calls_of("sendMessageDraft", "editMessageText"))

    def _latest_markup(self) -> dict[str, Any]:
        sends = self.fake.calls_of("sendMessage", "editMessageText")
        return next((c.body.get("reply_markup") or {} for c in reversed(sends)), {})

    def buttons(self) -> list[str]:
        keyboard = self._latest_markup().get("inline_keyboard", [])
        return [b["text"] for row in keyboard for b in row]

    def press(self, label: str) -> None:
        keyboard = self._latest_markup()["inline_keyboard"]
        data = next(b["callback_data"] for row in keyboard for b in row if b["text"] == label)
        latest = max(m for (chat, m) in self.fake.messages if chat == DM)
        self.fake.push_callback(DM, latest, data)

    def files_out(self) -> dict[str, bytes]:
        docs = [c.body["document"] for c in self.fake.calls_of("sendDocument")]
        return {d["filename"]: d["data"] for d in docs}

    def rate_limit_final(self) -> None:
        # In a DM the final is a new message after the drafts: sendMessage.
        self.fake.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
        self._limits += 1

    def rate_limit_text(self, times: int) -> None:
        for _ in range(times):  # a command's answer is a new message too
            self.rate_limit_final()

    def rate_limits_served(self) -> int:
        return self._limits - len(self.fake._failures["sendMessage"])

    def saw_queued(self, label: str = "Queued") -> bool:
        calls = self.fake.calls_of("sendMessage", "editMessageText")
        return any(label in str(c.body.get("text")) for c in calls)

    def violations(self) -> list[str]:
        return list(self.fake.violations)
