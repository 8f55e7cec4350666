"""The agent's configuration models (the `models[]`, `default_model` and `agent` YAML sections)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AnyHttpUrl,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from agent.config_context import MemoryConfig, SummarizationConfig, TitleConfig, UploadsConfig


class ModelPrice(BaseModel):
    """What a model costs, per million tokens (overrides the maintained price table)."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached: float | None = Field(default=None, ge=0)  # cached input; None: as input


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
    price: ModelPrice | None = None  # per million tokens; None: the genai-prices table

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


class ToolEntry(BaseModel):
    """One configured tool: `use` is `module:variable`, a LangChain tool or a factory
    `fn(entry) -> tool | None`. Keys beyond the schema are options the factory reads."""

    model_config = ConfigDict(extra="allow")

    name: str
    use: str
    group: str = ""

    @field_validator("use")
    @classmethod
    def _use_is_import_path(cls, value: str) -> str:
        from agent.import_path import check_import_path

        return check_import_path(value)

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class DockerSandboxConfig(BaseModel):
    """`provider: docker`: one container per conversation from `image`, removed when idle."""

    model_config = ConfigDict(extra="forbid")

    image: str = ""
    command: str = "docker"
    idle_seconds: float = Field(default=600.0, gt=0)


class SandboxConfig(BaseModel):
    """Where `bash`/`python` run: `local` (the host, not isolated), `bwrap` or `docker`.

    File tools always work on the thread's folders; `bash` and `python` only when
    `bash_enabled`. `provider` unset: bwrap when it is installed and works, else local.
    """

    model_config = ConfigDict(extra="forbid")

    provider: Literal["local", "bwrap", "docker"] | None = None
    bash_enabled: bool = False
    bash_timeout_seconds: float = Field(default=120.0, gt=0)
    output_max_chars: int = Field(default=20_000, ge=1000)
    read_max_chars: int = Field(default=50_000, ge=1000)
    write_max_chars: int = Field(default=200_000, ge=1000)
    network: bool = False
    env: dict[str, str] = Field(default_factory=dict)
    pass_env: list[str] = Field(default_factory=list)
    cpu_seconds: int = Field(default=60, ge=1)
    memory_mb: int = Field(default=2048, ge=64)
    max_processes: int = Field(default=128, ge=8)
    max_file_mb: int = Field(default=512, ge=1)
    max_output_mb: int = Field(default=16, ge=1)
    uid: int = Field(default=65534, ge=1)
    python_command: str = "python3"
    docker: DockerSandboxConfig = Field(default_factory=DockerSandboxConfig)

    @model_validator(mode="after")
    def _docker_needs_image(self) -> SandboxConfig:
        if self.provider == "docker" and not self.docker.image.strip():
            raise ValueError("docker.image: required when provider is docker")
        return self


class SkillsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: Path = Path("skills")


class SubagentsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    max_concurrent: int = Field(default=3, ge=1, le=4)
    timeout_seconds: float = Field(default=900.0, gt=0)
    recursion_limit: int = Field(default=60, ge=5)


class AgentConfig(BaseModel):
    """Agent behaviour. Tools, sandbox, memory and the rest add their sections here."""

    model_config = ConfigDict(extra="forbid")

    system_prompt: str = ""
    recursion_limit: int = Field(default=100, ge=1)
    request_timeout_seconds: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=2, ge=0)
    tools: list[ToolEntry] = Field(default_factory=list)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    skills: SkillsConfig = Field(default_factory=SkillsConfig)
    extensions_config: Path = Path("extensions_config.json")
    subagents: SubagentsConfig = Field(default_factory=SubagentsConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    title: TitleConfig = Field(default_factory=TitleConfig)
    summarization: SummarizationConfig = Field(default_factory=SummarizationConfig)
    uploads: UploadsConfig = Field(default_factory=UploadsConfig)
