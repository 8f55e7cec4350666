"""DeerFlow's web UI against Antler, the calls issue 33 found failing, replayed over raw HTTP as
the UI makes them: the upload note hidden from the person's bubble, titles, the messages page,
a reload mid-run, the settings pages (MCP toggle, memory, channels, integrations), features,
token usage and scheduled tasks. Answers are validated against DeerFlow's shapes
(deerflow_shapes.py)."""

from __future__ import annotations

import aiohttp

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.gateway import deerflow_shapes as df
from tests.gateway.conftest import Api
from tests.gateway.test_deerflow_ui import LG, check_run_stream, ok, stream, submit


async def test_upload_note_is_hidden_from_the_bubble(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="Read them"))
    tid = (await api.call("POST", f"{LG}/threads", json={}))[1]["thread_id"]
    form = aiohttp.FormData()
    form.add_field("files", b"buy milk", filename="notes.txt", content_type="text/plain")
    info = (await ok(api, "POST", f"/api/threads/{tid}/uploads", df.UploadResponse, data=form))[
        "files"
    ][0]
    files = [{"filename": "notes.txt", "size": info["size"], "path": info["virtual_path"]}]
    got, _ = await stream(api, tid, submit("read my notes", files))
    check_run_stream(got, tid)
    state = await ok(api, "GET", f"{LG}/threads/{tid}/state", df.ThreadState)
    human = next(m for m in state["values"]["messages"] if m["type"] == "human")
    assert df.bubble_text(df.text_of(human)) == "read my notes"  # the note is not in the bubble
    assert human["additional_kwargs"]["files"] == files  # the chip
    assert "/mnt/user-data/uploads/notes.txt" in df.text_of(human)  # the model still reads it
