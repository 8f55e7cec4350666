"""Uploads, artifacts (no escape from the thread's directories) and the MCP config file."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp

from tests.gateway.conftest import Api


async def new_thread(api: Api) -> str:
    status, data, _ = await api.call("POST", "/api/threads", json={})
    assert status == 200
    return str(data["thread_id"])


def form(*files: tuple[str, bytes]) -> aiohttp.FormData:
    data = aiohttp.FormData()
    for name, content in files:
        data.add_field("files", content, filename=name, content_type="application/octet-stream")
    return data


# ---------------------------------------------------------------- uploads


async def test_upload_list_delete(api: Api) -> None:
    tid = await new_thread(api)
    base = f"/api/threads/{tid}/uploads"
    status, body, _ = await api.call(
        "POST", base, data=form(("notes.txt", b"one"), ("data.csv", b"a,b\n1,2\n"))
    )
    assert status == 200, body
    assert body["success"] is True
    assert [f["filename"] for f in body["files"]] == ["notes.txt", "data.csv"]
    assert body["files"][0]["virtual_path"] == "/mnt/user-data/uploads/notes.txt"
    assert body["files"][0]["path"] == "/mnt/user-data/uploads/notes.txt"  # never a host path
    assert str(api.app.runner.data_dir) not in json.dumps(body)
    status, again, _ = await api.call(
        "POST", base, data=form(("notes.txt", b"two"), ("../../evil.sh", b"x"), (".hidden", b"y"))
    )
    assert status == 200
    assert again["success"] is False
    assert [f["filename"] for f in again["files"]] == ["notes_1.txt"]
    assert len(again["skipped_files"]) == 2  # the traversal name and the dot file
    uploads = api.app.runner.thread_dirs(tid).uploads
    assert (uploads / "notes.txt").read_bytes() == b"one"
    assert (uploads / "notes_1.txt").read_bytes() == b"two"
    assert not (uploads.parent.parent / "evil.sh").exists()
    assert not any(p.name.endswith(".part") for p in uploads.iterdir())
    status, listing, _ = await api.call("GET", base + "/list")
    assert status == 200
    names = sorted(f["filename"] for f in listing["files"])
    assert listing["count"] == len(names)
    assert "notes_1.txt" in names
    assert ".hidden" not in names
    status, _, _ = await api.call("GET", listing["files"][0]["artifact_url"])
    assert status == 200
    status, body, _ = await api.call("DELETE", base + "/notes.txt")
    assert (status, body["success"]) == (200, True)
    assert not (uploads / "notes.txt").exists()
    assert (await api.call("DELETE", base + "/notes.txt"))[0] == 404
    assert (await api.call("DELETE", base + "/..%2F..%2Fx"))[0] in (400, 404, 422)
    assert (await api.call("DELETE", base + "/..", raw=True))[0] in (400, 404)
    status, limits, _ = await api.call("GET", base + "/limits")
    assert (status, limits["max_files"]) == (200, 10)


async def test_upload_bad_requests(api: Api) -> None:
    tid = await new_thread(api)
    base = f"/api/threads/{tid}/uploads"
    assert (await api.call("POST", base, json={"files": []}))[0] == 400
    empty = aiohttp.FormData()
    empty.add_field("other", "x")
    assert (await api.call("POST", base, data=empty))[0] == 400
    too_many = form(*[(f"f{i}.txt", b"x") for i in range(11)])
    assert (await api.call("POST", base, data=too_many))[0] == 413
    assert not any(api.app.runner.thread_dirs(tid).uploads.iterdir())  # rolled back
    assert (await api.call("GET", "/api/threads/missing/uploads/list"))[0] == 404
    status, body, _ = await api.call(
        "POST", "/api/threads/missing/uploads", data=form(("a.txt", b"x"))
    )
    assert status == 200, body  # DeerFlow creates the thread on upload
    assert (await api.call("GET", "/api/threads/missing"))[0] == 200
    assert (await api.call("GET", "/api/threads/missing/uploads/list"))[1]["count"] == 1
    assert (await api.call("GET", "/api/threads/bad!id/uploads/list"))[0] == 422


# ---------------------------------------------------------------- artifacts


async def test_artifacts_served_and_contained(api: Api) -> None:
    tid = await new_thread(api)
    dirs = api.app.runner.thread_dirs(tid)
    (dirs.outputs / "report.txt").write_text("hello report")
    (dirs.outputs / "page.html").write_text("<script>alert(1)</script>")
    (dirs.outputs / "pic.svg").write_text("<svg/>")
    secret = dirs.root.parent.parent / "secret.txt"
    secret.write_text("do not serve")
    (dirs.outputs / "link.txt").symlink_to(secret)
    (dirs.outputs / "sub").mkdir()
    base = f"/api/threads/{tid}/artifacts/"

    status, body, resp = await api.call("GET", base + "mnt/user-data/outputs/report.txt")
    assert (status, body) == (200, "hello report")
    assert resp.headers["Content-Disposition"].startswith("inline")
    status, _, resp = await api.call("GET", base + "mnt/user-data/outputs/report.txt?download=true")
    assert resp.headers["Content-Disposition"].startswith("attachment")
    for name in ("page.html", "pic.svg"):
        status, _, resp = await api.call("GET", base + f"mnt/user-data/outputs/{name}")
        assert status == 200
        assert resp.headers["Content-Disposition"].startswith("attachment"), name
        assert resp.headers["Content-Type"] == "application/octet-stream"
        assert resp.headers["X-Content-Type-Options"] == "nosniff"

    escapes = [
        "mnt/user-data/outputs/../../../secret.txt",
        "mnt/user-data/outputs/%2E%2E/%2E%2E/%2E%2E/secret.txt",
        "mnt/user-data/outputs/..%2F..%2F..%2Fsecret.txt",
        "mnt/user-data/outputs/link.txt",
    ]
    for path in escapes:
        status, body, _ = await api.call("GET", base + path, raw=True)
        assert status == 403, (path, status)
        assert "do not serve" not in json.dumps(body)
    status, _, _ = await api.call("GET", base + "mnt/user-data/outputs/link.txt")
    assert status == 403
    assert (await api.call("GET", base + "etc/passwd"))[0] == 400
    assert (await api.call("GET", base + "mnt/user-data/outputs/sub"))[0] == 400
    assert (await api.call("GET", base + "mnt/user-data/outputs/none.txt"))[0] == 404
    assert (await api.call("GET", base + "mnt/user-data/outputs/report.txt?download=maybe"))[
        0
    ] == 422
    assert (await api.call("GET", "/api/threads/missing/artifacts/mnt/user-data/outputs/a"))[
        0
    ] == 404


# ---------------------------------------------------------------- MCP config


async def test_mcp_config_masks_validates_and_writes(api: Api) -> None:
    status, body, _ = await api.call("GET", "/api/mcp/config")
    assert (status, body) == (200, {"mcp_servers": {}})
    path = api.app.settings.agent.extensions_config
    path.write_text(json.dumps({"skills": {"pdf": {"enabled": False}}, "mcpServers": {}}))
    servers = {
        "mcp_servers": {
            "github": {
                "type": "stdio",
                "command": "npx",
                "args": ["-y", "server-github"],
                "env": {"GITHUB_TOKEN": "ghp-secret"},
            },
            "search": {
                "transport": "http",
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer s3cret"},
                "api_key": "k-secret",
            },
        }
    }
    status, body, _ = await api.call("PUT", "/api/mcp/config", json=servers)
    assert status == 200, body
    text = json.dumps(body)
    assert "ghp-secret" not in text
    assert "s3cret" not in text
    assert "k-secret" not in text
    assert body["mcp_servers"]["github"]["env"] == {"GITHUB_TOKEN": "***"}
    stored = json.loads(path.read_text())
    assert stored["skills"] == {"pdf": {"enabled": False}}  # other keys kept
    assert stored["mcpServers"]["github"]["env"]["GITHUB_TOKEN"] == "ghp-secret"
    # sending the masked config back keeps the stored secrets
    status, _, _ = await api.call("PUT", "/api/mcp/config", json=body)
    assert status == 200
    stored = json.loads(path.read_text())
    assert stored["mcpServers"]["github"]["env"]["GITHUB_TOKEN"] == "ghp-secret"
    assert stored["mcpServers"]["search"]["headers"]["Authorization"] == "Bearer s3cret"
    assert stored["mcpServers"]["search"]["api_key"] == "k-secret"
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".extensions_config")]


async def test_mcp_config_refuses_unsafe_servers(api: Api) -> None:
    path = api.app.settings.agent.extensions_config
    bad = [
        {"type": "stdio", "command": "/bin/sh"},
        {"type": "stdio", "command": "bash"},
        {"type": "stdio", "command": "npx", "args": ["-e", "process.exit()"]},
        {"type": "stdio", "command": "uvx", "env": {"LD_PRELOAD": "/x.so"}},
        {"type": "stdio"},
    ]
    for server in bad:
        status, body, _ = await api.call(
            "PUT", "/api/mcp/config", json={"mcp_servers": {"x": server}}
        )
        assert status == 400, server
        assert body["detail"].startswith("x:")
    assert not path.exists()  # refused writes change nothing
    for body in ({"servers": {}}, {"mcp_servers": {"x": {"type": "ftp"}}}, []):
        assert (await api.call("PUT", "/api/mcp/config", json=body))[0] == 422


def test_safe_names() -> None:
    from gateway.api.uploads import safe_name

    assert safe_name("report.pdf") == "report.pdf"
    assert safe_name("C:\\Users\\me\\report.pdf") == "report.pdf"
    assert safe_name("dir/sub/report.pdf") == "report.pdf"
    for bad in ("", ".", "..", ".env", "a\x00b", "a\nb", "x" * 300, "a:b"):
        assert safe_name(bad) is None, bad


async def test_uploaded_documents_are_converted(api: Api, tmp_path: Path) -> None:
    import openpyxl  # with numpy, 0.7 s: loaded by the one test that writes a workbook

    tid = await new_thread(api)
    book = openpyxl.Workbook()
    book.active.append(["city", "population"])
    book.active.append(["Oslo", 700000])
    book.save(tmp_path / "cities.xlsx")
    base = f"/api/threads/{tid}/uploads"
    status, body, _ = await api.call(
        "POST",
        base,
        data=form(
            ("cities.xlsx", (tmp_path / "cities.xlsx").read_bytes()),
            ("broken.pdf", b"not a pdf"),
            ("notes.txt", b"plain"),
        ),
    )
    assert status == 200, body
    xlsx, pdf, txt = body["files"]
    assert xlsx["markdown_file"] == "cities.xlsx.md"
    assert xlsx["markdown_virtual_path"] == "/mnt/user-data/uploads/cities.xlsx.md"
    uploads = api.app.runner.thread_dirs(tid).uploads
    assert "| Oslo | 700000 |" in (uploads / "cities.xlsx.md").read_text()
    assert (uploads / "broken.pdf").read_bytes() == b"not a pdf"  # kept, converted or not
    assert pdf["filename"] == "broken.pdf"
    assert txt["markdown_file"] is None
    status, md, _ = await api.call("GET", xlsx["markdown_artifact_url"])
    assert status == 200
    assert "Oslo" in md
    status, _, _ = await api.call("DELETE", f"{base}/cities.xlsx")
    assert status == 200
    assert not (uploads / "cities.xlsx.md").exists()
