"""A channel whose hold on the connection lapsed (another worker took it over): what it receives
meanwhile must not be published."""

from __future__ import annotations

from channels.base import Channel


def lapsed(channel: Channel) -> list[bool]:
    """From now on `channel.may_receive()` answers False; the list grows by one each time the
    channel asks (so a test can wait for an event to have arrived and been fenced)."""
    asked: list[bool] = []

    def no() -> bool:
        asked.append(False)
        return False

    channel.may_receive = no
    return asked
