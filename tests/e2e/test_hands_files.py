"""Files in and out through the whole service: present_files delivers, uploads are read,
traversal is refused, tool errors do not end the run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from langchain_core.tools import tool

from channels.base import Attachment
from tests.e2e.hands_helpers import chan, outputs, service, tool_results
from tests.fakes.openai_server import FakeOpenAI, Reply, ToolCall

pytestmark = pytest.mark.usefixtures("test_channel_registered")

REPORT = "/mnt/user-data/outputs/report.md"


@tool
def explode(reason: str) -> str:
    """A configured tool that always fails."""
    raise RuntimeError(f"kaboom: {reason}")


async def test_written_file_is_presented_and_delivered(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": REPORT, "content": "# Report\nok"})]),
        Reply(tool_calls=[ToolCall("present_files", {"filepaths": [REPORT]})]),
        Reply(text="Here is your report."),
    )
    async with service(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        await ch.inject("write me a report")
        await svc.idle()
    [sent] = ch.of("file")
    assert Path(sent.text) == outputs(tmp_path).resolve() / "report.md"
    assert Path(sent.text).read_text() == "# Report\nok"
    kinds = [c.kind for c in ch.calls]
    assert kinds.index("finish") < kinds.index("file")
    assert ch.of("finish")[0].text == "Here is your report."
    assert "Presented to the user: " + REPORT in tool_results(fake_openai.requests[2])


async def test_upload_is_announced_and_read(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(
        Reply(
            tool_calls=[
                ToolCall(
                    "read_file",
                    {"path": "/mnt/user-data/uploads/data.csv", "start_line": 2, "end_line": 3},
                )
            ]
        ),
        Reply(text="Two rows."),
    )
    async with service(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        ch.files["f1"] = b"name,qty\napples,3\npears,5\nplums,7\n"
        await ch.inject("what is in it?", attachments=(Attachment(name="data.csv", ref="f1"),))
        await svc.idle()
    first, second = fake_openai.requests
    assert "/mnt/user-data/uploads/data.csv" in FakeOpenAI.user_texts(first)[-1]
    assert tool_results(second) == ["apples,3\npears,5"]
    assert ch.texts() == ["Two rows."]


async def test_traversal_attempts_are_refused(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the password")
    attempts = [
        ToolCall("read_file", {"path": "/etc/passwd"}),
        ToolCall("read_file", {"path": "/mnt/user-data/workspace/../../../../secret.txt"}),
        ToolCall("read_file", {"path": "/mnt/user-data/workspace/sneaky"}),
        ToolCall("write_file", {"path": str(secret), "content": "overwritten"}),
        ToolCall("ls", {"path": "/mnt/user-data/workspace/dir-link"}),
    ]
    async with service(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        await ch.inject("hello")  # creates the thread's directories
        await svc.idle()
        workspace = outputs(tmp_path).parent / "workspace"
        os.symlink(secret, workspace / "sneaky")
        os.symlink(tmp_path, workspace / "dir-link")
        fake_openai.script(Reply(tool_calls=attempts), Reply(text="Refused, as expected."))
        await ch.inject("try to escape")
        await svc.idle()
    results = tool_results(fake_openai.requests[-1])
    assert len(results) == len(attempts)
    assert all(r.startswith("Error: ") for r in results), results
    assert not any("the password" in r or "root:" in r for r in results)
    assert secret.read_text() == "the password"
    final = ch.of("finish")[-1]
    assert final.text == "Refused, as expected."
    assert final.doc is not None
    assert {s.state for s in final.doc.progress} == {"failed"}


async def test_tool_exception_becomes_an_error_result(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    tools = [{"name": "explode", "use": "tests.e2e.test_hands_files:explode", "group": "test"}]
    fake_openai.script(
        Reply(tool_calls=[ToolCall("explode", {"reason": "testing"})]),
        Reply(text="The tool failed, sorry."),
    )
    async with service(tmp_path, fake_openai, tools=tools) as svc:
        ch = chan(svc)
        await ch.inject("blow up")
        await svc.idle()
    assert "explode" in fake_openai.requests[0].tool_names
    [result] = tool_results(fake_openai.requests[1])
    assert result == "Error: RuntimeError: kaboom: testing"
    assert ch.texts() == ["The tool failed, sorry."]


async def test_a_file_written_by_python_in_the_sandbox_is_delivered(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    from tests.agent.sandbox_support import need_bwrap

    need_bwrap()
    code = "open('/mnt/user-data/outputs/sum.txt', 'w').write(str(sum(range(10))))\nprint('done')"
    fake_openai.script(
        Reply(tool_calls=[ToolCall("python", {"code": code})]),
        Reply(
            tool_calls=[
                ToolCall("present_files", {"filepaths": ["/mnt/user-data/outputs/sum.txt"]})
            ]
        ),
        Reply(text="The sum is in the file."),
    )
    sandbox = {"provider": "bwrap", "bash_enabled": True}
    async with service(tmp_path, fake_openai, sandbox=sandbox) as svc:
        ch = chan(svc)
        await ch.inject("sum 0..9 into a file")
        await svc.idle()
    assert tool_results(fake_openai.requests[1]) == ["done\n[exit code 0]"]
    [sent] = ch.of("file")
    assert Path(sent.text) == outputs(tmp_path).resolve() / "sum.txt"
    assert Path(sent.text).read_text() == "45"
