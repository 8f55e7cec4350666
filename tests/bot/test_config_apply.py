"""The admin token's applier never opens the admin API on a non-loopback address."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from bot.config.apply import LIVE_APPLIERS
from bot.config.schema import settings_from_dict


def settings(token: str | None, host: str = "127.0.0.1") -> Any:
    gateway: dict[str, Any] = {"host": host, **({"auth_token": token} if token else {})}
    return settings_from_dict({"models": [{"name": "m", "model": "m"}], "gateway": gateway})


def test_a_token_is_set_changed_and_removed_on_loopback() -> None:
    apply = LIVE_APPLIERS["gateway.auth_token"]
    app: Any = SimpleNamespace(gateway=SimpleNamespace(host="127.0.0.1"), admin_token=None)
    apply(app, settings("first"), ["gateway.auth_token"])
    assert app.admin_token == "first"
    apply(app, settings(None), ["gateway.auth_token"])
    assert app.admin_token is None


def test_the_token_stays_while_the_server_listens_beyond_loopback() -> None:
    apply = LIVE_APPLIERS["gateway.auth_token"]
    app: Any = SimpleNamespace(gateway=SimpleNamespace(host="0.0.0.0"), admin_token="kept")
    # the new file moves the host back to loopback (a restart-only key) and drops the token
    with pytest.raises(ValueError, match=r"listens on 0\.0\.0\.0"):
        apply(app, settings(None), ["gateway.auth_token"])
    assert app.admin_token == "kept"
    apply(app, settings("rotated", host="0.0.0.0"), ["gateway.auth_token"])
    assert app.admin_token == "rotated"
