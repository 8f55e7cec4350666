"""The name of a Slack app's one Socket Mode connection across workers (its lease key): the app
id inside the app-level token, never the token itself."""

from __future__ import annotations

from pathlib import Path

from channels.slack.channel import SlackChannel
from channels.slack.config import SlackConfig
from channels.slack.socket import app_id
from tests.fakes.recording_context import RecordingContext


def test_the_app_id_is_read_from_the_app_level_token() -> None:
    assert app_id("xapp-1-A0123ABCD-4567890123-0a1b2c3d4e5f") == "A0123ABCD"


def test_a_token_of_another_shape_is_named_by_a_digest_not_by_itself() -> None:
    name = app_id("xapp-test-secret")
    assert name.startswith("app-")
    assert "secret" not in name
    assert name == app_id("xapp-test-secret")  # the same app on every worker


def test_only_socket_mode_has_an_exclusive_connection(tmp_path: Path) -> None:
    http = SlackConfig(enabled=True, bot_token="xoxb-1", mode="http", signing_secret="s")
    socket = SlackConfig(enabled=True, bot_token="xoxb-1", app_token="xapp-1-A9-1-x")
    ctx = RecordingContext(data_dir=tmp_path)
    assert SlackChannel(http, ctx).exclusive_connection() is None
    assert SlackChannel(socket, ctx).exclusive_connection() == "A9"
