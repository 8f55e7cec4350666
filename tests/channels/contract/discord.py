"""The contract driver for Discord: discord.py against tests/fakes/discord_server.py."""

from __future__ import annotations

from typing import Any

from tests.channels.contract.driver import Driver
from tests.fakes.discord_server import FakeDiscord

DM = 5555


class DiscordDriver(Driver[FakeDiscord]):
    name = "discord"
    max_part = 2000
    fake_type = FakeDiscord

    def config(self) -> dict[str, Any]:
        return {"enabled": True, "bot_token": self.fake.token, "api_base": self.fake.api_base}

    def named_bot(self) -> DiscordDriver:
        """A second bot (its own token, user and application) served by the same fake Discord
        (discord.py has one API address per process, as Discord has)."""
        other = DiscordDriver()
        other.fake = self.fake.add_bot(bot_id=5252, app_id=5253)
        other.owns_fake = False
        return other

    def speaks(self, tag: str) -> None:
        self.fake.user_locale = tag

    def send(self, text: str, event: str) -> None:
        self.events[event] = self.fake.message_payload(DM, text)
        self.fake.push_message(self.events[event])

    def redeliver(self, event: str) -> None:
        self.fake.push_message(dict(self.events[event]))

    def send_file(self, text: str, name: str, data: bytes) -> None:
        message = self.fake.message_payload(DM, text)
        message["attachments"] = [self.fake.add_file(name, data)]
        self.fake.push_message(message)

    def _mine(self) -> list[dict[str, Any]]:
        return self.fake.bot_messages(DM)

    def shown(self) -> list[str]:
        return [str(m["content"]).strip() for m in self._mine() if m["content"]]

    def updates(self) -> int:
        """Every content the user saw, less the final of each message."""
        return len(self.fake.history) - len(self._mine())

    def _components(self) -> list[dict[str, Any]]:
        latest = self._mine()[-1]
        return [c for row in latest.get("components") or [] for c in row.get("components", [])]

    def buttons(self) -> list[str]:
        return [c["label"] for c in self._components()]

    def press(self, label: str) -> None:
        button = next(c for c in self._components() if c["label"] == label)
        message = self._mine()[-1]
        data = {"custom_id": button["custom_id"], "component_type": 2}
        self.fake.push_interaction(
            self.fake.interaction_payload(3, data, channel=DM, message=message)
        )

    def files_out(self) -> dict[str, bytes]:
        return {u["name"]: u["data"] for u in self.fake.uploads}

    def rate_limit_final(self) -> None:
        # A DM's final is an edit of the streamed message.
        self.fake.rate_limit("PATCH", f"/channels/{DM}/messages", retry_after=1)
        self._limits += 1

    def rate_limit_text(self, times: int) -> None:
        self.fake.rate_limit("POST", f"/channels/{DM}/messages", retry_after=1, times=times)
        self._limits += times

    def rate_limits_served(self) -> int:
        return self.fake.limits_served

    def saw_queued(self, label: str = "Queued") -> bool:
        return any(label in content for _, _, content in self.fake.history)

    def violations(self) -> list[str]:
        return list(self.fake.violations)
