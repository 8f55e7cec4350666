"""Telegram's rules for `parse_mode=HTML`, applied the way the Bot API applies them.

From the Bot API's "Formatting options": only the tags b/strong, i/em, u/ins, s/strike/del,
span class="tg-spoiler", tg-spoiler, a href, code, pre, blockquote [expandable], tg-emoji
emoji-id, tg-time; no other attribute. Every `<`, `>` and `&` that is not part of a tag or an
entity must be escaped; the named entities are &lt; &gt; &amp; &quot; (numeric ones too). Tags
must nest properly; `pre` and `code` contain no other entity (a `code class="language-…"` directly
inside `pre` is the language); blockquotes do not nest; links do not nest. The text after entity
parsing must be 1-4,096 characters (counted here in code points) and not only whitespace.
"""

from __future__ import annotations

import html
import re

MAX_TEXT = 4096
_ALLOWED: dict[str, set[str]] = {
    "b": set(), "strong": set(), "i": set(), "em": set(), "u": set(), "ins": set(),
    "s": set(), "strike": set(), "del": set(), "span": {"class"}, "tg-spoiler": set(),
    "a": {"href"}, "code": {"class"}, "pre": set(), "blockquote": {"expandable"},
    "tg-emoji": {"emoji-id"}, "tg-time": {"unix", "format"},
}  # fmt: skip
_TOKEN = re.compile(r"<(/?)([A-Za-z][\w-]*)((?:\s+[\w-]+(?:=\"[^\"<>]*\"|='[^'<>]*')?)*)\s*(/?)>")
_ATTR = re.compile(r"([\w-]+)(?:=\"([^\"]*)\"|='([^']*)')?")
_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|#\d{1,7}|#x[0-9A-Fa-f]{1,6});")


class TelegramHtmlError(ValueError):
    pass


def check_html(source: str) -> str:
    """The visible text of `source`, or TelegramHtmlError saying what Telegram would refuse."""
    stack: list[tuple[str, dict[str, str]]] = []
    text: list[str] = []
    pos = 0
    while pos < len(source):
        lt = source.find("<", pos)
        chunk = source[pos:] if lt < 0 else source[pos:lt]
        text.append(_unescape(chunk))
        if lt < 0:
            break
        match = _TOKEN.match(source, lt)
        if match is None:
            raise TelegramHtmlError(f"Unsupported start tag or unescaped '<' at byte offset {lt}")
        _tag(match, stack)
        pos = match.end()
    if stack:
        raise TelegramHtmlError(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    visible = "".join(text)
    if not visible.strip():
        raise TelegramHtmlError("message text is empty")
    if len(visible) > MAX_TEXT:
        raise TelegramHtmlError("message is too long")
    return visible


def _unescape(chunk: str) -> str:
    if ">" in chunk:
        raise TelegramHtmlError("unescaped '>' in text")
    for amp in re.finditer("&", chunk):
        if not _ENTITY.match(chunk, amp.start()):
            raise TelegramHtmlError(f"unsupported entity near {chunk[amp.start() :][:12]!r}")
    return html.unescape(chunk)


def _tag(match: re.Match[str], stack: list[tuple[str, dict[str, str]]]) -> None:
    closing, name, attr_text, self_closing = match.groups()
    name = name.lower()
    if name not in _ALLOWED or self_closing:
        raise TelegramHtmlError(f'Unsupported start tag "{name}"')
    if closing:
        if not stack or stack[-1][0] != name:
            raise TelegramHtmlError(f'Unmatched end tag "{name}"')
        stack.pop()
        return
    attrs = {
        m.group(1).lower(): _unescape(m.group(2) or m.group(3) or "")
        for m in _ATTR.finditer(attr_text)
    }
    for attr in attrs:
        if attr not in _ALLOWED[name]:
            raise TelegramHtmlError(f'Unsupported attribute "{attr}" in tag "{name}"')
    _check_nesting(name, attrs, stack)
    stack.append((name, attrs))


def _check_nesting(
    name: str, attrs: dict[str, str], stack: list[tuple[str, dict[str, str]]]
) -> None:
    parents = [tag for tag, _ in stack]
    if parents and parents[-1] == "pre" and name == "code":
        if not attrs.get("class", "language-").startswith("language-"):
            raise TelegramHtmlError("code in pre takes only a language-* class")
        return
    if "pre" in parents or "code" in parents:
        raise TelegramHtmlError(f'tag "{name}" inside pre/code is not allowed')
    if name == "code" and "class" in attrs:
        raise TelegramHtmlError("a language class is only allowed on code inside pre")
    if name == "blockquote" and "blockquote" in parents:
        raise TelegramHtmlError("blockquotes can't be nested")
    if name == "a" and "a" in parents:
        raise TelegramHtmlError("links can't be nested")
    if name == "a" and not attrs.get("href"):
        raise TelegramHtmlError("a link needs an href")
    if name == "span" and attrs.get("class") != "tg-spoiler":
        raise TelegramHtmlError('span needs class="tg-spoiler"')
