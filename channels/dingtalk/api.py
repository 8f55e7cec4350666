"""DingTalk OpenAPI over aiohttp, on the service loop: token, robot send, webhooks, cards, files.

dingtalk-stream's own REST helpers use blocking `requests` and only log failures, so Antler calls
the OpenAPI itself and checks every response: HTTP 429 or a throttling code -> RateLimited, other
errors -> ChannelError (retryable for 5xx).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import aiohttp

from channels.base import ChannelError, FileTooLarge, RateLimited
from channels.dingtalk.config import DingTalkConfig
from channels.dingtalk.endpoint import upload_base

log = logging.getLogger("channels.dingtalk.api")

TOKEN_MARGIN = 300.0
"""Refresh the access token this many seconds before it expires (at most half its lifetime)."""
_THROTTLE_MARKERS = ("qpslimit", "throttl", "ratelimit", "flowcontrol", "toofast")
_WEBHOOK_THROTTLE_CODES = {130101, 130102, 90018}


class DingTalkApi:
    """One aiohttp session plus the cached app access token."""

    def __init__(self, config: DingTalkConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._clock = clock
        self._session: aiohttp.ClientSession | None = None
        self._token = ""
        self._token_until = 0.0
        self._token_lock = asyncio.Lock()

    async def start(self) -> None:
        timeout = aiohttp.ClientTimeout(total=self.config.http_timeout)
        self._session = aiohttp.ClientSession(timeout=timeout, trust_env=False)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise ChannelError("dingtalk channel is not started")
        return self._session

    # ------------------------------------------------------------------ access token

    async def access_token(self) -> str:
        async with self._token_lock:
            if self._token and self._clock() < self._token_until:
                return self._token
            body = {
                "appKey": self.config.client_id,
                "appSecret": self.config.client_secret.get_secret_value(),
            }
            data = await self._send("POST", self._url("/v1.0/oauth2/accessToken"), json=body)
            token = data.get("accessToken")
            if not isinstance(token, str) or not token:
                raise ChannelError("dingtalk: access token response without accessToken")
            lifetime = float(data.get("expireIn") or 7200)
            self._token = token
            self._token_until = self._clock() + lifetime - min(TOKEN_MARGIN, lifetime / 2)
            return token

    def forget_token(self) -> None:
        self._token, self._token_until = "", 0.0

    # ------------------------------------------------------------------ calls

    async def call(self, method: str, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """An OpenAPI call with the token header; a 401 refreshes the token once."""
        for attempt in (1, 2):
            headers = {"x-acs-dingtalk-access-token": await self.access_token()}
            try:
                return await self._send(method, self._url(path), json=body, headers=headers)
            except _Unauthorized:
                self.forget_token()
                if attempt == 2:
                    raise ChannelError(f"dingtalk {path}: unauthorized") from None
        raise AssertionError("unreachable")

    async def post_webhook(self, url: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """A session-webhook reply; success is `errcode == 0`."""
        return await self._send("POST", url, json=body)

    async def robot_send(self, chat_type: str, chat_id: str, key: str, param: Mapping) -> None:
        """Send a robot message to a DM (staff id) or a group (open conversation id)."""
        body: dict[str, Any] = {
            "robotCode": self.config.robot,
            "msgKey": key,
            "msgParam": json.dumps(param, ensure_ascii=False),
        }
        if chat_type == "group":
            body["openConversationId"] = chat_id
            await self.call("POST", "/v1.0/robot/groupMessages/send", body)
            return
        body["userIds"] = [chat_id]
        data = await self.call("POST", "/v1.0/robot/oToMessages/batchSend", body)
        if data.get("flowControlledStaffIdList"):
            raise RateLimited(1.0, scope="chat")
        if data.get("invalidStaffIdList"):
            raise ChannelError(f"dingtalk: invalid staff id {chat_id}")

    # ------------------------------------------------------------------ files

    async def download(self, code: str, dest: Path, limit: int) -> Path:
        """Exchange a downloadCode for a URL and stream the file to `dest` (<= limit bytes)."""
        body = {"downloadCode": code, "robotCode": self.config.robot}
        data = await self.call("POST", "/v1.0/robot/messageFiles/download", body)
        url = data.get("downloadUrl")
        if not isinstance(url, str) or not url:
            raise ChannelError("dingtalk: download response without downloadUrl")
        async with self.session.get(url) as resp:
            if resp.status != 200:
                raise ChannelError(f"dingtalk: file download failed: HTTP {resp.status}")
            if resp.content_length is not None and resp.content_length > limit:
                raise FileTooLarge(dest.name, resp.content_length, limit)
            await _stream_to(resp, dest, limit)
        return dest

    async def upload(self, path: Path, media_type: str) -> str:
        """Upload a file as robot media (`image` or `file`); returns the media id."""
        token = await self.access_token()
        url = f"{upload_base(self.config)}/media/upload"
        content = await asyncio.to_thread(path.read_bytes)
        form = aiohttp.FormData()
        form.add_field("type", media_type)
        form.add_field("media", content, filename=path.name)
        params = {"access_token": token, "type": media_type}
        data = await self._send("POST", url, data=form, params=params)
        media_id = data.get("media_id") or data.get("mediaId")
        if not isinstance(media_id, str) or not media_id:
            raise ChannelError("dingtalk: upload response without media_id")
        return media_id

    # ------------------------------------------------------------------ plumbing

    def _url(self, path: str) -> str:
        return self.config.api_base + path

    async def _send(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        try:
            async with self.session.request(method, url, **kwargs) as resp:
                text = await resp.text()
                return check_response(resp.status, resp.headers, text, url)
        except aiohttp.ClientError as exc:
            raise ChannelError(f"dingtalk: {type(exc).__name__}: {exc}", retryable=True) from exc
        except TimeoutError as exc:
            raise ChannelError("dingtalk: request timed out", retryable=True) from exc


class _Unauthorized(ChannelError):
    pass


def check_response(status: int, headers: Mapping[str, str], text: str, url: str) -> dict[str, Any]:
    """Turn one HTTP response into its JSON body, or the matching error."""
    data = _json(text)
    code = str(data.get("code") or "")
    where = url.split("?", 1)[0].rsplit("/", 2)[-2:]
    what = f"dingtalk {'/'.join(where)}"
    if status == 429 or _throttled(code):
        raise RateLimited(_retry_after(headers), scope="bot")
    if status == 401:
        raise _Unauthorized(f"{what}: unauthorized")
    if status >= 400:
        message = data.get("message") or text[:200]
        raise ChannelError(f"{what}: HTTP {status} {code} {message}", retryable=status >= 500)
    errcode = data.get("errcode")
    if isinstance(errcode, int) and errcode != 0:
        if errcode in _WEBHOOK_THROTTLE_CODES:
            raise RateLimited(_retry_after(headers), scope="chat")
        raise ChannelError(f"{what}: errcode {errcode} {data.get('errmsg', '')}")
    return data


def _throttled(code: str) -> bool:
    low = code.lower().replace(".", "").replace("_", "")
    return any(marker in low for marker in _THROTTLE_MARKERS)


def _retry_after(headers: Mapping[str, str]) -> float:
    try:
        return max(0.1, float(headers.get("Retry-After", "1")))
    except ValueError:
        return 1.0


def _json(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


async def _stream_to(resp: aiohttp.ClientResponse, dest: Path, limit: int) -> None:
    size = 0
    try:
        with dest.open("wb") as fh:
            async for chunk in resp.content.iter_chunked(64 * 1024):
                size += len(chunk)
                if size > limit:
                    raise FileTooLarge(dest.name, size, limit)
                fh.write(chunk)
    except BaseException:
        _discard(dest)
        raise


def _discard(path: Path) -> None:
    path.unlink(missing_ok=True)
