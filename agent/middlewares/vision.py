"""Shows a vision model the images of the latest human message, for that model call only.

The checkpoint keeps the message as text with file paths (no base64 in the history); the
request gets `image_url` content blocks (data URLs) read from the thread's uploads.
"""

from __future__ import annotations

import base64
import logging
from typing import Any

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import HumanMessage

from agent.context import RunContext
from agent.middlewares.base import RequestRewriter
from agent.uploads import host_path, image_type

log = logging.getLogger(__name__)


class VisionImages(RequestRewriter):
    def rewrite(self, request: ModelRequest) -> ModelRequest:
        context = request.runtime.context if request.runtime is not None else None
        if not isinstance(context, RunContext):
            return request
        messages = list(request.messages)
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, HumanMessage) and not _hidden(message):
                images = message.additional_kwargs.get("antler", {}).get("images") or []
                if not images:
                    return request
                messages[index] = _with_images(message, images, context)
                return request.override(messages=messages)
        return request


def _hidden(message: HumanMessage) -> bool:
    return message.additional_kwargs.get("lc_source") == "summarization"


def _with_images(message: HumanMessage, images: list[str], context: RunContext) -> HumanMessage:
    text = message.content if isinstance(message.content, str) else ""
    blocks: list[Any] = [{"type": "text", "text": text}] if text else list(message.content)
    for path in images:
        host, mime = host_path(path, context.dirs), image_type(path)
        if host is None or mime is None or not host.is_file():
            continue
        try:
            data = base64.b64encode(host.read_bytes()).decode("ascii")
        except OSError as exc:
            log.warning("image %s unreadable: %s", path, exc)
            continue
        blocks.append({"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}})
    return message.model_copy(update={"content": blocks})
