"""The reload boundary: the schema's markers, the appliers in code and docs/configuration.md
agree; a change of each kind is sorted as it should be."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from bot.config.apply import LIVE_APPLIERS, applier_for
from bot.config.boundary import (
    KINDS,
    _walk,
    changed_keys,
    kind_of,
    marker,
    reload_boundary,
    restart_only,
)
from bot.config.schema import ChannelsShared, Settings, channels_model

DOCS = Path(__file__).parents[2] / "docs" / "configuration.md"


def _docs_block(name: str) -> str:
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(rf"<!-- {name} -->(.*?)<!-- /{name} -->", text, re.S)
    assert match, f"docs/configuration.md lost its {name} block"
    return match.group(1)


def test_every_section_declares_its_boundary() -> None:
    """A new top-level section (say `bus:`) or shared channel key must say how it reloads."""
    for model in (Settings, ChannelsShared, channels_model()):
        for name, field in model.model_fields.items():
            if field.exclude:
                continue
            assert marker(field.json_schema_extra) in KINDS, f"{model.__name__}.{name}"


def test_markers_name_known_kinds() -> None:
    class Bad(BaseModel):
        x: int = Field(default=0, json_schema_extra={"reload": "someday"})

    with pytest.raises(ValueError, match="unknown reload kind 'someday'"):
        _walk(Bad, "", "live", {})
    assert set(reload_boundary().values()) <= set(KINDS)


def test_every_live_key_has_an_applier_and_every_applier_a_live_key() -> None:
    for key, kind in reload_boundary().items():
        if kind == "live":
            assert applier_for(key) is not None, f"{key} is live but nothing applies it"
    used = {applier_for(k) for k, kind in reload_boundary().items() if kind == "live"}
    assert used == set(LIVE_APPLIERS.values())  # no applier for keys that no longer exist


def test_docs_list_exactly_the_restart_only_keys() -> None:
    documented = re.findall(r"^\| `([^`]+)` \|", _docs_block("restart-only-keys"), re.M)
    assert sorted(documented) == restart_only()


def test_docs_list_exactly_the_live_keys_of_channel_sections() -> None:
    table = reload_boundary()
    live = {
        k.split(".", 2)[2]
        for k, kind in table.items()
        if k.count(".") >= 2 and k.startswith("channels.") and kind == "live"
    }
    documented = set(re.findall(r"`(\w+)`", _docs_block("channel-live-keys")))
    assert documented == live


def test_the_kinds_of_what_the_issue_names() -> None:
    assert kind_of("storage.backend") == "restart"
    assert kind_of("storage.data_dir") == "restart"
    assert kind_of("gateway.port") == kind_of("gateway.host") == "restart"
    assert kind_of("gateway.auth_token") == "live"
    assert kind_of("models[2].api_key") == "live"
    assert kind_of("agent.memory.max_facts") == "live"
    assert kind_of("channels.telegram.bot_token") == "channel"
    assert kind_of("channels.telegram.enabled") == "channel"
    assert kind_of("channels.slack.allowed_users") == "live"
    assert kind_of("channels.busy_policy") == "live"
    assert kind_of("no.such.key") == "restart"


def test_changed_keys_stop_at_the_boundary_keys() -> None:
    old = {
        "models": [{"name": "a"}],
        "channels": {"telegram": {"enabled": True}},
        "agent": {"title": {"enabled": True}},
    }
    new = {
        "models": [{"name": "a"}, {"name": "b"}],
        "channels": {
            "telegram": {"enabled": True, "allowed_users": ["7"]},
            "slack": {"enabled": True},
        },
        "agent": {"title": {"enabled": False}},
        "gateway": {"port": 9},
    }
    assert changed_keys(old, new) == [
        "agent.title.enabled",
        "channels.slack.enabled",
        "channels.telegram.allowed_users",
        "gateway.port",
        "models",
    ]
    assert changed_keys(new, new) == []
