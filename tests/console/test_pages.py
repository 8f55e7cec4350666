"""Each console page over plain HTTP (no JavaScript): what it shows and what its forms change,
against the whole service (recording channel `test`, fake OpenAI)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import aiohttp

from bot.stores.journal import State
from channels.base import ChatRef, InboundMessage, UserRef
from tests.console.client import Console
from tests.console.stage import ADMIN_TOKEN, stage
from tests.fakes.openai_server import FakeOpenAI
from tests.gateway.conftest import AUTH, TOKEN, make_harness
from tests.harness import ServiceHarness


def app(svc: ServiceHarness):
    assert svc.app is not None
    return svc.app


async def api(svc: ServiceHarness, method: str, path: str, body: object = None) -> object:
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, svc.gateway_url + path, json=body, headers=AUTH) as resp,
    ):
        assert resp.status < 300, (resp.status, await resp.text())
        return await resp.json() if resp.status != 204 else None


async def test_deliveries_show_recent_and_failed_entries_with_the_reason(
    admin: Console, svc: ServiceHarness
) -> None:
    journal = app(svc).journal
    chat = ChatRef(channel="test", chat_id="c1")
    ann = UserRef(id="u1", name="Ann")
    ok = InboundMessage(event_id="e-ok", chat=chat, sender=ann, text="hello")
    refused = InboundMessage(
        event_id="e-gone", chat=chat, sender=UserRef(id="u1", name="Ann"), text="are you there"
    )
    waiting = InboundMessage(
        event_id="e-wait",
        chat=chat,
        sender=UserRef(id="u1", name="Ann"),
        text="still waiting for an answer",
    )
    for msg in (ok, refused, waiting):
        assert await journal.accept(msg)
    await journal.delivered(ok)
    await journal.failed(refused, "bot blocked by the user", told=False)
    assert (await journal.entry(refused)).state is State.failed

    status, page, _ = await admin.get("/console/deliveries")
    assert status == 200
    failed_part = page[page.index('id="failed"') : page.index('id="recent"')]
    assert "e-gone" in failed_part
    assert "bot blocked by the user" in failed_part
    assert "e-ok" not in failed_part
    recent_part = page[page.index('id="recent"') :]
    assert "e-ok" in recent_part
    assert "e-wait" in recent_part
    assert "still waiting for an answer" in recent_part  # unsettled: the text is still kept


async def test_conversation_page_agent_and_model_switch(
    admin: Console, svc: ServiceHarness
) -> None:
    chat = ChatRef(channel="test", chat_id="c7", chat_type="group")
    conv = await app(svc).conversations.get_or_create(chat)
    await app(svc).conversations.update(conv.key, title="Quarterly numbers")
    status, page, _ = await admin.get("/console/conversations")
    assert status == 200
    assert "Quarterly numbers" in page
    assert "c7" in page
    status, page, _ = await admin.get("/console/conversations?channel=other")
    assert "Quarterly numbers" not in page

    here = f"/console/conversations/{conv.thread_id}"
    status, page, _ = await admin.get(here)
    assert status == 200
    assert "Nothing saved yet." in page
    assert "Stop the running reply" not in page
    assert "<dt>Agent</dt><dd>Lead agent</dd>" in page  # no /agent choice: lead_agent
    await app(svc).conversations.update(conv.key, agent="nobody-now")  # a profile since removed
    assert "<dt>Agent</dt><dd>Lead agent</dd>" in (await admin.get(here))[1]
    status, _, resp = await admin.post(here + "/model", {"model": "smart"})
    assert "Model switched to smart" in await admin.follow(resp)
    assert (await app(svc).conversations.get(conv.key)).model == "smart"
    status, _, resp = await admin.post(here + "/model", {"model": "nope"})
    assert "unknown model" in await admin.follow(resp)
    status, _, resp = await admin.post(here + "/stop")
    assert "Nothing was running." in await admin.follow(resp)
    assert (await admin.get("/console/conversations/no-such-thread"))[0] == 404
    assert (await admin.get("/console/conversations/bad%20id"))[0] == 404


async def test_skills_toggle_and_install(
    admin: Console, svc: ServiceHarness, tmp_path: Path
) -> None:
    status, page, _ = await admin.get("/console/extensions")
    assert status == 200
    assert 'id="skill-pdf-tools"' in page
    assert "Fast" in page
    status, _, resp = await admin.post("/console/extensions/skills/pdf-tools", {"enabled": "false"})
    assert "Skill pdf-tools disabled." in await admin.follow(resp)
    config = json.loads((tmp_path / "extensions_config.json").read_text())
    assert config["skills"] == {"pdf-tools": {"enabled": False}}
    assert not app(svc).hands.skills.is_enabled("pdf-tools")

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("notes/SKILL.md", "---\nname: notes\ndescription: Takes notes.\n---\nBody\n")
    form = aiohttp.FormData()
    form.add_field(
        "archive", buf.getvalue(), filename="notes.skill", content_type="application/zip"
    )
    status, _, resp = await admin.post("/console/extensions/install", form)
    assert "Skill notes installed." in await admin.follow(resp)
    assert (tmp_path / "skills" / "custom" / "notes" / "SKILL.md").is_file()

    bad = aiohttp.FormData()
    bad.add_field("archive", b"not a zip", filename="x.skill", content_type="application/zip")
    status, _, resp = await admin.post("/console/extensions/install", bad)
    assert "Not installed:" in await admin.follow(resp)
    status, _, resp = await admin.post("/console/extensions/skills/nope", {"enabled": "true"})
    assert status == 404


GITHUB_FORM = {
    "original": "",
    "name": "github",
    "type": "stdio",
    "enabled": "true",
    "command": "bash",
    "args": "-c\nrm -rf /",
    "env": "GITHUB_TOKEN=ghp_secret",
    "url": "",
    "headers": "",
    "description": "",
}
"""The console's MCP server form, filled in for a new server."""


