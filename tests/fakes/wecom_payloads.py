"""What the fake WeCom sends: callback bodies, encrypted media, and what a chat shows.

Media are encrypted as WeCom does: AES-256-CBC, the IV the key's first 16 bytes, PKCS#7 padding
to a multiple of 32 bytes, the key sent in base64 without its `=` (43 characters).
"""

from __future__ import annotations

import base64
import itertools
import os
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

BOT_ID = "aib-contract-bot"
SECRET = "wecom-secret-4242"
USER = "zhangsan"
GROUP = "wrkSFfCgAAxxxx"
_ids = itertools.count(1)


def encrypt(data: bytes) -> tuple[bytes, str]:
    """`data` encrypted with a fresh key, and the key as WeCom sends it."""
    key = os.urandom(32)
    pad = 32 - len(data) % 32
    padded = data + bytes([pad]) * pad
    encryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    cipher = encryptor.update(padded) + encryptor.finalize()
    return cipher, base64.b64encode(key).decode().rstrip("=")


def _base(user: str, chatid: str | None, msgtype: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "msgid": f"msg-{next(_ids)}",
        "aibotid": BOT_ID,
        "chattype": "group" if chatid else "single",
        "from": {"userid": user},
        "msgtype": msgtype,
    }
    if chatid:
        body["chatid"] = chatid
    return body


def text_body(text: str, *, user: str = USER, chatid: str | None = None) -> dict[str, Any]:
    """A text message (in a group WeCom keeps the @-mention in the text)."""
    body = _base(user, chatid, "text")
    body["text"] = {"content": f"@Antler {text}" if chatid else text}
    return body


def media_body(
    kind: str, url: str, aeskey: str, *, user: str = USER, chatid: str | None = None
) -> dict[str, Any]:
    body = _base(user, chatid, kind)
    body[kind] = {"url": url, "aeskey": aeskey}
    return body


def mixed_body(items: list[dict[str, Any]], *, user: str = USER) -> dict[str, Any]:
    body = _base(user, None, "mixed")
    body["mixed"] = {"msg_item": items}
    return body


def press_body(
    task_id: str, key: str, *, user: str = USER, chatid: str | None = None
) -> dict[str, Any]:
    body = _base(user, chatid, "event")
    body["event"] = {
        "eventtype": "template_card_event",
        "template_card_event": {
            "card_type": "button_interaction",
            "event_key": key,
            "task_id": task_id,
        },
    }
    return body


def shown_text(entry: dict[str, Any]) -> str | None:
    """The text a chat shows for one message of `FakeWeCom.messages` (None: a card or file)."""
    if entry["kind"] == "stream":
        frames = entry["frames"]
        return str(frames[-1]["content"]).strip() if frames else ""
    if entry["kind"] == "markdown":
        return str(entry["content"]).strip()
    return None
