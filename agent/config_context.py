"""Config sections for what the agent keeps and carries: memory, titles, summarization, uploads.

They live under `agent:` in the YAML (`agent.memory`, `agent.title`, `agent.summarization`,
`agent.uploads`); see docs/configuration.md.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class MemoryConfig(BaseModel):
    """Long-term memory per person (facts and short context summaries)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    debounce_seconds: float = Field(default=30.0, ge=0, le=300)
    model_name: str | None = None  # None: the default model
    max_facts: int = Field(default=100, ge=1, le=500)
    fact_confidence_threshold: float = Field(default=0.7, ge=0, le=1)
    max_injection_tokens: int = Field(default=2000, ge=50, le=8000)


class _ModelStep(BaseModel):
    """A step that calls a model of its own choosing (None: the conversation's model)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    model_name: str | None = None


class TitleConfig(_ModelStep):
    """A short conversation title, generated once after the first exchange."""

    max_words: int = Field(default=6, ge=1, le=20)
    max_chars: int = Field(default=60, ge=10, le=200)


class SummarizationConfig(_ModelStep):
    """Older messages are summarised when a thread approaches `trigger_tokens`."""

    trigger_tokens: int = Field(default=32000, ge=100)
    keep_messages: int = Field(default=10, ge=1)
    trim_tokens_to_summarize: int = Field(default=4000, ge=100)


class UploadsConfig(BaseModel):
    """How uploaded documents and images reach the model."""

    model_config = ConfigDict(extra="forbid")

    convert_documents: bool = True
    inline_markdown_chars: int = Field(default=4000, ge=0)  # shorter documents are inlined
    max_image_bytes: int = Field(default=5 * 1024 * 1024, ge=1024)
    max_images: int = Field(default=4, ge=0)
