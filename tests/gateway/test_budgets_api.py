"""`/api/budgets` edits over the real HTTP server: add, replace, delete; validated (a 422 naming
the field, nothing written), live (the next message meets the new budget, no restart), in
config.yaml with its comments, audited, and only for an admin token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from bot.access.store import AuditQuery
from bot.config.schema import Settings, load_settings
from tests.e2e.config.service import HEADER, write_config
from tests.e2e.hands_helpers import chan
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.gateway.conftest import TOKEN
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")

USAGE = {"prompt_tokens": 400, "completion_tokens": 100, "total_tokens": 500}
VIEWER = "viewer-token-123"


class FileService(ServiceHarness):
    """The service started from a config.yaml (so its configuration can be edited)."""

    def settings(self) -> Settings:
        path = self.data_dir.parent / "config.yaml"
        if not path.exists():
            write_config(path, self.raw)
        return load_settings(path)


def service(tmp_path: Path, fake: FakeOpenAI) -> FileService:
    gateway = {"auth_token": TOKEN, "tokens": [{"name": "ops", "token": VIEWER, "role": "viewer"}]}
    return FileService(
        tmp_path / "data", fake, {"test": {"enabled": True}}, gateway=gateway, usage={}
    )


async def call(
    svc: ServiceHarness, method: str, path: str, body: Any = None, token: str = TOKEN
) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}", "X-Antler-Actor": "ada"}
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, svc.gateway_url + path, json=body, headers=headers) as resp,
    ):
        return resp.status, await resp.json()


def on_file(tmp_path: Path) -> list[dict[str, Any]]:
    text = (tmp_path / "config.yaml").read_text()
    assert text.startswith(HEADER)  # the file's comments survive the edit
    return list((yaml.safe_load(text).get("usage") or {}).get("budgets", []))


async def test_a_budget_added_over_the_api_applies_to_the_next_message(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    budget = {"scope": "person", "name": "test:ann", "tokens": 400}
    async with service(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        fake_openai.script(Reply(text="first", usage=USAGE), Reply(text="second", usage=USAGE))
        await ch.inject("one", user="ann")
        await svc.idle()
        status, body = await call(svc, "POST", "/api/budgets", budget)
        assert status == 200, body
        assert body["change"]["applied"] == ["usage.budgets"]
        [state] = body["budgets"]
        assert (state["index"], state["used"], state["limit"]) == (0, 500.0, 400.0)
        await ch.inject("two", user="ann")  # no restart: the new budget refuses it
        await svc.idle()
        status, body = await call(svc, "DELETE", "/api/budgets/0")
        assert (status, body["budgets"]) == (200, [])
        await ch.inject("three", user="ann")
        await svc.idle()
        entries = await svc.running.stores.access.audit(AuditQuery(kind="budget"))
    _, refused, third = [c.doc for c in ch.of("finish")]
    assert refused is not None
    assert third is not None
    assert refused.status == "failed"
    assert refused.note.startswith("Your daily budget of 400 tokens is used up.")
    assert third.text == "second"
    assert on_file(tmp_path) == []
    deleted, added = entries
    assert (added.subject, added.detail["action"], added.detail["after"]["tokens"]) == (
        "person:test:ann",
        "add",
        400,
    )
    assert (deleted.detail["action"], deleted.detail["after"]) == ("delete", None)
    assert added.actor.startswith("ada (admin token")


async def test_replace_one_or_all_and_bad_input_names_the_field(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    async with service(tmp_path, fake_openai) as svc:
        both = [
            {"scope": "channel", "name": "test", "tokens": 1000},
            {"scope": "role", "name": "member", "period": "month", "cost": 2.5},
        ]
        status, body = await call(svc, "PUT", "/api/budgets", {"budgets": both})
        assert status == 200, body
        assert [b["unit"] for b in body["budgets"]] == ["tokens", "USD"]
        changed = {"scope": "channel", "name": "test", "tokens": 2000, "at_limit": "refuse"}
        status, body = await call(svc, "PUT", "/api/budgets/0", changed)
        assert (status, body["budgets"][0]["limit"]) == (200, 2000.0)
        written = on_file(tmp_path)
        assert [b.get("tokens") for b in written] == [2000, None]
        assert svc.running.settings.usage.budgets[0].tokens == 2000  # live
        bad: list[tuple[str, str, Any, int, str]] = [
            ("POST", "/api/budgets", {"scope": "team", "name": "x", "tokens": 5}, 422, "scope"),
            ("POST", "/api/budgets", {"scope": "person", "name": "a", "tokens": -1}, 422, "tokens"),
            ("POST", "/api/budgets", {"scope": "person", "name": "a"}, 422, "exactly one of"),
            ("POST", "/api/budgets", {"scope": "role", "name": "boss", "tokens": 5}, 422,
             "usage.budgets[2].name: unknown role 'boss'"),
            ("POST", "/api/budgets",
             {"scope": "person", "name": "a", "tokens": 5, "at_limit": "fallback"}, 422,
             "usage.budgets[2].at_limit: fallback needs usage.fallback_model"),
            ("PUT", "/api/budgets/7", changed, 404, "index: no budget 7"),
            ("DELETE", "/api/budgets/x", None, 422, "index"),
            ("DELETE", "/api/budgets/0", None, 403, "may only read"),
        ]  # fmt: skip
        for method, path, payload, code, says in bad:
            token = VIEWER if code == 403 else TOKEN
            status, body = await call(svc, method, path, payload, token=token)
            assert (status, says in str(body)) == (code, True), (method, path, body)
        assert on_file(tmp_path) == written  # nothing written
        status, _ = await call(svc, "GET", "/api/budgets", token="wrong")
        assert status == 401
        status, body = await call(svc, "GET", "/api/budgets", token=VIEWER)
        assert (status, len(body["budgets"])) == (200, 2)
