"""What several platforms' config sections share beyond `ChannelConfig`: their own limit on
file sizes and secrets that must be set before a client is built."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr


class FileLimit(BaseModel):
    """`max_file_mb`: the largest file taken in or sent (the platform's own limit may be lower)."""

    max_file_mb: float = Field(default=20.0, gt=0)

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)


def secret(value: SecretStr | None, path: str) -> str:
    """The secret's text; a ValueError naming its YAML `path` when it is not set."""
    if value is None:
        raise ValueError(f"{path} is not set")
    return value.get_secret_value()


def required(enabled: bool, section: str, **values: str | SecretStr) -> None:
    """While `section` is enabled, a ValueError naming the first of `values` that is empty."""
    for name, value in values.items():
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if enabled and not text:
            raise ValueError(f"{name}: required when {section}.enabled is true")
