"""Bad input gets a clear answer: unencodable text is cleaned before the model call, kinds of
message Antler cannot read are answered with what it can read, a turn that fails for a reason
that is not the platform's is logged once and settled (never re-run at every restart)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot import texts
from channels.base import Attachment, FileTooLarge
from channels.text import clean_input
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")


def harness(tmp_path: Path, fake_openai: FakeOpenAI) -> ServiceHarness:
    return ServiceHarness(tmp_path, fake_openai, {"test": {"enabled": True}})


def channel_of(svc: ServiceHarness) -> RecordingChannel:
    channel = svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    return channel


def test_clean_input() -> None:
    assert clean_input("plain text\tand\nlines") == "plain text\tand\nlines"
    assert clean_input("broken \ud83d emoji") == "broken \ufffd emoji"
    assert clean_input("pair \ud83d\ude00 joined") == "pair \U0001f600 joined"
    assert clean_input("nul\x00 and bell\x07") == "nul and bell"
    clean_input("\ud800").encode("utf-8")  # never raises


async def test_lone_surrogates_and_nul_are_cleaned_before_the_model(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    async with harness(tmp_path, fake_openai) as svc:
        channel = channel_of(svc)
        await channel.inject("hi \ud83d there\x00", quoted_text="quote \udc00")
        [request] = await fake_openai.wait_requests(1)
        await svc.idle()
    assert FakeOpenAI.user_texts(request)[-1].endswith("hi \ufffd there")
    finals = channel.of("finish")
    assert finals
    assert finals[-1].doc is not None
    assert finals[-1].doc.status == "done"


async def test_unsupported_kinds_get_a_short_answer_and_no_run(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    async with harness(tmp_path, fake_openai) as svc:
        channel = channel_of(svc)
        await channel.inject("", unsupported="a sticker")
        await channel.wait_for("text")
        await svc.idle()
        await svc.restart()  # settled: not answered again
        await svc.idle()
        assert channel_of(svc).texts() == []
    assert channel.texts() == [texts.cannot_read("a sticker")]
    assert fake_openai.requests == []


async def test_a_turn_failing_outside_the_platform_is_settled(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    async with harness(tmp_path, fake_openai) as svc:
        channel = channel_of(svc)
        channel.failures["open"] = [ValueError("chat id 'abc' is not a number")] * 3
        await channel.inject("hello")
        await channel.wait_for("open")
        await svc.idle()
        await svc.restart()
        await svc.idle()
        assert channel_of(svc).of("open") == []  # settled: not re-run at the next start


async def test_a_file_over_the_platforms_download_limit_is_refused_with_that_limit(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """The service reads `Capabilities.max_file_in`: a file the platform would not let the bot
    download is refused up front, naming the platform's limit (lower than max_upload_mb)."""
    async with harness(tmp_path, fake_openai) as svc:
        channel = channel_of(svc)
        channel.capabilities = replace(channel.capabilities, max_file_in=1024 * 1024)
        channel.files["big"] = b"x"
        await channel.inject(
            "read this", attachments=(Attachment(name="big.bin", ref="big", size=2 * 1024 * 1024),)
        )
        await svc.idle()
    notes = [c.text for c in channel.of("text")]
    assert notes == [texts.file_not_read("big.bin", FileTooLarge("big.bin", 2 << 20, 1 << 20))]
    assert "1 MB" in notes[0]
