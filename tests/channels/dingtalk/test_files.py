"""Files in (download code -> URL -> bytes, size limit) and out (upload + robot message)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from channels.base import FileTooLarge
from tests.channels.dingtalk.conftest import MakeChannel, reply_to_dm
from tests.fakes.dingtalk_server import FakeDingTalk


async def test_picture_is_downloaded_into_the_uploads_dir(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk, tmp_path: Path
) -> None:
    channel, ctx = await make_channel()
    fake_dingtalk.files["code-1"] = b"\x89PNG fake image bytes"
    data = fake_dingtalk.chatbot_data(
        msgtype="picture", msg_id="m-pic", content={"downloadCode": "code-1"}
    )
    fake_dingtalk.push_message(data)
    [msg] = await fake_dingtalk.until(lambda: ctx.published)
    [att] = msg.attachments
    assert att.kind == "image"
    uploads = tmp_path / "uploads"
    path = await channel.fetch_file(msg, att, uploads)
    assert path.parent == uploads
    assert path.read_bytes() == b"\x89PNG fake image bytes"
    [asked] = fake_dingtalk.requests("POST", "/v1.0/robot/messageFiles/download")
    assert asked.body == {"downloadCode": "code-1", "robotCode": "robot-code"}
    again = await channel.fetch_file(msg, att, uploads)
    assert again != path
    assert again.exists()


async def test_file_over_the_limit_is_refused_and_not_kept(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk, tmp_path: Path
) -> None:
    channel, ctx = await make_channel(max_file_mb=0.001)
    fake_dingtalk.files["big"] = b"x" * 5000
    content = {"downloadCode": "big", "fileName": "../../report.pdf"}
    fake_dingtalk.push_message(fake_dingtalk.chatbot_data(msgtype="file", content=content))
    [msg] = await fake_dingtalk.until(lambda: ctx.published)
    assert msg.attachments[0].name == "../../report.pdf"
    with pytest.raises(FileTooLarge, match=r"report\.pdf"):
        await channel.fetch_file(msg, msg.attachments[0], tmp_path / "up")
    assert list((tmp_path / "up").iterdir()) == []


async def test_the_service_limit_applies_when_lower(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk, tmp_path: Path
) -> None:
    channel, ctx = await make_channel()  # the channel's own limit: 20 MB
    fake_dingtalk.files["mid"] = b"x" * 5000
    content = {"downloadCode": "mid", "fileName": "data.csv"}
    fake_dingtalk.push_message(fake_dingtalk.chatbot_data(msgtype="file", content=content))
    [msg] = await fake_dingtalk.until(lambda: ctx.published)
    with pytest.raises(FileTooLarge, match=r"data\.csv"):
        await channel.fetch_file(msg, msg.attachments[0], tmp_path / "up", limit=1024)
    assert list((tmp_path / "up").iterdir()) == []


async def test_files_out_are_uploaded_and_sent(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk, tmp_path: Path
) -> None:
    channel, handle = await reply_to_dm(make_channel, fake_dingtalk, "make a chart")
    chart = tmp_path / "chart.png"
    chart.write_bytes(b"png" * 100)
    report = tmp_path / "report.csv"
    report.write_text("a,b\n1,2\n")
    await channel.send_file(handle, chart)
    await channel.send_file(handle, report)
    image_up, file_up = fake_dingtalk.uploads
    assert (image_up["type"], image_up["filename"], image_up["size"]) == ("image", "chart.png", 300)
    assert image_up["query"]["access_token"] in fake_dingtalk.tokens
    assert (file_up["type"], file_up["filename"]) == ("file", "report.csv")
    image_msg, file_msg = fake_dingtalk.robot_messages()
    assert image_msg["msgKey"] == "sampleImageMsg"
    assert json.loads(image_msg["msgParam"]) == {"photoURL": image_up["media_id"]}
    assert file_msg["msgKey"] == "sampleFile"
    assert json.loads(file_msg["msgParam"]) == {
        "mediaId": file_up["media_id"],
        "fileName": "report.csv",
        "fileType": "csv",
    }


async def test_upload_error_is_raised(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk, tmp_path: Path
) -> None:
    channel, handle = await reply_to_dm(make_channel, fake_dingtalk, "x")
    fake_dingtalk.fail("POST", "/media/upload", 200, {"errcode": 40004, "errmsg": "bad type"})
    path = tmp_path / "a.txt"
    path.write_text("hello")
    with pytest.raises(Exception, match="40004"):
        await channel.send_file(handle, path)
    assert fake_dingtalk.robot_messages() == []
