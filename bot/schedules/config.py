"""The `schedules:` section of config.yaml."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.schedules.recurrence import valid_zone
from bot.stores.schedules import MissedPolicy


class SchedulesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, json_schema_extra={"reload": "restart"})
    default_timezone: str = "UTC"
    max_per_person: int = Field(default=20, ge=1)
    max_per_chat: int = Field(default=20, ge=1)
    missed_policy: MissedPolicy = "run_once"
    late_after_seconds: float = Field(default=300, gt=0)
    poll_seconds: float = Field(default=30, gt=0)
    admins: list[str] = Field(default_factory=list)

    @field_validator("default_timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        if not valid_zone(value):
            raise ValueError(f"unknown time zone {value!r} (use a name like Europe/Berlin)")
        return value
