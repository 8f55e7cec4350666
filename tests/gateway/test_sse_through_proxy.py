"""A run's stream through a compressing reverse proxy, as DeerFlow's web UI reaches Antler (its
Next.js server proxies `/api` with compression on): the partial answer must arrive while the
model is still writing, not all at once when the run ends. The proxy is Node's `compression`
middleware (the one Next.js uses) in front of `http-proxy`, installed beside the JS client
(`make test` does it; ANTLER_JS_SDK_DIR names the folder)."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.gateway.conftest import AUTH, Api
from tests.gateway.sse_reader import Frame, read_frames
from tests.gateway.test_deerflow_ui import submit

PROXY = Path(__file__).parent / "js" / "compressing_proxy.cjs"
JS_DIR = Path(os.environ.get("ANTLER_JS_SDK_DIR", "/nonexistent"))
pytestmark = pytest.mark.skipif(
    not (JS_DIR / "node_modules" / "compression").is_dir() or shutil.which("node") is None,
    reason="set ANTLER_JS_SDK_DIR to the folder `make test` installs the JS packages in",
)


@pytest.fixture
async def proxy(api: Api) -> AsyncIterator[str]:
    proc = await asyncio.create_subprocess_exec(
        "node",
        str(PROXY),
        cwd=JS_DIR,
        env={**os.environ, "TARGET": api.base, "NODE_PATH": str(JS_DIR / "node_modules")},
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    port = int((await asyncio.wait_for(proc.stdout.readline(), 30)).decode())
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        await proc.wait()


async def test_a_streamed_answer_is_not_held_by_a_compressing_proxy(
    api: Api, proxy: str, fake_openai: FakeOpenAI
) -> None:
    # the model writes two words, then stalls until released: what the proxy lets through
    # before the release is what a person sees while the agent works
    fake_openai.script(Reply(text="partial words and then the rest", stall_after=2))
    status, thread, _ = await api.call("POST", "/api/threads", json={})
    assert status == 200
    url = f"{proxy}/api/threads/{thread['thread_id']}/runs/stream"
    headers = {**AUTH, "Accept-Encoding": "gzip, deflate"}
    got: list[Frame] = []
    try:
        async with api.session.post(url, json=submit("hi"), headers=headers) as resp:
            assert resp.status == 200
            assert "no-transform" in resp.headers["Cache-Control"]
            frames = read_frames(resp)
            async with asyncio.timeout(30):  # fails here when the proxy holds the stream
                async for frame in frames:
                    got.append(frame)
                    if _text(got).startswith("partial"):
                        break
            fake_openai.release()
            got += [frame async for frame in frames]
    finally:
        fake_openai.release()
    assert _text(got) == "partial words and then the rest"
    assert got[-1].event == "end"


def _text(frames: list[Frame]) -> str:
    return "".join(
        f.data[0]["content"]
        for f in frames
        if f.event == "messages" and f.data[0]["type"] == "AIMessageChunk"
    )
