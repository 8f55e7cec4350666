"""`speech`: voice notes and audio transcribed through an OpenAI-compatible
`/v1/audio/transcriptions` endpoint (bot/speech.py; docs/configuration.md, "speech")."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator


class SpeechConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # both set: audio is transcribed; otherwise it reaches the agent as a file, as before
    model: str = ""  # e.g. whisper-1, or the model name a local whisper server serves
    base_url: str = ""  # e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1
    api_key: SecretStr = SecretStr("")
    max_mb: float = Field(default=25.0, gt=0, le=200)  # OpenAI's own limit is 25 MB
    max_seconds: float = Field(default=600.0, gt=0)  # longer notes are not transcribed
    timeout_seconds: float = Field(default=60.0, gt=0)

    @field_validator("api_key", mode="before")
    @classmethod
    def _unset_is_empty(cls, value: object) -> object:
        return "" if value is None else value  # an unset `$VAR` arrives as None

    @property
    def enabled(self) -> bool:
        return bool(self.model and self.base_url)