async def test_mcp_servers_edit_with_errors_next_to_the_field_and_masked_secrets(
    admin: Console, tmp_path: Path
) -> None:
    path = tmp_path / "extensions_config.json"
    path.write_text(json.dumps({"skills": {"x": {"enabled": True}}}))
    new = dict(GITHUB_FORM)  # a command and arguments that are not allowed
    status, page, _ = await admin.post("/console/mcp/save", new)
    assert status == 400
    assert 'id="new-command-error"' in page
    assert "not allowed" in page
    assert 'id="new-args-error"' in page
    assert "arguments not allowed: -c" in page
    assert 'aria-describedby="new-command-error"' in page
    assert "mcpServers" not in json.loads(path.read_text())  # nothing written

    new.update(command="npx", args="-y\n@modelcontextprotocol/server-github")
    status, _, resp = await admin.post("/console/mcp/save", new)
    page = await admin.follow(resp)
    assert "MCP server github saved." in page
    assert "ghp_secret" not in page
    assert "GITHUB_TOKEN=***" in page
    stored = json.loads(path.read_text())
    assert stored["skills"] == {"x": {"enabled": True}}
    assert stored["mcpServers"]["github"]["env"] == {"GITHUB_TOKEN": "ghp_secret"}

    edit = {
        **new,
        "original": "github",
        "name": "",
        "env": "GITHUB_TOKEN=***",
        "description": "GitHub issues",
    }
    status, _, resp = await admin.post("/console/mcp/save", edit)
    assert "saved" in await admin.follow(resp)
    stored = json.loads(path.read_text())["mcpServers"]["github"]
    assert stored["env"] == {"GITHUB_TOKEN": "ghp_secret"}
    assert stored["description"] == "GitHub issues"

    status, page, _ = await admin.post("/console/mcp/save", {**edit, "type": "http", "url": ""})
    assert status == 400
    assert 'id="github-url-error"' in page
    status, page, _ = await admin.post("/console/mcp/save", {**new, "command": "npx"})
    assert status == 400
    assert "exists already" in page
    status, page, _ = await admin.post("/console/mcp/save", {**edit, "env": "NOEQUALS"})
    assert status == 400
    assert 'id="github-env-error"' in page

    status, _, resp = await admin.post("/console/mcp/github/delete")
    assert "deleted" in await admin.follow(resp)
    assert json.loads(path.read_text())["mcpServers"] == {}


