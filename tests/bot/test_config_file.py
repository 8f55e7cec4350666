"""Editing config.yaml for the API: comments and order kept, masks kept, secrets moved out."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from bot.config.file import MASK, dump_doc, edit_section, is_secret, load_doc, masked
from bot.config.schema import load_settings
from bot.config.secrets import read_secrets, secrets_path, variable_for, write_secrets

TEXT = """\
# top comment
models:
  - name: fast              # the quick one
    model: fake-fast
    api_key: $OPENAI_API_KEY
  - name: smart
    model: fake-smart
    api_key: sk-literal
channels:
  # telegram below
  telegram:
    enabled: true
    bot_token: $TG_TOKEN    # from the environment
    allowed_users: [1, 2]
"""


def test_patch_keeps_comments_order_and_references() -> None:
    doc = load_doc(TEXT)
    edit = edit_section(
        doc, ("channels", "telegram"), {"allowed_users": [3], "bot_token": MASK}, replace=False
    )
    out = dump_doc(doc)
    assert edit.secrets == {}
    assert "# top comment" in out
    assert "# the quick one" in out
    assert "# telegram below" in out
    assert "bot_token: $TG_TOKEN    # from the environment" in out
    assert out.index("enabled") < out.index("bot_token") < out.index("allowed_users")
    assert "allowed_users:\n    - 3" in out or "allowed_users: [3]" in out


def test_put_replaces_the_section() -> None:
    doc = load_doc(TEXT)
    edit_section(doc, ("channels", "telegram"), {"enabled": False}, replace=True)
    assert dict(doc["channels"]["telegram"]) == {"enabled": False}


def test_new_secrets_go_to_the_secrets_file_under_the_referenced_name() -> None:
    doc = load_doc(TEXT)
    edit = edit_section(doc, ("channels", "telegram"), {"bot_token": "123:NEW"}, replace=False)
    assert edit.secrets == {"TG_TOKEN": "123:NEW"}
    assert doc["channels"]["telegram"]["bot_token"] == "$TG_TOKEN"
    models = [dict(m) for m in doc["models"]]
    edit = edit_section(
        doc,
        (),
        {
            "models": [
                {**models[1], "api_key": MASK},  # reordered: matched by name
                {**models[0], "api_key": MASK},
                {"name": "new", "model": "m", "api_key": "sk-new"},
            ]
        },
        replace=False,
    )
    assert [m["api_key"] for m in doc["models"]] == [
        "sk-literal",
        "$OPENAI_API_KEY",
        "$ANTLER_MODELS_2_API_KEY",
    ]
    assert edit.secrets == {"ANTLER_MODELS_2_API_KEY": "sk-new"}
    assert "# the quick one" in dump_doc(doc)


def test_references_sent_as_such_are_written_as_they_are() -> None:
    doc = load_doc(TEXT)
    edit = edit_section(doc, ("channels", "telegram"), {"bot_token": "$OTHER"}, replace=False)
    assert edit.secrets == {}
    assert doc["channels"]["telegram"]["bot_token"] == "$OTHER"


def test_which_keys_are_secrets() -> None:
    assert is_secret(["channels", "telegram", "bot_token"])
    assert is_secret(["channels", "feishu", "encrypt_key"])
    assert is_secret(["models", 0, "api_key"])
    assert is_secret(["storage", "postgres", "dsn"])
    assert is_secret(["agent", "tools", 0, "api_key"])  # a free-form tool option
    assert not is_secret(["channels", "telegram", "api_base"])
    assert not is_secret(["models", 0, "name"])


def test_masked_hides_every_secret() -> None:
    shown = masked(
        {
            "a": {
                "bot_token": "**********",
                "api_key": "sk",
                "max_tokens": 5,
                "token": "",
                "name": "x",
            }
        }
    )
    assert shown == {
        "a": {"bot_token": MASK, "api_key": MASK, "max_tokens": 5, "token": "", "name": "x"}
    }


def _api_key(path: Path) -> str:
    key = load_settings(path).models[0].api_key
    assert key is not None
    return key.get_secret_value()


def test_secrets_file_round_trip_0600_and_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("models:\n  - name: a\n    model: m\n    api_key: $KEY\n", encoding="utf-8")
    monkeypatch.setenv("KEY", "from-env")
    assert _api_key(path) == "from-env"
    secrets = secrets_path(path)
    write_secrets(secrets, {"KEY": "from file # with 'quotes'", "OTHER": " spaced "})
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert read_secrets(secrets) == {"KEY": "from file # with 'quotes'", "OTHER": " spaced "}
    assert _api_key(path) == "from file # with 'quotes'"
    with pytest.raises(ValueError, match="one line"):
        write_secrets(secrets, {"KEY": "two\nlines"})
    assert variable_for("channels.slack.bot_token") == "ANTLER_CHANNELS_SLACK_BOT_TOKEN"
