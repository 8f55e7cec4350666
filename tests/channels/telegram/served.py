"""The service polling the fake Telegram, its pacer on the fake's virtual clock: the one set-up
of the Telegram end-to-end tests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests.fakes.clock import VirtualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import ServiceHarness

DM = 555
SLOW = "A slow answer: " + " ".join(f"word{i}" for i in range(30)) + "."


def telegram_service(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    fake: FakeTelegram,
    *,
    runs: int | None = None,
    harness: dict[str, Any] | None = None,
    **telegram: Any,
) -> ServiceHarness:
    """`telegram`: more of the channel's settings; `runs`: max_concurrent_runs; `harness`: more
    ServiceHarness arguments (config sections such as `access`, the schedule clock)."""
    assert isinstance(fake.clock, VirtualClock)  # the fixture's: the fake checks limits on it
    channels: dict[str, Any] = {"telegram": fake.channel_config(**telegram)}
    if runs is not None:
        channels["max_concurrent_runs"] = runs
    return ServiceHarness(
        tmp_path, fake_openai, channels, pacer_clock=fake.clock, **(harness or {})
    )


async def reached(
    fake_openai: FakeOpenAI, fake: FakeTelegram, chat: int, text: str, requests: int = 1
) -> dict[str, Any]:
    """`text` sent in `chat` and the model asked (its `requests`-th request; the answer may still
    be streaming): the message sent."""
    message: dict[str, Any] = fake.push_message(chat, text)["message"]
    await fake_openai.wait_requests(requests, timeout=20)
    return message


@contextlib.asynccontextmanager
async def answering_slowly(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    fake: FakeTelegram,
    text: str,
    tokens_per_second: float = 10,
) -> AsyncIterator[tuple[ServiceHarness, dict[str, Any]]]:
    """The service, `text` sent in the DM and being answered: SLOW streamed at
    `tokens_per_second` (later messages are echoed). Yields the service and the message."""
    fake_openai.script(Reply(text=SLOW, tokens_per_second=tokens_per_second))
    async with telegram_service(tmp_path, fake_openai, fake) as svc:
        yield svc, await reached(fake_openai, fake, DM, text)
