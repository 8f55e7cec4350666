"""The `usage:` section: the currency shown, the footer under answers, budgets and the cheaper
model budgets fall back to (docs/usage.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator


def _off(value: object) -> object:
    """YAML reads a bare `off` as false."""
    return "off" if value is False else value


ShowUsage = Annotated[Literal["off", "tokens", "cost"], BeforeValidator(_off)]


class Budget(BaseModel):
    """A limit per person, per person of a role, per chat or per channel, by day or month."""

    model_config = ConfigDict(extra="forbid")

    scope: Literal["person", "role", "chat", "channel"]
    name: str = Field(min_length=1)  # person id, role name, `channel:chat_id`, channel name
    period: Literal["day", "month"] = "day"
    tokens: int | None = Field(default=None, gt=0)
    cost: float | None = Field(default=None, gt=0)
    at_limit: Literal["refuse", "fallback"] = "refuse"

    @model_validator(mode="after")
    def _one_limit(self) -> Budget:
        if (self.tokens is None) == (self.cost is None):
            raise ValueError("give exactly one of tokens or cost")
        return self

    @property
    def limit(self) -> float:
        return float(self.tokens if self.tokens is not None else self.cost or 0)

    @property
    def key(self) -> str:
        return f"{self.scope}:{self.name}:{self.period}:{'tokens' if self.tokens else 'cost'}"


class ChannelUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    show_usage: ShowUsage = "off"


class UsageConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    currency: str = "USD"  # the price table's currency; configured prices are read as it
    show_usage: ShowUsage = "off"  # the footer under each answer, unless a channel says
    channels: dict[str, ChannelUsage] = Field(default_factory=dict)
    warn_at: float = Field(default=0.8, gt=0, lt=1)
    fallback_model: str | None = None  # budgets with at_limit: fallback run on it at 100 %
    budgets: list[Budget] = Field(default_factory=list)

    def show_for(self, channel: str) -> ShowUsage:
        cfg = self.channels.get(channel)
        return cfg.show_usage if cfg is not None else self.show_usage

    def problems(self, models: set[str], roles: set[str]) -> list[str]:
        """Names that name nothing, with their YAML paths."""
        found = []
        if self.fallback_model is not None and self.fallback_model not in models:
            found.append(
                f"usage.fallback_model: unknown model {self.fallback_model!r} "
                f"(models: {', '.join(sorted(models))})"
            )
        for i, budget in enumerate(self.budgets):
            where = f"usage.budgets[{i}]"
            if budget.scope == "role" and budget.name not in roles:
                known = ", ".join(sorted(roles))
                found.append(f"{where}.name: unknown role {budget.name!r} (roles: {known})")
            if budget.at_limit == "fallback" and self.fallback_model is None:
                found.append(f"{where}.at_limit: fallback needs usage.fallback_model")
        return found
