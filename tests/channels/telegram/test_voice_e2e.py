"""Voice notes on Telegram: fetched with getFile, transcribed through the fake OpenAI server's
`/v1/audio/transcriptions` (openai's real client), shown back compactly and answered; too long
or not understood: a clear note. python-telegram-bot against the fake Bot API server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot import texts
from tests.channels.telegram.served import telegram_service
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import ServiceHarness

DM = 555
OGG = b"OggS" + bytes(2000)


def service(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram, base_url: str = ""
) -> ServiceHarness:
    url = base_url or fake_openai.base_url
    speech = {"model": "whisper-1", "base_url": url, "max_seconds": 120}
    return telegram_service(tmp_path, fake_openai, fake, harness={"speech": speech})


def voice(fake: FakeTelegram, file_id: str, seconds: int) -> dict[str, Any]:
    fake.add_file(file_id, OGG)
    return {
        "file_id": file_id,
        "file_unique_id": f"u-{file_id}",
        "duration": seconds,
        "mime_type": "audio/ogg",
        "file_size": len(OGG),
    }


async def test_a_voice_note_is_transcribed_shown_back_and_answered(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    fake_openai.script_transcripts("what is the weather in Lisbon")
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(DM, None, voice=voice(fake, "V1", 4))
        await fake_openai.wait_requests(1, timeout=20)
        await svc.idle(timeout=20)
    (heard,) = fake_openai.transcriptions
    assert heard == {"model": "whisper-1", "filename": "voice-u-V1", "size": len(OGG)}
    assert FakeOpenAI.user_texts(fake_openai.requests[0])[-1].endswith(
        "what is the weather in Lisbon"
    )
    (shown,) = fake.shown_texts(DM)
    assert shown == "🎤 what is the weather in Lisbon\n\necho: what is the weather in Lisbon"


async def test_a_voice_note_too_long_gets_a_clear_answer(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(DM, "and this", voice=voice(fake, "V2", 600))
        await fake_openai.wait_requests(1, timeout=20)
        await svc.idle(timeout=20)
    assert fake_openai.transcriptions == []
    assert texts.audio_not_heard("voice-u-V2", 120) in fake.sent_texts(DM)
    assert FakeOpenAI.user_texts(fake_openai.requests[0])[-1] == "and this"


async def test_a_voice_note_not_understood_gets_a_clear_answer(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    nowhere = "http://127.0.0.1:9/v1"  # the transcription server is down
    async with service(tmp_path, fake_openai, fake, base_url=nowhere) as svc:
        fake.push_message(DM, "and this", voice=voice(fake, "V3", 5))
        await fake_openai.wait_requests(1, timeout=30)
        await svc.idle(timeout=20)
    assert texts.audio_not_heard("voice-u-V3") in fake.sent_texts(DM)
    assert FakeOpenAI.user_texts(fake_openai.requests[0])[-1] == "and this"
