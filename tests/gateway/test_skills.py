"""Skills routes: list, enable/disable in extensions_config.json, install a .skill zip safely."""

from __future__ import annotations

import io
import json
import stat
import zipfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import aiohttp
import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.gateway.conftest import Api, make_harness

SKILL_MD = "---\nname: {name}\ndescription: Does {name} things.\nlicense: MIT\n---\n# {name}\n"


def write_skill(root: Path, category: str, name: str) -> None:
    folder = root / category / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(name=name))


@pytest.fixture
async def sapi(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> AsyncIterator[Api]:
    root = tmp_path / "skills"
    write_skill(root, "public", "pdf-tools")
    write_skill(root, "custom", "notes")
    harness = make_harness(tmp_path, fake_openai, agent={"skills": {"path": str(root)}})
    async with harness as svc, aiohttp.ClientSession() as session:
        yield Api(svc, session)


def zip_bytes(entries: Mapping[str, str | bytes], symlinks: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in entries.items():
            zf.writestr(name, content)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return buf.getvalue()


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


async def test_list_get_and_toggle(sapi: Api, tmp_path: Path) -> None:
    status, body, _ = await sapi.call("GET", "/api/skills")
    assert status == 200
    by_name = {s["name"]: s for s in body["skills"]}
    assert by_name["notes"] == {
        "name": "notes",
        "description": "Does notes things.",
        "license": "MIT",
        "category": "custom",
        "enabled": True,
        "editable": True,
        "path": "/mnt/skills/custom/notes/SKILL.md",
    }
    assert by_name["pdf-tools"]["editable"] is False
    assert by_name["pdf-tools"]["category"] == "public"
    config = tmp_path / "extensions_config.json"
    config.write_text(json.dumps({"mcpServers": {"x": {"command": "npx"}}}))
    status, body, _ = await sapi.call("PUT", "/api/skills/notes", json={"enabled": False})
    assert status == 200, body
    assert body["enabled"] is False
    stored = json.loads(config.read_text())
    assert stored == {
        "mcpServers": {"x": {"command": "npx"}},
        "skills": {"notes": {"enabled": False}},
    }
    assert not sapi.app.hands.skills.is_enabled("notes")
    status, body, _ = await sapi.call("GET", "/api/skills/notes")
    assert (status, body["enabled"]) == (200, False)
    status, body, _ = await sapi.call("PUT", "/api/skills/notes", json={"enabled": True})
    assert json.loads(config.read_text())["skills"] == {"notes": {"enabled": True}}


async def test_bad_input_and_missing(sapi: Api) -> None:
    assert (await sapi.call("GET", "/api/skills/nope"))[0] == 404
    assert (await sapi.call("PUT", "/api/skills/nope", json={"enabled": True}))[0] == 404
    for payload in ({}, {"enabled": "maybe"}, {"enabled": True, "x": 1}):
        status, body, _ = await sapi.call("PUT", "/api/skills/notes", json=payload)
        assert status == 422
        assert "detail" in body
    status, body, _ = await sapi.call(
        "PUT", "/api/skills/notes", data=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert status == 422


async def test_routes_need_auth(sapi: Api) -> None:
    for method, path in (
        ("GET", "/api/skills"),
        ("GET", "/api/skills/notes"),
        ("PUT", "/api/skills/notes"),
        ("POST", "/api/skills/install"),
    ):
        status, body, _ = await sapi.call(method, path, auth=False, json={"enabled": False})
        assert status == 401
        assert body == {"detail": "missing or invalid bearer token"}
    assert sapi.app.hands.skills.is_enabled("notes")


async def test_install_raw_and_multipart(sapi: Api, tmp_path: Path) -> None:
    archive = zip_bytes(
        {
            "charts/SKILL.md": SKILL_MD.format(name="charts"),
            "charts/scripts/plot.py": "print('hi')\n",
        }
    )
    status, body, _ = await sapi.call(
        "POST", "/api/skills/install", data=archive, headers={"Content-Type": "application/zip"}
    )
    assert status == 200, body
    assert body["skill_name"] == "charts"
    assert body["skill"]["enabled"] is True
    installed = tmp_path / "skills" / "custom" / "charts"
    assert (installed / "scripts" / "plot.py").read_text() == "print('hi')\n"
    assert sapi.app.hands.skills.get("charts") is not None
    status, body, _ = await sapi.call("POST", "/api/skills/install", data=archive)
    assert status == 409, body
    form = aiohttp.FormData()
    flat = zip_bytes({"SKILL.md": SKILL_MD.format(name="flat")})
    form.add_field("files", flat, filename="flat.skill", content_type="application/zip")
    status, body, _ = await sapi.call("POST", "/api/skills/install", data=form)
    assert status == 200, body
    assert (tmp_path / "skills" / "custom" / "flat" / "SKILL.md").is_file()
    status, body, _ = await sapi.call("GET", "/api/skills")
    assert {"charts", "flat"} <= {s["name"] for s in body["skills"]}


@pytest.mark.parametrize(
    ("archive", "reason"),
    [
        (
            zip_bytes(
                {"evil/SKILL.md": SKILL_MD.format(name="evil"), "evil/../../escape.txt": "x"}
            ),
            "'..'",
        ),
        (zip_bytes({"SKILL.md": SKILL_MD.format(name="evil"), "/tmp/abs.txt": "x"}), "absolute"),
        (zip_bytes({"SKILL.md": SKILL_MD.format(name="evil"), "C:/win.txt": "x"}), "absolute"),
        (
            zip_bytes({"SKILL.md": SKILL_MD.format(name="evil")}, symlinks={"link": "/etc/passwd"}),
            "symlink",
        ),
        (
            zip_bytes(
                {f"f{i}.txt": "x" for i in range(201)} | {"SKILL.md": SKILL_MD.format(name="e")}
            ),
            "entries",
        ),
        (
            zip_bytes(
                {"SKILL.md": SKILL_MD.format(name="evil"), "big.bin": b"\0" * (10 * 2**20 + 1)}
            ),
            "unpacks",
        ),
        (zip_bytes({"README.md": "no skill"}), "no SKILL.md"),
        (zip_bytes({"SKILL.md": "no front matter"}), "invalid SKILL.md"),
        (zip_bytes({"SKILL.md": "---\nname: Bad_Name\ndescription: x\n---\n"}), "invalid SKILL.md"),
        (b"not a zip at all", "not a zip"),
    ],
)
async def test_refused_archives_change_nothing(
    sapi: Api, tmp_path: Path, archive: bytes, reason: str
) -> None:
    root = tmp_path / "skills"
    before = tree(root)
    status, body, _ = await sapi.call("POST", "/api/skills/install", data=archive)
    assert status == 400, body
    assert reason in body["detail"]
    assert tree(root) == before
    assert not (tmp_path / "escape.txt").exists()
    assert sorted(s.name for s in sapi.app.hands.skills.skills) == ["notes", "pdf-tools"]


async def test_install_name_taken_by_public_skill(sapi: Api, tmp_path: Path) -> None:
    before = tree(tmp_path / "skills")
    archive = zip_bytes({"SKILL.md": SKILL_MD.format(name="pdf-tools")})
    status, body, _ = await sapi.call("POST", "/api/skills/install", data=archive)
    assert status == 409, body
    assert tree(tmp_path / "skills") == before


async def test_install_empty_body(sapi: Api) -> None:
    status, body, _ = await sapi.call("POST", "/api/skills/install", data=b"")
    assert status == 400
    assert "detail" in body


async def test_install_from_a_thread_file(sapi: Api, tmp_path: Path) -> None:
    """DeerFlow's body: `{thread_id, path}` of a .skill the agent wrote in the thread."""
    status, thread, _ = await sapi.call("POST", "/api/threads", json={})
    tid = thread["thread_id"]
    outputs = sapi.app.runner.thread_dirs(tid).outputs
    (outputs / "maps.skill").write_bytes(zip_bytes({"SKILL.md": SKILL_MD.format(name="maps")}))
    (tmp_path / "outside.skill").write_bytes(zip_bytes({"SKILL.md": SKILL_MD.format(name="o")}))
    status, body, _ = await sapi.call(
        "POST",
        "/api/skills/install",
        json={"thread_id": tid, "path": "mnt/user-data/outputs/maps.skill"},
    )
    assert status == 200, body
    assert (body["success"], body["skill_name"]) == (True, "maps")
    assert (tmp_path / "skills" / "custom" / "maps" / "SKILL.md").is_file()
    cases = [
        ({"thread_id": tid, "path": "mnt/user-data/outputs/none.skill"}, 404),
        ({"thread_id": tid, "path": "mnt/user-data/outputs/../../../../outside.skill"}, 403),
        ({"thread_id": tid, "path": "/etc/passwd"}, 400),
        ({"thread_id": "no-such-thread", "path": "mnt/user-data/outputs/maps.skill"}, 404),
        ({"thread_id": "bad/id", "path": "x"}, 422),
        ({"thread_id": tid}, 422),
    ]
    for payload, expected in cases:
        status, body, _ = await sapi.call("POST", "/api/skills/install", json=payload)
        assert status == expected, (payload, body)
    assert "o" not in {s.name for s in sapi.app.hands.skills.skills}
