"""The contract driver for Slack: slack-bolt and slack_sdk (Socket Mode) against
tests/fakes/slack_server.py."""

from __future__ import annotations

import itertools
import time
from typing import Any

from tests.channels.contract.driver import Driver
from tests.channels.slack import events
from tests.fakes.slack_server import SIGNING_SECRET, FakeSlack

DM = "D0001"


def visible(message: dict[str, Any]) -> str:
    """What a user sees: the markdown block when there is one, else the (streamed) text."""
    blocks = message.get("blocks") or []
    if blocks and blocks[0].get("type") == "markdown":
        return str(blocks[0]["text"])
    return str(message["text"])


class SlackDriver(Driver[FakeSlack]):
    name = "slack"
    max_part = 12_000
    fake_type = FakeSlack

    def __init__(self) -> None:
        super().__init__()
        self._ts = itertools.count(100)
        self._edits: dict[str, list[tuple[dict[str, Any], str, str]]] = {}

    def _now_ts(self) -> str:
        """A message ts as Slack gives it: now (edits are answered within a window of it)."""
        return f"{int(time.time())}.{next(self._ts):06d}"

    def config(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "bot_token": self.fake.bot_token,
            "app_token": self.fake.app_token,
            "signing_secret": SIGNING_SECRET,
            "api_base": self.fake.api_base,
        }

    def named_bot(self) -> SlackDriver:
        """A second Slack app: its own bot token, app-level token and bot user."""
        other = SlackDriver()
        tokens = {"bot_token": "xoxb-second", "app_token": "xapp-1-A0002-second"}
        other.fake = FakeSlack(bot_user="UBOT2", **tokens)
        other.start()
        return other

    def _push(self, event: dict[str, Any], name: str, retry: int = 0) -> None:
        self.fake.push_event(event, event_id=f"Ev-{name}", retry_attempt=retry)

    def speaks(self, tag: str) -> None:
        self.fake.default_locale = tag  # what users.info answers (include_locale)

    def send(self, text: str, event: str) -> None:
        self.events[event] = events.dm(text, ts=self._now_ts())
        self._push(self.events[event], event)

    edits = True
    audio = True

    def send_audio(self, name: str, data: bytes, seconds: int, recognition: str = "") -> None:
        url = self.fake.add_file(name, data)
        clip = {"id": "F2", "name": name, "mimetype": "audio/webm", "size": len(data),
                "duration_ms": seconds * 1000, "url_private_download": url}  # fmt: skip
        event = events.dm("", ts=self._now_ts(), subtype="file_share", files=[clip])
        self._push(event, "audio")

    done_reaction = "white_check_mark"

    def reactions(self, event: str) -> list[str]:
        return list(self.fake.reactions[(DM, self.events[event]["ts"])])

    def edit(self, event: str, text: str, *, again: bool = False) -> None:
        edits = self._edits.setdefault(event, [])  # (the message before, its text after, ts)
        if again:
            self.fake.push_edit(*edits[-1][:2], edited_ts=edits[-1][2], retry_attempt=1)
            return
        before = self.events[event]
        if edits:
            before = {**before, "text": edits[-1][1]}
        ts = self._now_ts()
        self.fake.push_edit(before, text, edited_ts=ts)
        edits.append((before, text, ts))

    def redeliver(self, event: str) -> None:
        self._push(self.events[event], event, retry=1)

    def send_file(self, text: str, name: str, data: bytes) -> None:
        url = self.fake.add_file(name, data)
        event = events.dm(
            text,
            ts=self._now_ts(),
            subtype="file_share",
            files=[
                {
                    "id": "F1",
                    "name": name,
                    "mimetype": "text/plain",
                    "size": len(data),
                    "url_private_download": url,
                }
            ],
        )
        self._push(event, "file")

    def _bot_messages(self) -> list[dict[str, Any]]:
        mine = [m for m in self.fake.messages.values() if m.get("bot_id") and m["channel"] == DM]
        return sorted(mine, key=lambda m: float(m["ts"]))

    def shown(self) -> list[str]:
        return [visible(m).strip() for m in self._bot_messages()]

    def updates(self) -> int:
        return len(self.fake.calls_of("chat.appendStream")) + len(self.fake.calls_of("chat.update"))

    def _actions(self) -> list[dict[str, Any]]:
        latest = self._bot_messages()[-1]
        blocks = latest.get("stop_blocks") or latest.get("blocks") or []
        return [e for b in blocks if b["type"] == "actions" for e in b["elements"]]

    def buttons(self) -> list[str]:
        return [e["text"]["text"] for e in self._actions()]

    def press(self, label: str) -> None:
        value = next(e["value"] for e in self._actions() if e["text"]["text"] == label)
        thread = self._bot_messages()[-1].get("thread_ts")
        self.fake.push_action(value, channel=DM, thread_ts=thread)

    def files_out(self) -> dict[str, bytes]:
        return {u["name"]: u["data"] for u in self.fake.uploads.values() if u.get("completed")}

    def rate_limit_final(self) -> None:
        self.fake.rate_limit("chat.stopStream", retry_after=1)
        self._limits += 1

    def rate_limit_text(self, times: int) -> None:
        self.fake.rate_limit("chat.postMessage", retry_after=1, times=times)
        self._limits += times

    def rate_limits_served(self) -> int:
        ops = ("chat.stopStream", "chat.postMessage")
        return self._limits - sum(len(self.fake._failures.get(op) or []) for op in ops)

    def saw_queued(self, label: str = "Queued") -> bool:
        return bool(self.fake.calls_of("reactions.add"))
