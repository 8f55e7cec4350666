"""Files attached to an API run (`additional_kwargs.files`, as DeerFlow's UI sends them after
uploading) reach the agent as chat uploads do: documents converted and inlined, images shown
to a vision model; files that were not uploaded are refused with a clear 422."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.fakes.documents import PNG_PIXEL, make_docx
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, text_of
from tests.fakes.openai_wire import Reply
from tests.gateway.conftest import Api, served_api
from tests.gateway.test_sdk import client


def form(name: str, content: bytes) -> aiohttp.FormData:
    data = aiohttp.FormData()
    data.add_field("files", content, filename=name, content_type="application/octet-stream")
    return data


def message(text: str, *files: dict[str, Any]) -> dict[str, Any]:
    return {
        "messages": [
            {
                "type": "human",
                "content": [{"type": "text", "text": text}],
                "additional_kwargs": {"files": list(files)},
            }
        ]
    }


def last_user(request: ChatRequest) -> Any:
    return [m for m in request.messages if m["role"] == "user"][-1]["content"]


async def upload(api: Api, tid: str, name: str, content: bytes) -> dict[str, Any]:
    status, body, _ = await api.call(
        "POST", f"/api/threads/{tid}/uploads", data=form(name, content)
    )
    assert status == 200, body
    info: dict[str, Any] = body["files"][0]
    return {"filename": info["filename"], "size": info["size"], "path": info["virtual_path"]}


async def test_uploaded_document_reaches_the_agent(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="Friday."))
    sdk = client(api)
    tid = "ui-thread-docs"  # the UI uploads before the thread exists
    attached = await upload(
        api, tid, "plan.docx", make_docx("Project Falcon", ["The launch is on Friday."])
    )
    result = await sdk.runs.wait(tid, "lead_agent", input=message("when is the launch?", attached))
    assert result["messages"][-1]["content"] == "Friday."
    seen = text_of(last_user(fake_openai.last_request))
    assert "when is the launch?" in seen
    assert "/mnt/user-data/uploads/plan.docx" in seen
    assert "The launch is on Friday." in seen  # converted and inlined, as for chat uploads
    human = [m for m in result["messages"] if m["type"] == "human"][-1]
    assert human["additional_kwargs"]["files"] == [attached]  # the UI shows its attachments


async def test_image_reaches_a_vision_model(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> None:
    base = {"api_key": "sk-test", "base_url": fake_openai.base_url, "max_retries": 0}
    models = [{"name": "eyes", "model": "fake-eyes", "supports_vision": True, **base}]
    async with served_api(tmp_path, fake_openai, models=models) as api:
        tid = (await client(api).threads.create())["thread_id"]
        attached = await upload(api, tid, "pixel.png", PNG_PIXEL)
        await client(api).runs.wait(tid, "lead_agent", input=message("what is this?", attached))
    parts = last_user(fake_openai.last_request)
    images = [p for p in parts if isinstance(p, dict) and p.get("type") == "image_url"]
    assert len(images) == 1
    assert images[0]["image_url"]["url"].startswith("data:image/png;base64,")


@pytest.mark.parametrize(
    "files",
    [
        [{"filename": "never.txt", "path": "/mnt/user-data/uploads/never.txt"}],
        [{"filename": "x", "path": "/mnt/user-data/outputs/x"}],
        [{"filename": "x", "path": "/mnt/user-data/uploads/../../../etc/passwd"}],
        [{"size": 3}],
        "not-a-list",
    ],
)
async def test_files_not_uploaded_are_refused(api: Api, files: Any) -> None:
    tid = (await client(api).threads.create())["thread_id"]
    body = {
        "input": {
            "messages": [{"type": "human", "content": "hi", "additional_kwargs": {"files": files}}]
        }
    }
    status, detail, _ = await api.call("POST", f"/api/threads/{tid}/runs/wait", json=body)
    assert status == 422, detail
    assert "files" in str(detail)
