"""The agent's configuration models (the `models[]`, `default_model` and `agent` YAML sections)."""

from __future__ import annotations

from typing import Any

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, SecretStr, field_validator

from agent.config_context import MemoryConfig, SummarizationConfig, TitleConfig, UploadsConfig


class ModelConfig(BaseModel):
    """One chat model, in DeerFlow's `models[]` shape. Unknown keys pass through to the class."""

    model_config = ConfigDict(extra="allow")

    name: str
    display_name: str = ""
    use: str = "langchain_openai:ChatOpenAI"
    model: str
    api_key: SecretStr | None = None
    base_url: AnyHttpUrl | None = None
    supports_thinking: bool = False
    supports_vision: bool = False
    when_thinking_enabled: dict[str, Any] = Field(default_factory=dict)

    @field_validator("use")
    @classmethod
    def _use_is_import_path(cls, value: str) -> str:
        if ":" not in value:
            raise ValueError("must be 'module:ClassName'")
        return value

    @property
    def label(self) -> str:
        return self.display_name or self.name

    def extra_kwargs(self) -> dict[str, Any]:
        """Keys beyond the schema, passed to the model class as keyword arguments."""
        return dict(self.model_extra or {})


class AgentConfig(BaseModel):
    """Agent behaviour. Tools, sandbox, memory and the rest add their sections here."""

    model_config = ConfigDict(extra="forbid")

    system_prompt: str = ""
    recursion_limit: int = Field(default=100, ge=1)
    request_timeout_seconds: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=2, ge=0)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    title: TitleConfig = Field(default_factory=TitleConfig)
    summarization: SummarizationConfig = Field(default_factory=SummarizationConfig)
    uploads: UploadsConfig = Field(default_factory=UploadsConfig)