async def test_memory_people_facts_forget_one_and_all(admin: Console, svc: ServiceHarness) -> None:
    for content in ("Prefers metric units", "Works on the billing team"):
        await api(svc, "POST", "/api/memory/facts?person=test:42", {"content": content})
    status, page, _ = await admin.get("/console/memory")
    assert status == 200
    assert "/console/memory/test:42" in page
    status, page, _ = await admin.get("/console/memory/test:42")
    assert "Prefers metric units" in page
    assert "Works on the billing team" in page
    facts = await app(svc).runner.memory.store.facts("test:42")
    first = next(f for f in facts if f.content == "Prefers metric units")
    status, _, resp = await admin.post(f"/console/memory/test:42/facts/{first.id}/forget")
    page = await admin.follow(resp)
    assert "Fact forgotten." in page
    assert "Prefers metric units" not in page
    status, _, resp = await admin.post(f"/console/memory/test:42/facts/{first.id}/forget")
    assert "already forgotten" in await admin.follow(resp)
    status, _, resp = await admin.post("/console/memory/test:42/forget")
    assert "nothing was forgotten" in await admin.follow(resp)
    assert len(await app(svc).runner.memory.store.facts("test:42")) == 1
    status, _, resp = await admin.post("/console/memory/test:42/forget", {"confirm": "yes"})
    assert "Everything about test:42 was forgotten." in await admin.follow(resp)
    assert await app(svc).runner.memory.store.facts("test:42") == []


async def test_schedules_pause_resume_trigger_cancel(admin: Console, svc: ServiceHarness) -> None:
    task = await api(
        svc,
        "POST",
        "/api/scheduled-tasks",
        {
            "chat": {"channel": "test", "chat_id": "c1"},
            "creator": {"id": "u1", "name": "Ann"},
            "schedule": "every weekday 09:00",
            "prompt": "summarise the tracker",
        },
    )
    assert isinstance(task, dict)
    tid = task["id"]
    status, page, _ = await admin.get("/console/schedules")
    assert status == 200
    assert "summarise the tracker" in page
    assert f'aria-label="Pause task {tid}"' in page
    for action, state, said in (
        ("pause", "paused", "paused"),
        ("resume", "active", "resumed"),
        ("delete", "cancelled", "cancelled"),
    ):
        status, _, resp = await admin.post(f"/console/schedules/{tid}/{action}")
        assert f"Task {tid} {said}." in await admin.follow(resp)
        assert (await app(svc).schedules.store.get(tid)).state == state
    status, _, resp = await admin.post(f"/console/schedules/{tid}/trigger")
    assert f"Task {tid}:" in await admin.follow(resp)  # cancelled: refused with the reason
    status, _, resp = await admin.post("/console/schedules/999/pause")
    assert "Task 999:" in await admin.follow(resp)


async def test_people_get_a_role_and_the_audit_shows_who_acted(
    admin: Console, svc: ServiceHarness
) -> None:
    await api(svc, "POST", "/api/people/test:42/accounts", {"account": "slack:U1"})
    status, page, _ = await admin.get("/console/people")
    assert status == 200
    assert "test:42" in page
    assert "slack:U1" in page
    status, _, resp = await admin.post("/console/people/test:42/role", {"role": "guest"})
    assert "test:42 is now guest." in await admin.follow(resp)
    assert await app(svc).stores.access.role("test:42") == "guest"
    status, _, resp = await admin.post("/console/people/test:42/role", {"role": "boss"})
    assert "Unknown role &#39;boss&#39;." in await admin.follow(resp)
    assert await app(svc).stores.access.role("test:42") == "guest"  # nothing written
    status, page, _ = await admin.get("/console/audit?kind=role")
    assert status == 200
    assert "console" in page
    assert "guest" in page
    status, page, _ = await admin.get("/console/audit?kind=link&person=test:42")
    assert "slack:U1" in page
    status, page, _ = await admin.get("/console/audit?kind=nonsense&before_id=x")
    assert status == 200
    status, _, resp = await admin.post("/console/people/test:42/accounts", {"account": "tg:7"})
    assert "tg:7 is now test:42." in await admin.follow(resp)
    status, _, resp = await admin.post("/console/people/test:42/accounts", {"account": "x y"})
    assert "An account is channel:id" in await admin.follow(resp)
    status, _, resp = await admin.post("/console/people/test:42/accounts/slack:U1/unlink")
    assert "slack:U1 is on its own again." in await admin.follow(resp)
    status, _, resp = await admin.post("/console/people/test:42/accounts/test:42/unlink")
    assert "The others are linked to test:42" in await admin.follow(resp)
    assert await app(svc).runner.memory.store.accounts("test:42") == ["tg:7"]
    status, page, _ = await admin.get("/console/audit?kind=console")
    assert "/console/people/test:42/role" in page  # every console change, who and what


