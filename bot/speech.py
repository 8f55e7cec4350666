"""Voice notes and audio heard: each audio attachment is fetched (within the lower of the
platform's, the service's and `speech.max_mb` limits, and `speech.max_seconds` where the
platform tells the length) and transcribed through an OpenAI-compatible
`/v1/audio/transcriptions` endpoint (`speech.model`, `speech.base_url`: a local whisper server
or a provider). The transcript is shown back compactly at the top of the reply and is what the
agent reads; an audio that is too long, too large or not understood gets a clear note instead.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import httpx
import openai

from bot import texts
from bot.config.speech import SpeechConfig
from channels.base import Attachment, Channel, ChannelError, FileTooLarge, InboundMessage

log = logging.getLogger("bot.speech")


HEARD_MAX = 300  # characters of a transcript shown back


def shown_back(transcripts: list[str]) -> str:
    """The transcripts, compactly, as the reply starts with them."""
    text = " ".join(transcripts)
    if len(text) > HEARD_MAX:
        text = text[: HEARD_MAX - 1].rstrip() + "…"
    return texts.heard(text)


class Speech:
    def __init__(self, config: SpeechConfig | None = None) -> None:
        self.config = config or SpeechConfig()

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    def heard(self, att: Attachment) -> bool:
        """Whether `att` is transcribed (else it is an ordinary file)."""
        return self.enabled and att.kind == "audio" and not att.transcript

    async def hear(
        self, channel: Channel, msg: InboundMessage, uploads: Path, limit: int
    ) -> tuple[list[str], list[str]]:
        """The transcripts of the message's audio, and a note for each one not heard."""
        limit = min(limit, int(self.config.max_mb * 1024 * 1024))
        heard, notes = [], []
        for att in msg.attachments:
            if not self.heard(att):
                continue
            if att.duration is not None and att.duration > self.config.max_seconds:
                notes.append(texts.audio_not_heard(att.name, self.config.max_seconds))
                continue
            try:
                if att.size is not None and att.size > limit:
                    raise FileTooLarge(att.name, att.size, limit)
                path = await channel.fetch_file(msg, att, uploads, limit=limit)
                text = await self.transcribe(path)
            except FileTooLarge as exc:
                notes.append(texts.file_not_read(att.name, exc))
            except (ChannelError, openai.OpenAIError, httpx.HTTPError) as exc:
                log.warning("audio %s not transcribed: %s", att.name, exc)
                notes.append(texts.audio_not_heard(att.name))
            else:
                if text:
                    heard.append(text)
                else:
                    notes.append(texts.audio_not_heard(att.name))
        return heard, notes

    async def transcribe(self, path: Path) -> str:
        cfg = self.config
        client = openai.AsyncOpenAI(
            base_url=cfg.base_url,
            api_key=cfg.api_key.get_secret_value() or "none",  # a local server needs none
            timeout=cfg.timeout_seconds,
            max_retries=1,
        )
        data = await asyncio.to_thread(path.read_bytes)
        async with client:
            result = await client.audio.transcriptions.create(
                model=cfg.model, file=(path.name, data)
            )
        return result.text.strip()
