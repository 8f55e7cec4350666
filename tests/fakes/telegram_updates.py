"""What users send the fake Telegram: chats, messages and button presses, queued as updates for
`getUpdates` (a part of `FakeTelegram`, tests/fakes/telegram_server.py)."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

from tests.fakes.threaded import ThreadedServer


class UserSide:
    """The user's side of `FakeTelegram`: what it needs of the fake is declared here."""

    chats: dict[int, dict[str, Any]]
    updates: list[dict[str, Any]]
    bot_user: dict[str, Any]
    server: ThreadedServer
    _ids: itertools.count[int]
    _message_ids: itertools.count[int]
    _new_update: asyncio.Event | None

    def chat(self, chat_id: int, chat_type: str | None = None, *, forum: bool = False) -> dict:
        kind = chat_type or ("private" if chat_id > 0 else "supergroup")
        chat: dict[str, Any] = {"id": chat_id, "type": kind}
        if kind == "private":
            chat["first_name"] = "Ada"
        else:
            chat["title"] = f"group {chat_id}"
            chat["is_forum"] = forum
        self.chats.setdefault(chat_id, chat)
        return self.chats[chat_id]

    def push_update(self, update: dict[str, Any]) -> dict[str, Any]:
        update.setdefault("update_id", next(self._ids))
        self.updates.append(update)
        assert self._new_update is not None
        self.server.call_soon(self._new_update.set)
        return update

    def message(self, chat_id: int, text: str | None = None, *, user_id: int = 42,
                thread_id: int | None = None, reply_to: dict | None = None,
                message_id: int | None = None, **extra: Any) -> dict[str, Any]:  # fmt: skip
        """A Bot API Message as a user sends it."""
        msg: dict[str, Any] = {
            "message_id": message_id or next(self._message_ids),
            "date": int(time.time()),
            "chat": self.chat(chat_id, forum=thread_id is not None),
            "from": {
                "id": user_id,
                "is_bot": False,
                "first_name": "Ada",
                "username": f"u{user_id}",
            },
        }
        if text is not None:
            msg["text"] = text
        if thread_id is not None:
            msg["message_thread_id"] = thread_id
            msg["is_topic_message"] = True
        if reply_to is not None:
            msg["reply_to_message"] = reply_to
        msg.update(extra)
        return msg

    def push_message(self, chat_id: int, text: str | None = None, **kwargs: Any) -> dict:
        return self.push_update({"message": self.message(chat_id, text, **kwargs)})

    def push_edit(self, message: dict[str, Any], text: str) -> dict[str, Any]:
        """The user edits `message` (as `message` or `push_message` made it) to `text`: an
        `edited_message` update with a later `edit_date` than any edit before (returned: the
        edited message, to edit again or to redeliver with `push_update`)."""
        edit_date = max(int(time.time()), int(message.get("edit_date") or 0) + 1)
        edited = {**message, "text": text, "edit_date": edit_date}
        self.push_update({"edited_message": edited})
        return edited

    def push_callback(self, chat_id: int, message_id: int, data: str, *, user_id: int = 42,
                      thread_id: int | None = None) -> dict:  # fmt: skip
        query: dict[str, Any] = {
            "id": f"cq{next(self._ids)}",
            "from": {"id": user_id, "is_bot": False, "first_name": "Ada"},
            "chat_instance": "ci",
            "data": data,
            "message": {"message_id": message_id, "date": int(time.time()),
                        "chat": self.chat(chat_id, forum=thread_id is not None),
                        "from": self.bot_user, "text": "…"},
        }  # fmt: skip
        if thread_id is not None:
            query["message"] |= {"message_thread_id": thread_id, "is_topic_message": True}
        return self.push_update({"callback_query": query})
