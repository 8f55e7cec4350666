"""ReplyDoc -> DingTalk text (pure): AI-card markdown and the robot markdown dialect.

AI cards render ordinary markdown. Robot `sampleMarkdown` / session-webhook markdown renders only
a subset (headings, bold, links, lists, quotes, images): fenced code, tables and horizontal rules
are rewritten here into what it does show. Buttons become `dtmd://` links that make the DingTalk
client send the button's value as the user's own message.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from channels.base import Button, ReplyDoc, ToolStep

_STEP_ICON = {"running": "⏳", "done": "✅", "failed": "❌"}
_STATUS_LINE = {
    "queued": "⏳ Queued: I'll answer after the current reply.",
    "working": "⏳ Working on it…",
    "cancelled": "⏹ Stopped.",
    "failed": "⚠️ Something went wrong.",
}
_FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+#.-]*)\s*$")
_HR = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
RULE = "———————————"


def card_text(doc: ReplyDoc) -> str:
    """The whole visible reply as markdown: progress, text, note, status, buttons."""
    blocks = [_progress(doc.progress)] if doc.progress else []
    if doc.text:
        blocks.append(doc.text)
    elif doc.status in _STATUS_LINE:
        blocks.append(_STATUS_LINE[doc.status])
    if doc.text and doc.status in ("failed", "cancelled"):
        blocks.append(_STATUS_LINE[doc.status])
    if doc.note:
        blocks.append(f"_{doc.note}_")
    if doc.buttons:
        blocks.append(button_links(doc.buttons))
    return "\n\n".join(b for b in blocks if b)


def markdown_text(doc: ReplyDoc) -> str:
    """The reply for a robot markdown message."""
    return adapt_markdown(card_text(doc))


def title_of(text: str, default: str) -> str:
    """The notification title DingTalk shows in the chat list (first words of the text)."""
    first = next((ln.strip("#>*_ ") for ln in text.splitlines() if ln.strip()), "")
    return (first[:30] or default) if first and not first.startswith("```") else default


def _progress(steps: tuple[ToolStep, ...]) -> str:
    return "\n".join(f"- {_STEP_ICON[s.state]} {s.label}" for s in steps)


def button_links(buttons: tuple[Button, ...]) -> str:
    links = (
        f"[{b.label}](dtmd://dingtalkclient/sendMessage?content={quote(b.value, safe='')})"
        for b in buttons
    )
    return " · ".join(links)


def adapt_markdown(text: str) -> str:
    """Rewrite code blocks, tables and rules into the DingTalk robot markdown subset."""
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            i = _code_block(lines, i, fence.group(1), fence.group(2), out)
        elif _is_table_start(lines, i):
            i = _table(lines, i, out)
        elif _HR.match(line):
            out.append(RULE)
            i += 1
        else:
            out.append(_INLINE_CODE.sub(r"**\1**", line))
            i += 1
    return "\n".join(out)


def _code_block(lines: list[str], start: int, marker: str, lang: str, out: list[str]) -> int:
    """Fenced code -> a quote block (one quoted line per code line) under a bold label."""
    out.append(f"> **{lang or 'code'}**")
    i = start + 1
    while i < len(lines) and lines[i].strip() != marker:
        out.append("> " + (lines[i].replace("\t", "    ") or " "))
        i += 1
    return i + 1


def _is_table_start(lines: list[str], i: int) -> bool:
    return (
        "|" in lines[i]
        and i + 1 < len(lines)
        and bool(_TABLE_SEP.match(lines[i + 1]))
        and "-" in lines[i + 1]
    )


def _table(lines: list[str], start: int, out: list[str]) -> int:
    """A pipe table -> one block per row: `**Header**: value` lines, blocks split by a blank."""
    headers = _cells(lines[start])
    i = start + 2
    rows: list[str] = []
    while i < len(lines) and "|" in lines[i] and lines[i].strip():
        cells = _cells(lines[i])
        pairs = zip(headers, cells + [""] * (len(headers) - len(cells)), strict=False)
        rows.append("\n".join(f"- **{h}**: {c}" for h, c in pairs))
        i += 1
    out.append("\n\n".join(rows))
    return i


def _cells(line: str) -> list[str]:
    core = line.strip()
    core = core[1:] if core.startswith("|") else core
    core = core[:-1] if core.endswith("|") else core
    return [c.strip() for c in core.split("|")]
