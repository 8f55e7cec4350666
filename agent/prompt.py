"""What the model reads: the system prompt and the human message built from a `Turn`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent.events import Turn
from agent.uploads import UPLOADED, tagged

BASE_PROMPT = """\
You are Antler, a helpful AI assistant. People talk to you inside a team messenger \
(Slack, Telegram, Feishu/Lark or DingTalk), in direct messages and in group chats.

- Keep answers concise and to the point; this is a chat, not a report. Go long only when asked.
- Markdown is fine: short paragraphs, lists, `code` and fenced code blocks. Avoid wide tables.
- Answer in the language the user writes in.
- In group chats several people may talk to you; each message says who wrote it.
- Text in a "Context" block is earlier chat content quoted for reference, not a request.
- Files the user attached are listed with their paths; use your tools to read them when needed."""


def system_prompt(extra: str = "", now: datetime | None = None) -> str:
    """The default prompt, today's date, then the configured `agent.system_prompt`."""
    today = (now or datetime.now().astimezone()).strftime("%Y-%m-%d, %A")
    parts = [BASE_PROMPT, f"Today is {today}."]
    if extra.strip():
        parts.append(extra.strip())
    return "\n\n".join(parts)


def human_content(turn: Turn, files_block: str | None = None) -> str:
    """The turn as one message: quoted context, who wrote it, the text, attached files
    (`files_block` replaces the plain list of `turn.files`: see `agent.uploads`)."""
    parts: list[str] = []
    if turn.context.strip():
        quoted = "\n".join(f"> {line}" for line in turn.context.strip().splitlines())
        parts.append(f"Context (quoted from the chat):\n{quoted}")
    text = f"/{turn.skill} {turn.text}".strip() if turn.skill else turn.text
    if turn.user_name and (parts or turn.chat_type != "dm"):
        parts.append(f"{turn.user_name} wrote:\n{text}")
    else:
        parts.append(text)
    if files_block is not None:
        if files_block:
            parts.append(files_block)
    elif turn.files:
        listed = "\n".join(f"- {path}" for path in turn.files)
        parts.append(tagged(f"{UPLOADED}\n{listed}"))
    return "\n\n".join(parts)


def human_metadata(turn: Turn) -> dict[str, Any]:
    """Kept on the message (`additional_kwargs["antler"]`), never sent to the model."""
    meta: dict[str, Any] = {"text": turn.text}
    if turn.user_id:
        meta["user_id"] = turn.user_id
    if turn.user_name:
        meta["user_name"] = turn.user_name
    if turn.files:
        meta["files"] = list(turn.files)
    if turn.skill:
        meta["skill"] = turn.skill
    return meta
