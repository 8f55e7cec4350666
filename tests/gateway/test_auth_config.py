"""Start-up refuses an open admin API on a non-loopback address; no token means loopback only."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from bot.config.schema import ConfigError, is_loopback, settings_from_dict
from bot.webhooks import DynamicRoutes
from gateway.server import GatewayServer, build_app
from tests.fakes.openai_server import FakeOpenAI
from tests.harness import ServiceHarness, service_config


def test_non_loopback_host_without_token_is_refused(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    raw = service_config(tmp_path, fake_openai, gateway={"host": "0.0.0.0"})
    with pytest.raises(ConfigError) as err:
        settings_from_dict(raw)
    (problem,) = [p for p in err.value.problems if "gateway" in p]
    assert problem.startswith("gateway.auth_token: required when gateway.host (0.0.0.0)")
    raw["gateway"]["auth_token"] = ""
    with pytest.raises(ConfigError):
        settings_from_dict(raw)
    raw["gateway"]["auth_token"] = "s3cret"
    assert settings_from_dict(raw).gateway.host == "0.0.0.0"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.0.0.5", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_server_refuses_open_non_loopback_bind() -> None:
    app = build_app(lambda: {"status": "ok"}, DynamicRoutes())
    with pytest.raises(ValueError, match=r"gateway\.auth_token"):
        GatewayServer(app, "0.0.0.0", 0, has_token=False)


async def test_no_token_on_loopback_needs_no_auth(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> None:
    svc = ServiceHarness(tmp_path, fake_openai, {"test": {"enabled": True}})
    async with svc, aiohttp.ClientSession() as session:
        assert svc.app is not None
        assert svc.app.settings.gateway.auth_token is None
        async with session.get(svc.gateway_url + "/api/models") as resp:
            assert resp.status == 200
        async with session.get(svc.gateway_url + "/openapi.json") as resp:
            doc = await resp.json()
        assert "securitySchemes" not in doc["components"]
