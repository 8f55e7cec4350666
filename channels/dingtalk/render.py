"""ReplyDoc -> DingTalk text (pure): AI-card markdown and the robot markdown dialect.

AI cards render ordinary markdown. Robot `sampleMarkdown` / session-webhook markdown renders only
a subset (headings, bold, links, lists, quotes, images): fenced code, tables and horizontal rules
are rewritten here into what it does show. Buttons are an interactive card of their own
(buttons.py); only when that card cannot be sent do they become `dtmd://` links, which make the
DingTalk client send the button's value as the user's own message (in DMs; groups need an @).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import quote

from markdown_it.token import Token

from channels.base import Button, ReplyDoc, ToolStep
from channels.markdown import parser

_STEP_ICON = {"running": "⏳", "done": "✅", "failed": "❌"}
_STATUS_MARK = {"queued": "⏳", "working": "⏳", "cancelled": "⏹", "failed": "⚠️"}


def _status_line(doc: ReplyDoc) -> str:
    return f"{_STATUS_MARK[doc.status]} {doc.labels.line(doc.status)}"


_INLINE_CODE = re.compile(r"`([^`\n]+)`")
RULE = "———————————"


def card_text(doc: ReplyDoc, *, links: bool = False) -> str:
    """The whole visible reply as markdown: progress, text, note, status; with `links`, the
    buttons as `dtmd://` links (the fallback when no button card can be sent: they work in DMs
    only, see channels/dingtalk/buttons.py)."""
    blocks = [_progress(doc.progress)] if doc.progress else []
    if doc.text:
        blocks.append(doc.text)
    elif doc.status in _STATUS_MARK:
        blocks.append(_status_line(doc))
    if doc.text and doc.status in ("failed", "cancelled"):
        blocks.append(_status_line(doc))
    if doc.note:
        blocks.append(f"_{doc.note}_")
    if doc.buttons and links:
        blocks.append(button_links(doc.buttons))
    return "\n\n".join(b for b in blocks if b)


def markdown_text(doc: ReplyDoc, *, links: bool = False) -> str:
    """The reply for a robot markdown message."""
    return adapt_markdown(card_text(doc, links=links))


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
    """Rewrite code blocks, tables and rules into the DingTalk robot markdown subset.

    The markdown is parsed once (channels/markdown.py); the blocks the robot cannot show are
    replaced in the source by what it does show, under the same quote or list indentation,
    and inline code in the other lines becomes bold. Everything else stays as written.
    """
    lines = text.split("\n")
    replaced: dict[int, tuple[int, list[str]]] = {}
    for tok in parser().parse(text):
        if tok.map is None or tok.type not in _REWRITTEN:
            continue
        start, end = tok.map
        prefix = _container_prefix(lines[start])
        body = _REWRITTEN[tok.type](tok, lines[start:end])
        replaced[start] = (end, [prefix + ln if ln else prefix.rstrip() for ln in body])
    out: list[str] = []
    i = 0
    while i < len(lines):
        if i in replaced:
            end, body = replaced[i]
            out += body
            i = max(end, i + 1)
        else:
            out.append(_INLINE_CODE.sub(r"**\1**", lines[i]))
            i += 1
    return "\n".join(out)


def _container_prefix(line: str) -> str:
    """The quote markers / list indentation a nested block's first line starts with."""
    match = re.match(r"^((?:\s*>)*\s*(?:[-*+]\s+|\d+[.)]\s+)?)", line)
    prefix = match.group(1) if match else ""
    return re.sub(r"[-*+]|\d+[.)]", lambda m: " " * len(m.group(0)), prefix)


def _code(tok: Token, _lines: list[str]) -> list[str]:
    """Fenced code -> a quote block (one quoted line per code line) under a bold label."""
    lang = tok.info.split(" ")[0] if tok.info else ""
    body = tok.content.rstrip("\n").split("\n")
    return [f"> **{lang or 'code'}**"] + ["> " + (ln.replace("\t", "    ") or " ") for ln in body]


def _rule(_tok: Token, _lines: list[str]) -> list[str]:
    return [RULE]


def _table(_tok: Token, lines: list[str]) -> list[str]:
    """A pipe table -> one block per row: `- **Header**: value` lines, blocks split by a blank."""
    headers = _cells(lines[0])
    rows: list[str] = []
    for line in lines[2:]:
        if not line.strip():
            continue
        cells = _cells(line)
        pairs = zip(headers, cells + [""] * (len(headers) - len(cells)), strict=False)
        rows.append("\n".join(f"- **{h}**: {c}" for h, c in pairs))
    return "\n\n".join(rows).split("\n")


def _cells(line: str) -> list[str]:
    core = re.sub(r"^(?:\s*>)*", "", line).strip()
    core = core[1:] if core.startswith("|") else core
    core = core[:-1] if core.endswith("|") else core
    return [c.strip() for c in core.split("|")]


_REWRITTEN: dict[str, Callable[[Token, list[str]], list[str]]] = {
    "fence": _code, "code_block": _code, "hr": _rule, "table_open": _table,
}  # fmt: skip
