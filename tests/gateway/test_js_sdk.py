"""DeerFlow's UI flow through the official JS client, `@langchain/langgraph-sdk` (the one the UI
uses), when it is installed: `ANTLER_JS_SDK_DIR` names a folder where
`npm install @langchain/langgraph-sdk@1.6` was run (skipped otherwise; needs Node 20+)."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.gateway.conftest import TOKEN, Api

FLOW = Path(__file__).parent / "js" / "ui_flow.mjs"
RELOAD = Path(__file__).parent / "js" / "ui_reload.mjs"
SDK_DIR = os.environ.get("ANTLER_JS_SDK_DIR", "")
pytestmark = pytest.mark.skipif(
    not SDK_DIR
    or not (Path(SDK_DIR) / "node_modules" / "@langchain" / "langgraph-sdk").is_dir()
    or shutil.which("node") is None,
    reason="set ANTLER_JS_SDK_DIR to a folder with @langchain/langgraph-sdk installed",
)


async def test_ui_flow_through_the_js_client(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(
        Reply(text="Hello from Antler"),
        Reply(text="Second answer"),
        Reply(text="slow slow slow slow slow", stall_after=1),
    )
    env = {**os.environ, "API": api.base + "/api", "TOKEN": TOKEN}
    proc = await asyncio.create_subprocess_exec(
        "node",
        "--input-type=module",
        "-",
        cwd=SDK_DIR,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    # the third run stalls after its first chunk, whenever its model call starts: the UI stops it
    # (before or after that call, depending on how busy the machine is)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(FLOW.read_bytes()), 120)
    finally:
        fake_openai.release()
        if proc.returncode is None:
            proc.kill()
    text = out.decode()
    assert proc.returncode == 0, text
    assert text.rstrip().endswith("ALL OK"), text


async def test_reload_mid_answer_through_the_js_client(api: Api, fake_openai: FakeOpenAI) -> None:
    """The history page, then useStream's re-join of a running answer after its first words
    were streamed: they arrive at once, while the model is still stalled."""
    fake_openai.script(Reply(text="Hello"), Reply(text="one two three four", stall_after=1))
    env = {**os.environ, "API": api.base + "/api", "TOKEN": TOKEN}
    proc = await asyncio.create_subprocess_exec(
        "node",
        "--input-type=module",
        "-e",
        RELOAD.read_text(),
        cwd=SDK_DIR,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    lines: list[str] = []

    async def until_line(*prefixes: str) -> str:
        while not (lines and lines[-1].startswith((*prefixes, "FAIL"))):
            line = await asyncio.wait_for(proc.stdout.readline(), 30)  # type: ignore[union-attr]
            if not line:
                break
            lines.append(line.decode().rstrip())
        return lines[-1] if lines else ""

    try:
        assert await until_line("CREATED") == "CREATED", "\n".join(lines)
        await fake_openai.wait_requests(2)
        rec = next(iter(api.gw.runs._active.values()))
        while not any(event == "messages" for _, event, _ in rec.buffer):  # words streamed
            await asyncio.sleep(0.01)
        proc.stdin.write(b"reload\n")
        await proc.stdin.drain()
        proc.stdin.close()
        assert await until_line("PARTIAL") == "PARTIAL one", "\n".join(lines)
        fake_openai.release()
        rest, _ = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        fake_openai.release()
        if proc.returncode is None:
            proc.kill()
    text = "\n".join(lines) + "\n" + rest.decode()
    assert proc.returncode == 0, text
    assert text.rstrip().endswith("ALL OK"), text
