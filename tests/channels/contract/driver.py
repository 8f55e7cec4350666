"""What the contract suite needs of a platform: its fake server, driven as a user would.

One `Driver` per platform (telegram.py, slack.py, feishu.py, dingtalk.py) pushes a user's
messages, button presses and redeliveries into the platform's fake server, and reads back what
the user sees there. Every conversation is one DM. A fifth platform is done when its driver
passes `test_contract.py`.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, Generic, Protocol, TypeVar

OUTPUTS = "/mnt/user-data/outputs"


class FakeServer(Protocol):
    def start(self) -> Any: ...

    def stop(self) -> None: ...


F = TypeVar("F", bound=FakeServer)


class Driver(abc.ABC, Generic[F]):
    name: str
    max_part: int
    """The longest text one message may show (a longer answer is split)."""
    fake_type: type[F]
    """The platform's fake server, started by `start()`."""
    edits_finished_replies = True
    """False where a reply cannot change once finished (WeCom's stream): what follows a pause
    (an approval's decision and the answer) comes as one new message below it."""
    updates_unpressed_cards = True
    """False where a card can change only in answer to a press on it (WeCom): an expired
    approval's card keeps its buttons (a later press is told it expired)."""

    def __init__(self) -> None:
        self.fake: F = self.fake_type()
        self.events: dict[str, dict[str, Any]] = {}  # what `send` pushed, by event name
        self._limits = 0  # 429s injected so far

    owns_fake = True
    """False for a named bot served by another driver's fake (`named_bot`): that one runs it."""

    def start(self) -> None:
        """Start the fake server."""
        if self.owns_fake:
            self.fake.start()

    def stop(self) -> None:
        if self.owns_fake:
            self.fake.stop()

    def named_bot(self) -> Driver[F]:
        """Another bot of this platform beside this (started) driver's, with credentials of its
        own, served as the platform serves a second app: started, its `config()` the keys of its
        entry in `bots:`. By default a fake of its own (a platform's fakes serve one app each)."""
        other = type(self)()
        other.start()
        return other

    def as_section(
        self, bots: Mapping[str, Driver[Any]], agents: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """This driver's section with `bots` (by name) as its named bots; `agents`: the agent
        profile of the section's bot ("") and of each named bot."""
        agents = agents or {}
        own = {"agent": agents[""]} if "" in agents else {}
        named = [
            {"name": name, **({"agent": agents[name]} if name in agents else {}),
             **{k: v for k, v in bot.config().items() if k != "enabled"}}
            for name, bot in bots.items()
        ]  # fmt: skip
        return {**self.config(), **own, "bots": named}

    def speaks(self, tag: str) -> None:
        """The person's app is in `tag` (`zh-CN`), where the platform tells (Discord's
        interactions, Slack's users.info); elsewhere nothing to do."""

    @abc.abstractmethod
    def config(self) -> dict[str, Any]:
        """The channel's section of the service config, pointing at the fake server."""

    @abc.abstractmethod
    def send(self, text: str, event: str) -> None:
        """The user sends `text` in the DM; `event` names the platform event (for redelivery)."""

    @abc.abstractmethod
    def redeliver(self, event: str) -> None:
        """The platform delivers the event `event` again."""

    @abc.abstractmethod
    def send_file(self, text: str, name: str, data: bytes) -> None:
        """The user sends a file with `text`."""

    @abc.abstractmethod
    def shown(self) -> list[str]:
        """The current text of every message (or card) the bot shows in the DM, in order."""

    @abc.abstractmethod
    def updates(self) -> int:
        """How many times a reply's visible text changed before its final (streaming)."""

    @abc.abstractmethod
    def buttons(self) -> list[str]:
        """The labels of the buttons on the bot's latest message."""

    @abc.abstractmethod
    def press(self, label: str) -> None:
        """The user presses the button `label` on the bot's latest message."""

    @abc.abstractmethod
    def files_out(self) -> dict[str, bytes]:
        """The files the bot sent, by name."""

    @abc.abstractmethod
    def rate_limit_final(self) -> None:
        """The next call that delivers a final answer is refused with a 429 (retry-after)."""

    @abc.abstractmethod
    def rate_limit_text(self, times: int) -> None:
        """The next `times` calls that send a plain text answer (a command's) get a 429."""

    @abc.abstractmethod
    def rate_limits_served(self) -> int:
        """How many 429s the fake server has answered."""

    @abc.abstractmethod
    def saw_queued(self, label: str = "Queued") -> bool:
        """Some message showed the queued state ("I'll answer after the current reply"), by
        its `label` where the platform shows one in words (Slack shows a reaction)."""

    audio = False
    """The user can send a voice note or an audio file (transcribed by the service)."""

    own_recognition = False
    """The platform sends its own speech recognition with a voice note (DingTalk): that text
    is the message and nothing is transcribed."""

    def send_audio(self, name: str, data: bytes, seconds: int, recognition: str = "") -> None:
        """The user sends a voice note (or audio file) `name` lasting `seconds`; `recognition`:
        the platform's own text for it, where it sends one."""
        raise NotImplementedError(f"{self.name}: no audio in its driver yet")

    done_reaction: str | None = None
    """The reaction an answered message carries (None: the platform shows no status reactions)."""

    def reactions(self, event: str) -> list[str]:
        """The bot's reactions on the user's message `event` now."""
        raise NotImplementedError(f"{self.name} shows no status reactions")

    edits = False
    """The platform tells the bot when a person edits a message (Telegram, Slack)."""

    def edit(self, event: str, text: str, *, again: bool = False) -> None:
        """The user edits the message `event` to `text`; `again`: the platform delivers the
        latest edit of `event` once more."""
        raise NotImplementedError(f"{self.name} delivers no edits")

    def violations(self) -> list[str]:
        """Calls the fake server saw break the platform's rules (e.g. sent during a 429 block)."""
        return []
