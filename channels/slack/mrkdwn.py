"""The markdown tree -> Slack mrkdwn, for a message's `text` (notifications, old clients). Pure.

mrkdwn knows *bold*, _italic_, ~strike~, `code`, ```pre```, <url|label> and "> " quotes; `&`, `<`
and `>` are escaped everywhere. Markers hug the text they mark (Slack ignores `* bold *`), so the
whitespace around a styled span is kept outside its markers.
"""

from __future__ import annotations

from channels.markdown import Mark, Span, spans

_WRAP = {"bold": "*", "italic": "_", "strike": "~"}


def to_mrkdwn(markdown: str) -> str:
    out: list[str] = []
    at_line_start = True
    for span in spans(markdown):
        piece = _styled(span)
        if any(m.kind == "quote" for m in span.marks):
            piece = _quoted(piece, at_line_start)
        out.append(piece)
        if piece:
            at_line_start = piece.endswith("\n")
    return "".join(out)


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _styled(span: Span) -> str:
    text = escape(span.text)
    kinds: dict[str, Mark] = {m.kind: m for m in span.marks}
    if "pre" in kinds:
        return f"```\n{text}\n```"
    core = text.strip()
    if not core:
        return text
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    return lead + _wrap(core, kinds) + trail


def _wrap(core: str, kinds: dict[str, Mark]) -> str:
    if "code" in kinds:
        core = f"`{core.replace('`', 'ˋ')}`"
    for kind, marker in _WRAP.items():
        if kind in kinds and "code" not in kinds:
            core = "\n".join(
                f"{marker}{ln}{marker}" if ln.strip() else ln for ln in core.split("\n")
            )
    if "link" in kinds:
        url = escape(kinds["link"].value).replace("|", "%7C")
        core = f"<{url}|{core.replace('|', '¦')}>"
    return core


def _quoted(piece: str, at_line_start: bool) -> str:
    quoted = piece.replace("\n", "\n> ")
    return ("> " + quoted) if at_line_start else quoted
