"""ReplyDoc -> Telegram: markdown to Telegram HTML, splitting at 4096 after formatting (pure).

Telegram's HTML dialect knows b, i, s, u, code, pre (with `language-*` class), a, blockquote.
Everything else is mapped onto those: headings become bold, list bullets become "•", tables
become preformatted text with aligned columns.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from channels.base import ReplyDoc, ToolStep
from channels.text import split_text, truncate

MAX_LEN = 4096
_FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+#.-]*)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^(\s*)(\d+[.)])\s+(.*)$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
_INLINE = [
    (re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*"), "b"),
    (re.compile(r"(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)"), "b"),
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), "s"),
    (re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])"), "i"),
    (re.compile(r"(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)"), "i"),
]


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
        body = "_Queued: I'll answer after the current reply._"
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
    """Render `markdown` into messages whose HTML fits `limit`, never cutting a code block."""
    budget = limit
    while True:
        sources = split_text(markdown, budget) if len(markdown) > budget else [markdown]
        parts = [Part(html=to_html(src), plain=src) for src in sources]
        if all(len(p.html) <= limit for p in parts) or budget <= 256:
            return [_fit(p, limit) for p in parts]
        budget = int(budget * 0.85)


def render_preview(markdown: str, limit: int = MAX_LEN) -> Part:
    """A streaming preview: the first part only, marked as continuing when there is more."""
    parts = render_parts(markdown, limit - 2)
    if len(parts) == 1:
        return parts[0]
    head = parts[0]
    return Part(html=head.html + "\n…", plain=head.plain + "\n…")


def _fit(part: Part, limit: int) -> Part:
    if len(part.html) <= limit:
        return part
    plain = truncate(part.plain, limit)
    return Part(html=html.escape(plain, quote=False), plain=plain)


# --------------------------------------------------------------------------- blocks


def to_html(markdown: str) -> str:
    """Convert the agent's markdown into Telegram HTML."""
    out: list[str] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            i = _code_block(lines, i, out)
        elif _is_table_start(lines, i):
            i = _table(lines, i, out)
        elif line.lstrip().startswith(">"):
            i = _quote(lines, i, out)
        else:
            out.append(_line(line))
            i += 1
    return "\n".join(out)


def _code_block(lines: list[str], start: int, out: list[str]) -> int:
    match = _FENCE.match(lines[start])
    assert match is not None
    fence, lang = match.group(1), match.group(2)
    end = start + 1
    while end < len(lines) and not lines[end].strip().startswith(fence):
        end += 1
    code = html.escape("\n".join(lines[start + 1 : end]), quote=False)
    if lang:
        out.append(f'<pre><code class="language-{html.escape(lang)}">{code}</code></pre>')
    else:
        out.append(f"<pre>{code}</pre>")
    return end + 1


def _quote(lines: list[str], start: int, out: list[str]) -> int:
    end = start
    body: list[str] = []
    while end < len(lines) and lines[end].lstrip().startswith(">"):
        body.append(_line(lines[end].lstrip()[1:].removeprefix(" ")))
        end += 1
    out.append("<blockquote>" + "\n".join(body) + "</blockquote>")
    return end


def _is_table_start(lines: list[str], i: int) -> bool:
    return (
        "|" in lines[i]
        and i + 1 < len(lines)
        and "|" in lines[i + 1]
        and bool(_TABLE_SEP.match(lines[i + 1]))
    )


def _table(lines: list[str], start: int, out: list[str]) -> int:
    rows = [_cells(lines[start])]
    end = start + 2
    while end < len(lines) and "|" in lines[end] and lines[end].strip():
        rows.append(_cells(lines[end]))
        end += 1
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    sizes = [max(len(r[c]) for r in rows) for c in range(width)]
    text = [" | ".join(cell.ljust(sizes[c]) for c, cell in enumerate(row)).rstrip() for row in rows]
    text.insert(1, "-+-".join("-" * s for s in sizes))
    out.append("<pre>" + html.escape("\n".join(text), quote=False) + "</pre>")
    return end


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _line(line: str) -> str:
    if match := _HEADING.match(line):
        return f"<b>{inline(match.group(1))}</b>"
    if _RULE.match(line):
        return "———"
    if match := _BULLET.match(line):
        return f"{match.group(1)}• {inline(match.group(2))}"
    if match := _NUMBERED.match(line):
        return f"{match.group(1)}{match.group(2)} {inline(match.group(3))}"
    return inline(line)


# --------------------------------------------------------------------------- inline


def inline(text: str) -> str:
    """Inline markdown (code spans, links, bold, italic, strike) -> escaped Telegram HTML."""
    saved: list[str] = []

    def keep(fragment: str) -> str:
        saved.append(fragment)
        return f"\x00{len(saved) - 1}\x00"

    text = _CODE_SPAN.sub(lambda m: keep(f"<code>{html.escape(m.group(2).strip())}</code>"), text)
    text = _LINK.sub(lambda m: keep(_link(m.group(1), m.group(2))), text)
    text = html.escape(text, quote=False)
    for pattern, tag in _INLINE:
        text = pattern.sub(lambda m, t=tag: f"<{t}>{m.group(1)}</{t}>", text)
    return re.sub(r"\x00(\d+)\x00", lambda m: saved[int(m.group(1))], text)


def _link(label: str, url: str) -> str:
    if not re.match(r"^(https?|tg|mailto):", url):
        return html.escape(f"[{label}]({url})", quote=False)
    return f'<a href="{html.escape(url)}">{html.escape(label, quote=False)}</a>'