async def test_metrics_page_and_data(admin: Console, svc: ServiceHarness) -> None:
    status, page, _ = await admin.get("/console/metrics")
    assert status == 200
    assert 'id="m-answers">0<' in page
    app(svc).metrics.run_finished("test", "succeeded", 1.2)
    app(svc).metrics.first_visible.labels(channel="test").observe(0.3)
    status, page, _ = await admin.get("/console/metrics")
    assert 'id="m-answers">1<' in page
    status, body, _ = await admin.get("/console/metrics/data")
    data = json.loads(body)
    assert set(data["series"]) >= {"t", "answers", "first_visible_p99", "run_p50"}
    assert len(data["series"]["t"]) >= 1
    # a minute has not been sampled yet: no point has a value, and the page is told so
    assert data["collecting"] is True
    assert set(data["series"]["answers"]) == {None}
    assert (data["window"], data["span"]) == (60.0, 600.0)


async def test_pages_answer_for_every_nav_entry(admin: Console) -> None:
    for slug in (
        "channels",
        "conversations",
        "agents",
        "deliveries",
        "extensions",
        "mcp",
        "memory",
        "metrics",
        "schedules",
        "people",
        "approvals",
        "audit",
    ):
        status, page, _ = await admin.get(f"/console/{slug}")
        assert status == 200, slug
        assert 'aria-current="page"' in page
        assert '<main id="main"' in page


async def test_deliveries_and_conversations_on_each_storage_backend(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    test_channel_registered: None,
    storage: dict[str, object],
) -> None:
    """The journal's `recent`/`count` and the conversation list, on SQLite and PostgreSQL."""
    async with make_harness(tmp_path, fake_openai, storage=storage) as svc:
        console = Console(svc.gateway_url)
        try:
            await console.login(TOKEN)
            chat = ChatRef(channel="test", chat_id="pg1")
            msg = InboundMessage(
                event_id="e-pg", chat=chat, sender=UserRef(id="u", name="U"), text="hi"
            )
            assert await app(svc).journal.accept(msg)
            await app(svc).journal.failed(msg, "chat not found", told=False)
            await app(svc).conversations.get_or_create(chat)
            _, page, _ = await console.get("/console/deliveries")
            failed_part = page[page.index('id="failed"') : page.index('id="recent"')]
            assert "e-pg" in failed_part
            assert "chat not found" in failed_part
            _, page, _ = await console.get("/console/conversations")
            assert ">pg1<" in page
        finally:
            await console.close()


async def test_a_failure_is_a_short_page_not_a_traceback(admin: Console, tmp_path: Path) -> None:
    (tmp_path / "extensions_config.json").write_text("{not json")
    status, page, resp = await admin.get("/console/mcp")
    assert status == 500
    assert resp.content_type == "text/html"
    assert "extensions_config.json is not valid JSON" in page
    assert "Traceback" not in page
    status, page, _ = await admin.post("/console/extensions/skills/pdf-tools", {"enabled": "false"})
    assert status == 500
    assert "not valid JSON" in page


async def test_a_restart_that_fails_says_why(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    async with stage(tmp_path, fake_openai) as st:
        console = Console(st.url)
        try:
            await console.login(ADMIN_TOKEN)
            st.telegram.fail_next("getMe", 502, "Bad Gateway", times=3)
            _status, _, resp = await console.post("/console/channels/telegram/restart")
            page = await console.follow(resp)
            assert "telegram did not start:" in page
            assert "retrying with backoff" in page
            assert 'class="flash error"' in page
            assert "status-retrying" in page
        finally:
            await console.close()
