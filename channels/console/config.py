"""Settings of the terminal channel (`channels.console`)."""

from __future__ import annotations

from typing import ClassVar

from channels.base import ChannelConfig


class ConsoleConfig(ChannelConfig):
    """`antler chat` enables this channel by itself; `user` names the person at the terminal."""

    named_bots: ClassVar[bool] = False  # one person at one terminal

    user: str = "you"
    show_progress: bool = True
