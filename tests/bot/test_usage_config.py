"""The `usage:` section validated with YAML paths, and a call's cost (configured price, the
genai-prices table read offline, an unknown model counted but not priced)."""

from __future__ import annotations

from typing import Any

import pytest

from agent.config import ModelConfig
from bot.config.schema import ConfigError, settings_from_dict
from bot.usage.prices import cost_of, priced

MODEL = {"name": "fast", "model": "fake", "api_key": "sk", "base_url": "http://127.0.0.1:9/v1"}


def problems(usage: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        settings_from_dict({"models": [MODEL], "usage": usage})
    return str(caught.value)


def test_bad_budgets_are_named_by_their_yaml_paths() -> None:
    assert "usage.budgets[0].name: unknown role 'boss'" in problems(
        {"budgets": [{"scope": "role", "name": "boss", "tokens": 10}]}
    )
    assert "give exactly one of tokens or cost" in problems(
        {"budgets": [{"scope": "person", "name": "telegram:1", "tokens": 10, "cost": 1}]}
    )
    assert "usage.fallback_model: unknown model 'cheap'" in problems({"fallback_model": "cheap"})
    assert "usage.budgets[0].at_limit: fallback needs usage.fallback_model" in problems(
        {"budgets": [{"scope": "chat", "name": "slack:C1", "cost": 2, "at_limit": "fallback"}]}
    )
    assert "usage.show_usage" in problems({"show_usage": "always"})


def test_cost_from_the_configured_price_else_the_table_else_nothing() -> None:
    own = ModelConfig(name="a", model="x", price={"input": 2.0, "output": 8.0, "cached": 0.5})
    # 1M prompt of which 0.5M cached, 0.25M completion
    assert cost_of(own, 1_000_000, 250_000, 500_000) == pytest.approx(1.0 + 0.25 + 2.0)
    table = ModelConfig(name="b", model="gpt-4o-mini")
    assert priced(table)
    assert cost_of(table, 1_000_000, 1_000_000, 0) == pytest.approx(0.75)  # 0.15 + 0.60 USD
    unknown = ModelConfig(name="c", model="fake-model-nobody-prices")
    assert not priced(unknown)
    assert cost_of(unknown, 1000, 1000, 0) == 0.0


def test_a_bare_yaml_off_is_off() -> None:
    import yaml

    raw = yaml.safe_load("show_usage: off\nchannels: {slack: {show_usage: off}}")
    settings = settings_from_dict({"models": [MODEL], "usage": raw})
    assert settings.usage.show_usage == "off"
    assert settings.usage.show_for("slack") == "off"
