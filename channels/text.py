"""Text helpers every channel may use: splitting long markdown without breaking code blocks."""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")


def split_text(text: str, limit: int) -> list[str]:
    """Split `text` into parts of at most `limit` characters.

    Cuts prefer paragraph breaks, then line breaks, then spaces. A fenced code block cut in two
    is closed at the end of one part and reopened (with its info string) at the start of the
    next, so every part renders on its own.
    """
    if limit < 32:
        raise ValueError("limit too small to split safely")
    parts: list[str] = []
    rest = text
    while len(rest) > limit:
        fence = _open_fence(rest[: limit - 4])
        budget = limit - 4 if fence else limit
        cut = _cut_point(rest, budget)
        head, rest = rest[:cut], rest[cut:]
        fence = _open_fence(head)
        if fence:
            head = head.rstrip("\n") + "\n" + fence[:3]
            rest = fence + "\n" + rest.lstrip("\n")
        else:
            rest = rest.lstrip("\n")
        parts.append(head.rstrip())
    if rest.strip() or not parts:
        parts.append(rest)
    return parts


def _cut_point(text: str, budget: int) -> int:
    window = text[:budget]
    for sep in ("\n\n", "\n", " "):
        at = window.rfind(sep)
        if at > budget // 3:
            return at + len(sep) if sep == " " else at
    return budget


def _open_fence(text: str) -> str | None:
    """The opening fence line still open at the end of `text`, if any."""
    opener: str | None = None
    for line in text.splitlines():
        if _FENCE.match(line):
            opener = None if opener else line.strip()
    return opener



def truncate(text: str, limit: int, marker: str = "…") -> str:
    """Cut `text` to `limit` characters, ending with `marker` when cut."""
    return text if len(text) <= limit else text[: limit - len(marker)] + marker
