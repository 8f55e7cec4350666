"""Where DingTalk's OpenAPI lives: the ONE place that points dingtalk-stream at `api_base`.

dingtalk-stream has no constructor option for its endpoint. It reads `DINGTALK_OPENAPI_ENDPOINT`
from the environment once, at import, and `from .utils import ...` copies the value into the
modules `stream`, `chatbot` and `card_replier`; `DingTalkStreamClient.OPEN_CONNECTION_API` is a
class attribute built from it at import too. `apply_sdk_endpoint` rewrites all five. It is
process-wide: every DingTalk channel in one process must share one `api_base`.
"""

from __future__ import annotations

import dingtalk_stream
import dingtalk_stream.card_replier
import dingtalk_stream.chatbot
import dingtalk_stream.stream
import dingtalk_stream.utils

from channels.dingtalk.config import DEFAULT_API_BASE, DingTalkConfig

OFFICIAL_UPLOAD_BASE = "https://oapi.dingtalk.com"
_SDK_MODULES = (
    dingtalk_stream.utils,
    dingtalk_stream.stream,
    dingtalk_stream.chatbot,
    dingtalk_stream.card_replier,
)


def apply_sdk_endpoint(api_base: str) -> None:
    """Point every endpoint constant of dingtalk-stream at `api_base`."""
    base = api_base.rstrip("/")
    for module in _SDK_MODULES:
        module.DINGTALK_OPENAPI_ENDPOINT = base
    dingtalk_stream.DingTalkStreamClient.OPEN_CONNECTION_API = (
        base + "/v1.0/gateway/connections/open"
    )


def open_connection_url() -> str:
    """The gateway URL the SDK would use (after `apply_sdk_endpoint`)."""
    return str(dingtalk_stream.DingTalkStreamClient.OPEN_CONNECTION_API)


def upload_base(config: DingTalkConfig) -> str:
    """Media upload lives on the legacy `oapi` host in production, else on `api_base`."""
    if config.upload_base:
        return config.upload_base
    if config.api_base == DEFAULT_API_BASE:
        return OFFICIAL_UPLOAD_BASE
    return config.api_base
