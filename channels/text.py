"""Text helpers every channel may use: splitting long markdown on its tree; cleaning what people
send of characters nothing downstream can encode; a reply as one markdown text.

The text is parsed once (channels/markdown.py) into its top-level blocks; parts are whole blocks
up to the limit, kept as written. Only a block longer than the limit is cut inside: a code block
is closed at the end of one part and reopened (with its info string) at the start of the next;
elsewhere the cut prefers line breaks, then spaces, and is moved until the text on both sides
shows exactly what the whole did, so no part opens emphasis, a link or code it does not close.
"""

from __future__ import annotations

import re

from channels.markdown import plain, spans, top_level_blocks
from channels.types import ReplyDoc, ToolStep

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TRIES = 40  # cut candidates tried inside one oversized block before cutting anyway
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
STEP_MARKS = {"running": "⏳", "done": "✅", "failed": "❌"}
_NOTE_MARKS = {"failed": "⚠️", "cancelled": "🚫", "queued": "⏳"}


def reply_markdown(doc: ReplyDoc, queued: str, *, emphasis: str = "_") -> str:
    """A reply as one markdown text (platforms that show a reply as a message): the tool steps
    while it works, its text (`queued` while it waits, "…" before the first word), the note in
    `emphasis` with its status mark. Not cut to any length."""
    chunks = []
    if doc.progress and not doc.final:
        chunks.append("\n".join(step_line(s) for s in doc.progress))
    text = doc.text.strip()
    if not text and doc.status == "queued":
        text = queued
    elif not text and doc.status == "working" and not doc.progress:
        text = "…"
    if text:
        chunks.append(text)
    if doc.note:
        mark = _NOTE_MARKS.get(doc.status, "")
        chunks.append(f"{mark} {emphasis}{doc.note}{emphasis}".strip())
    return "\n\n".join(chunks) or "…"


def step_line(step: ToolStep) -> str:
    return f"{STEP_MARKS[step.state]} {step.label}"


def clean_input(text: str) -> str:
    """Text a person sent, safe to store and to send to a model (UTF-8 everywhere).

    Lone UTF-16 surrogates (a broken emoji from a client) become U+FFFD; a surrogate pair that
    arrived as two code points is joined; NUL and other control characters except tab and line
    breaks are dropped.
    """
    if text.isascii() and not _CONTROL.search(text):
        return text
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return _CONTROL.sub("", text)


def split_text(text: str, limit: int) -> list[str]:
    """Split `text` into parts of at most `limit` characters (see the module docstring)."""
    if limit < 32:
        raise ValueError("limit too small to split safely")
    if len(text) <= limit:
        return [text]
    parts: list[str] = []
    current = ""
    for chunk in _chunks(text):
        joined = f"{current}\n{chunk}" if current else chunk
        if len(joined.rstrip()) <= limit:
            current = joined
            continue
        if current.strip():
            parts.append(current.rstrip())
        current = ""
        if len(chunk.rstrip()) <= limit:
            current = chunk
        else:
            *whole, current = _split_block(chunk.rstrip(), limit)
            parts += whole
    if current.strip() or not parts:
        parts.append(current.rstrip())
    return [piece for part in parts for piece in _hard_cut(part, limit)]


def _hard_cut(part: str, limit: int) -> list[str]:
    """The last guarantee of the contract: no part longer than `limit`."""
    return [part[i : i + limit] for i in range(0, len(part), limit)] or [part]


def _chunks(text: str) -> list[str]:
    """The source of each top-level block with the blank lines after it ("\\n".join = text)."""
    lines = text.split("\n")
    starts = sorted({0} | {start for start, _ in top_level_blocks(text)})
    bounds = [*starts[1:], len(lines)]
    return ["\n".join(lines[a:b]) for a, b in zip(starts, bounds, strict=True)]


def _split_block(text: str, limit: int) -> list[str]:
    parts: list[str] = []
    rest = text
    while len(rest) > limit:
        fence = _open_fence(rest[:limit])
        budget = limit - 4 if fence or _open_fence(rest[: limit - 4]) else limit  # room to close
        cut = _cut_point(rest, budget, check=not fence)
        before = len(rest)
        head, rest = rest[:cut], rest[cut:]
        fence = _open_fence(head)
        if fence and head.strip() == fence and len(_reopen(fence)) < len(fence):
            rest = _reopen(fence) + "\n" + rest.lstrip("\n")  # only a long opener fit: shorten it
            continue
        reopened = _reopen(fence) + "\n" + rest.lstrip("\n") if fence else ""
        if fence and len(reopened) < before and head.strip() != fence:
            head = head.rstrip("\n") + "\n" + fence[: _marker_len(fence)]
            rest = reopened
        else:  # no fence, or reopening it would not make progress: cut plainly
            rest = rest.lstrip("\n")
        parts.append(head.rstrip())
    if rest.strip() or not parts:
        parts.append(rest)
    return parts


def _cut_point(text: str, budget: int, *, check: bool) -> int:
    candidates = _candidates(text, budget)
    if check:
        whole = _visible(text[: budget * 3])
        for cut in candidates[:_TRIES]:
            if _visible(text[:cut]) + _visible(text[cut : budget * 3]) == whole:
                return cut
    return candidates[0] if candidates else budget


def _candidates(text: str, budget: int) -> list[int]:
    """Cut positions, best first: line breaks, then spaces, right to left, past a third."""
    window = text[:budget]
    lines = [m.start() for m in re.finditer("\n", window) if m.start() > budget // 3]
    spaces = [m.end() for m in re.finditer(" ", window) if m.start() > budget // 3]
    return sorted(lines, reverse=True) + sorted(spaces, reverse=True) or [budget]


def _visible(markdown: str) -> str:
    return "".join(plain(spans(markdown)).split())


def _reopen(fence: str) -> str:
    """The opener that continues a code block: its marker and (a short) language only."""
    info = re.match(r"[\w+#.-]*", fence[_marker_len(fence) :].strip())
    return fence[: _marker_len(fence)] + (info.group()[:20] if info else "")


def _open_fence(text: str) -> str | None:
    """The opening fence line still open at the end of `text`, if any (CommonMark's rule: a
    fence closes only with the same character, at least as long, and nothing after it)."""
    opener: str | None = None
    for line in text.splitlines():
        match = _FENCE.match(line)
        if match is None:
            continue
        marker, rest = match.group(1), line.strip()[len(match.group(1)) :]
        if opener is None:
            if not (marker[0] == "`" and "`" in rest):
                opener = line.strip()
        elif marker[0] == opener[0] and len(marker) >= _marker_len(opener) and not rest.strip():
            opener = None
    return opener


def _marker_len(opener: str) -> int:
    return len(opener) - len(opener.lstrip(opener[0]))


def truncate(text: str, limit: int, marker: str = "…") -> str:
    """Cut `text` to `limit` characters, ending with `marker` when cut."""
    return text if len(text) <= limit else text[: limit - len(marker)] + marker
