"""bot/speech.py: which audio is transcribed, and a transcription through openai's client
against the fake OpenAI server's `/v1/audio/transcriptions`."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from bot.config.speech import SpeechConfig
from bot.speech import Speech
from channels.base import Attachment
from tests.fakes.openai_server import TRANSCRIPTION_LIMIT, FakeOpenAI


def test_only_audio_without_the_platforms_own_transcript_is_heard() -> None:
    speech = Speech(SpeechConfig(model="whisper-1", base_url="http://127.0.0.1:1/v1"))
    assert speech.heard(Attachment(name="v.ogg", ref="1", kind="audio"))
    assert not speech.heard(Attachment(name="d.pdf", ref="2", kind="file"))
    # DingTalk's voice messages come with its recognition text: nothing to transcribe
    assert not speech.heard(Attachment(name="a.amr", ref="3", kind="audio", transcript="hi"))
    assert not Speech().heard(Attachment(name="v.ogg", ref="1", kind="audio"))  # unset: a file


async def test_a_transcription_through_the_fake(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    speech = Speech(SpeechConfig(model="whisper-1", base_url=fake_openai.base_url))
    note = tmp_path / "note.ogg"
    note.write_bytes(b"OggS" + bytes(100))
    fake_openai.script_transcripts("  hello there  ")
    assert await speech.transcribe(note) == "hello there"
    assert await speech.transcribe(note) == "transcript of note.ogg"
    assert [t["model"] for t in fake_openai.transcriptions] == ["whisper-1", "whisper-1"]
    big = tmp_path / "big.ogg"
    big.write_bytes(bytes(TRANSCRIPTION_LIMIT + 1))
    with pytest.raises(openai.APIStatusError):  # refused (413): the caller notes it
        await speech.transcribe(big)
