"""ReplyDoc -> Telegram: the markdown tree rendered into Telegram HTML, split on the tree (pure).

Telegram's HTML dialect knows b, i, s, u, code, pre (with a `language-*` code inside), a and
blockquote; `pre` and `code` hold no other tag and quotes do not nest. The model's markdown is
parsed once (channels/markdown.py) into styled spans; this module serialises them, opening and
closing tags inside each part, so every part is valid on its own. Parts are at most 4,096
visible characters (Telegram counts the text after entity parsing). A part's `plain` is its
visible text: what the user gets when Telegram refuses the HTML anyway.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from channels.base import ReplyDoc, ToolStep
from channels.markdown import Mark, Span, plain, spans, split_spans

MAX_LEN = 4096
PREVIEW_SOURCE = 3
_SCHEMES = re.compile(r"^(https?|tg|mailto|ftp):", re.I)
_TAGS = {"bold": "b", "italic": "i", "strike": "s", "code": "code", "quote": "blockquote"}


@dataclass(frozen=True, slots=True)
class Part:
    """One Telegram message: `html` to send with parse_mode HTML, `plain` if Telegram refuses it."""

    html: str
    plain: str


# --------------------------------------------------------------------------- documents


def doc_markdown(doc: ReplyDoc) -> str:
    """The whole visible reply as markdown: tool progress, text, note."""
    lines = [_step_line(step) for step in doc.progress]
    body = doc.text.strip()
    if not body and doc.status == "queued":
        body = f"_{doc.labels.queued_line}_"
    elif not body and doc.status == "working":
        body = "…"
    chunks = ["\n".join(lines)] if lines else []
    if body:
        chunks.append(body)
    if doc.note:
        chunks.append(f"_{doc.note}_")
    return "\n\n".join(chunks) or "…"


def _step_line(step: ToolStep) -> str:
    mark = {"running": "⏳", "done": "✅", "failed": "❌"}[step.state]
    return f"{mark} {step.label}"


def render_parts(markdown: str, limit: int = MAX_LEN) -> list[Part]:
    """Render `markdown` into messages of at most `limit` visible characters."""
    return [_part(run) for run in split_spans(spans(markdown), limit)]


def render_preview(markdown: str, limit: int = MAX_LEN) -> Part:
    """A streaming preview: the first part only, marked as continuing when there is more.

    Only the head of a long text is parsed (PREVIEW_SOURCE source characters per visible one):
    a preview is redrawn on every update and shows at most `limit` characters anyway.
    """
    head_source = markdown[: limit * PREVIEW_SOURCE]
    parts = split_spans(spans(head_source), limit - 2)
    if len(head_source) < len(markdown) and len(parts) == 1:
        parts.append([])
    head = _part(parts[0])
    if len(parts) == 1:
        return head
    return Part(html=head.html + "\n…", plain=head.plain + "\n…")


def _part(run: list[Span]) -> Part:
    text = plain(run)
    if not text.strip():
        return Part(html="…", plain="…")
    return Part(html=serialise(run), plain=text)


# --------------------------------------------------------------------------- serialising


def serialise(run: list[Span]) -> str:
    """Spans -> Telegram HTML: tags opened and closed as the marks change, all closed at the end."""
    out: list[str] = []
    open_marks: list[Mark] = []
    for span in run:
        marks = _telegram_marks(span.marks)
        keep = 0
        while keep < min(len(open_marks), len(marks)) and open_marks[keep] == marks[keep]:
            keep += 1
        out += [_close(m) for m in reversed(open_marks[keep:])]
        out += [_open(m) for m in marks[keep:]]
        open_marks = list(marks)
        out.append(html.escape(span.text, quote=False))
    out += [_close(m) for m in reversed(open_marks)]
    return "".join(out)


def _telegram_marks(marks: tuple[Mark, ...]) -> tuple[Mark, ...]:
    """Telegram's nesting rules: pre stands alone, code holds nothing, links need a scheme."""
    pre = [m for m in marks if m.kind == "pre"]
    if pre:
        return (pre[0],)
    out: list[Mark] = []
    for mark in marks:
        if mark.kind == "link" and not _SCHEMES.match(mark.value):
            continue
        out.append(mark)
    code = [m for m in out if m.kind == "code"]
    return tuple(m for m in out if m.kind != "code") + tuple(code[:1])


def _open(mark: Mark) -> str:
    if mark.kind == "pre":
        lang = html.escape(mark.value)
        return f'<pre><code class="language-{lang}">' if lang else "<pre>"
    if mark.kind == "link":
        return f'<a href="{html.escape(mark.value, quote=True)}">'
    return f"<{_TAGS[mark.kind]}>"


def _close(mark: Mark) -> str:
    if mark.kind == "pre":
        return "</code></pre>" if mark.value else "</pre>"
    if mark.kind == "link":
        return "</a>"
    return f"</{_TAGS[mark.kind]}>"
