"""The fake Telegram's files: photos and documents the bot sends, files it downloads (getFile
and the file URL, per bot token)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from tests.fakes.telegram_wire import answer_error, answer_ok
from tests.fakes.threaded import Recorded


class FileSide:
    token: str
    files: dict[str, tuple[bytes, int]]
    calls: list[Recorded]
    clock: Callable[[], float]
    _others: dict[str, Any]

    def _count_visible(self, chat_id: int, now: float) -> None:
        raise NotImplementedError

    def _new_message(self, body: dict, **content: Any) -> dict[str, Any]:
        raise NotImplementedError

    async def _upload(self, body: dict, now: float, field: str) -> web.Response:
        upload = body.get(field)
        if not isinstance(upload, dict):
            return answer_error(400, f"Bad Request: there is no {field} in the request")
        self._count_visible(int(body["chat_id"]), now)
        content: dict[str, Any]
        if field == "photo":
            content = {
                "photo": [{"file_id": "p1", "file_unique_id": "u1", "width": 1, "height": 1}]
            }
        else:
            content = {"document": {"file_id": "d1", "file_unique_id": "u2",
                                    "file_name": upload["filename"]}}  # fmt: skip
        return answer_ok(self._new_message(body, **content))

    async def _m_sendPhoto(self, body: dict, now: float) -> web.Response:
        return await self._upload(body, now, "photo")

    async def _m_sendDocument(self, body: dict, now: float) -> web.Response:
        return await self._upload(body, now, "document")

    async def _m_getFile(self, body: dict, now: float) -> web.Response:
        file_id = str(body.get("file_id"))
        if file_id not in self.files:
            return answer_error(400, "Bad Request: invalid file_id")
        _, size = self.files[file_id]
        result = {"file_id": file_id, "file_unique_id": f"u-{file_id}", "file_size": size}
        if size <= 20 * 1024 * 1024:
            result["file_path"] = f"files/{file_id}"
        return answer_ok(result)

    async def _download(self, request: web.Request) -> web.Response:
        bot = self._others.get(request.match_info["token"], self)  # the bot of that token
        bot.calls.append(Recorded("download", request.path, {}, at=self.clock()))
        file_id = request.match_info["path"].removeprefix("files/")
        if request.match_info["token"] != bot.token or file_id not in bot.files:
            return web.Response(status=404)
        return web.Response(body=bot.files[file_id][0])
