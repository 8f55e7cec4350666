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
