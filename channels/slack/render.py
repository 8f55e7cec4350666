"""ReplyDoc -> Slack payloads: markdown blocks, mrkdwn fallback text, buttons, splitting. Pure."""

from __future__ import annotations

from typing import Any

from channels.base import Button, ReplyDoc, ToolStep
from channels.slack.mrkdwn import to_mrkdwn
from channels.text import split_text, truncate

# A markdown block holds 12,000 chars (cumulative per message); a streaming call the same.
MARKDOWN_BLOCK_LIMIT = 12_000
STREAM_CHUNK_LIMIT = 12_000
# The `text` fallback (notifications, old clients) is truncated by Slack above 40,000.
FALLBACK_LIMIT = 3_000
MAX_BUTTONS = 25  # an actions block holds 25 elements
BUTTON_LABEL_LIMIT = 75
BUTTON_VALUE_LIMIT = 2_000

_STEP_ICON = {"running": ":hourglass_flowing_sand:", "done": ":white_check_mark:", "failed": ":x:"}
_NOTE_STATUS = {"failed": ":warning:", "cancelled": ":no_entry_sign:", "queued": ":hourglass:"}


def md_to_mrkdwn(text: str) -> str:
    """The model's markdown as Slack mrkdwn (parsed once, channels/markdown.py)."""
    return to_mrkdwn(text)


def progress_lines(steps: tuple[ToolStep, ...]) -> str:
    return "\n".join(f"{_STEP_ICON.get(s.state, '')} {s.label}".strip() for s in steps)


def status_text(doc: ReplyDoc) -> str:
    """The assistant status line ("is thinking...", "is running web_search...")."""
    running = [s for s in doc.progress if s.state == "running"]
    if running:
        return doc.labels.running_status.format(tool=running[-1].label)[:50]
    return doc.labels.thinking_status


def body_markdown(doc: ReplyDoc, *, offset: int = 0) -> str:
    """The visible markdown of a reply (text from `offset`), tool steps above it while working."""
    text = doc.text[offset:]
    parts = []
    if doc.progress and not doc.final:
        parts.append(progress_lines(doc.progress))
    if text.strip():
        parts.append(text)
    elif doc.status == "working" and not doc.progress:
        parts.append(f"_{doc.labels.working}_")
    if doc.note:
        parts.append(f"{_NOTE_STATUS.get(doc.status, '')} _{doc.note}_".strip())
    return "\n\n".join(parts) or "…"


def button_block(buttons: tuple[Button, ...]) -> dict[str, Any]:
    return {
        "type": "actions",
        "block_id": "antler_buttons",
        "elements": [
            {
                "type": "button",
                "action_id": f"antler_btn_{i}",
                "text": {"type": "plain_text", "text": b.label[:BUTTON_LABEL_LIMIT] or "?"},
                "value": b.value[:BUTTON_VALUE_LIMIT],
            }
            for i, b in enumerate(buttons[:MAX_BUTTONS])
        ],
    }


def markdown_blocks(markdown: str) -> list[dict[str, Any]]:
    # The service splits final text to max_text_len (below this limit); only a working
    # display with long tool progress can exceed it, and that is cut, never a final.
    return [{"type": "markdown", "text": truncate(markdown, MARKDOWN_BLOCK_LIMIT)}]


def message_payload(doc: ReplyDoc, *, offset: int = 0) -> dict[str, Any]:
    """`text` + `blocks` for chat.postMessage / chat.update."""
    markdown = body_markdown(doc, offset=offset)
    blocks = markdown_blocks(markdown)
    if doc.buttons:
        blocks.append(button_block(doc.buttons))
    return {"text": fallback_text(markdown), "blocks": blocks}


def text_payload(text: str) -> dict[str, Any]:
    return {"text": fallback_text(text), "blocks": markdown_blocks(text or "…")}


def fallback_text(markdown: str) -> str:
    """The notification text: the head of the reply as mrkdwn (only the head is parsed, since
    it is redrawn with every update and cut to FALLBACK_LIMIT anyway)."""
    mrkdwn = md_to_mrkdwn(markdown[: FALLBACK_LIMIT * 2])
    return mrkdwn if len(mrkdwn) <= FALLBACK_LIMIT else mrkdwn[: FALLBACK_LIMIT - 1] + "…"


def final_extras(doc: ReplyDoc) -> list[dict[str, Any]]:
    """Blocks appended when a native stream stops: the note and the buttons."""
    blocks: list[dict[str, Any]] = []
    if doc.note:
        note = f"{_NOTE_STATUS.get(doc.status, '')} _{doc.note}_".strip()
        blocks.append({"type": "markdown", "text": note})
    if doc.buttons:
        blocks.append(button_block(doc.buttons))
    return blocks


def stream_pieces(delta: str) -> list[str]:
    """A text delta cut to the per-call limit of the streaming methods."""
    return [delta[i : i + STREAM_CHUNK_LIMIT] for i in range(0, len(delta), STREAM_CHUNK_LIMIT)]


def split_for_slack(text: str, limit: int = MARKDOWN_BLOCK_LIMIT) -> list[str]:
    return split_text(text, limit)
