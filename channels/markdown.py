"""The one markdown parser: the model's markdown parsed once (markdown-it-py, CommonMark + GFM
tables and strikethrough) into a flat run of styled spans every renderer serialises.

A `Span` is visible text with the marks around it, outermost first (bold, italic, strike, code,
pre, link, quote). Block structure the messengers lack becomes text here, the same for all:
headings bold, list items "•" / "1." with indentation, rules "———", tables aligned columns in a
preformatted block (or one "header: value" line per cell with `tables="rows"`). Blocks are
separated by span("\\n\\n"), the cut a splitter prefers.

`split_spans` cuts a span run into parts of at most `limit` visible characters (code points) at
block breaks, then line breaks, then spaces. Every part is a span run of its own, so a renderer
opens and closes its tags inside each part: no part opens a tag it does not close.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

MarkKind = Literal["bold", "italic", "strike", "code", "pre", "link", "quote"]
BLOCK_BREAK = "\n\n"
RULE = "———"
_INLINE_MARKS: dict[str, MarkKind] = {"strong": "bold", "em": "italic", "s": "strike"}


@dataclass(frozen=True, slots=True)
class Mark:
    kind: MarkKind
    value: str = ""  # the URL of a link, the language of a pre block


@dataclass(frozen=True, slots=True)
class Span:
    text: str
    marks: tuple[Mark, ...] = ()


@lru_cache(maxsize=1)
def parser() -> MarkdownIt:
    """CommonMark with GFM tables and strikethrough; raw HTML is text, never markup."""
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def tree(markdown: str) -> SyntaxTreeNode:
    return SyntaxTreeNode(parser().parse(markdown))


def top_level_blocks(markdown: str) -> list[tuple[int, int]]:
    """(first line, end line) of each top-level block, in source order."""
    return [
        (tok.map[0], tok.map[1])
        for tok in parser().parse(markdown)
        if tok.level == 0 and tok.map is not None and tok.nesting in (0, 1)
    ]


# --------------------------------------------------------------------------- spans


def spans(markdown: str, *, tables: Literal["pre", "rows"] = "pre") -> list[Span]:
    """The model's markdown as a span run (see the module docstring)."""
    out: list[Span] = []
    _Walker(out, tables).blocks(tree(markdown).children, (), depth=0, sep=BLOCK_BREAK)
    return _merge(out)


def plain(run: list[Span]) -> str:
    """The visible text of a span run."""
    return "".join(s.text for s in run)


class _Walker:
    def __init__(self, out: list[Span], tables: str) -> None:
        self.out = out
        self.tables = tables

    def emit(self, text: str, marks: tuple[Mark, ...] = ()) -> None:
        if text:
            self.out.append(Span(text, marks))

    def blocks(
        self, nodes: list[SyntaxTreeNode], quote: tuple[Mark, ...], depth: int, sep: str
    ) -> None:
        for i, node in enumerate(nodes):
            if i:
                self.emit(sep, quote if sep == "\n" else ())
            self.block(node, quote, depth)

    def block(self, node: SyntaxTreeNode, quote: tuple[Mark, ...], depth: int) -> None:
        kind = node.type
        if kind == "paragraph":
            self.inline(node.children, quote)
        elif kind == "heading":
            self.inline(node.children, (*quote, Mark("bold")))
        elif kind in ("fence", "code_block"):
            self.code(node)
        elif kind == "blockquote":
            inner = quote or (Mark("quote"),)  # Telegram quotes do not nest
            self.blocks(node.children, inner, depth, "\n")
        elif kind in ("bullet_list", "ordered_list"):
            self.items(node, quote, depth)
        elif kind == "table":
            self.table(node, quote)
        elif kind == "hr":
            self.emit(RULE, quote)
        else:  # html_block and anything unknown: its source text, as text
            self.emit(node.content.rstrip("\n"), quote)

    def code(self, node: SyntaxTreeNode) -> None:
        lang = "".join(c for c in node.info.split(" ")[0] if c.isalnum() or c in "+#.-_")
        self.emit(node.content.rstrip("\n") or " ", (Mark("pre", lang),))

    def items(self, node: SyntaxTreeNode, quote: tuple[Mark, ...], depth: int) -> None:
        number = int(node.attrs.get("start", 1) or 1)
        for i, item in enumerate(node.children):
            if i:
                self.emit("\n", quote)
            bullet = f"{number + i}. " if node.type == "ordered_list" else "• "
            self.emit("   " * depth + bullet, quote)
            self.blocks(item.children, quote, depth + 1, "\n")

    def inline(self, nodes: list[SyntaxTreeNode], marks: tuple[Mark, ...]) -> None:
        for node in nodes:
            if node.type == "inline":
                self.inline(node.children, marks)
            elif node.type in _INLINE_MARKS:
                self.inline(node.children, _with(marks, Mark(_INLINE_MARKS[node.type])))
            elif node.type == "code_inline":
                self.emit(node.content, (*marks, Mark("code")))
            elif node.type in ("softbreak", "hardbreak"):
                self.emit("\n", marks)
            elif node.type == "link":
                self.link(node.children, str(node.attrs.get("href", "")), marks)
            elif node.type == "image":
                self.image(node, marks)
            else:
                self.emit(node.content, marks)

    def link(self, children: list[SyntaxTreeNode], url: str, marks: tuple[Mark, ...]) -> None:
        if any(m.kind == "link" for m in marks) or not url:
            self.inline(children, marks)
        else:
            self.inline(children, (*marks, Mark("link", url)))
            if not children:
                self.emit(url, (*marks, Mark("link", url)))

    def image(self, node: SyntaxTreeNode, marks: tuple[Mark, ...]) -> None:
        src = str(node.attrs.get("src", ""))
        alt = "".join(c.content for c in node.walk() if c.type == "text") or "image"
        self.emit(alt, (*marks, Mark("link", src)) if src else marks)

    def table(self, node: SyntaxTreeNode, quote: tuple[Mark, ...]) -> None:
        rows = [[_cell_text(cell) for cell in tr.children] for tr in _rows(node)]
        if not rows:
            return
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        if self.tables == "rows":
            self.emit(_table_rows(rows), quote)
            return
        sizes = [max(len(r[c]) for r in rows) for c in range(width)]
        lines = [
            " | ".join(cell.ljust(sizes[c]) for c, cell in enumerate(r)).rstrip() for r in rows
        ]
        lines.insert(1, "-+-".join("-" * s for s in sizes))
        self.emit("\n".join(lines), (Mark("pre"),))


def _with(marks: tuple[Mark, ...], mark: Mark) -> tuple[Mark, ...]:
    """`marks` and `mark`, once: bold inside bold (a heading's, or `**a **b** c**`) is just bold,
    so no renderer nests a tag in itself."""
    return marks if mark in marks else (*marks, mark)


def _rows(table: SyntaxTreeNode) -> Iterator[SyntaxTreeNode]:
    for section in table.children:
        yield from section.children


def _cell_text(cell: SyntaxTreeNode) -> str:
    run: list[Span] = []
    _Walker(run, "pre").inline(cell.children, ())
    return plain(run).replace("\n", " ").strip()


def _table_rows(rows: list[list[str]]) -> str:
    head, *body = rows
    blocks = ["\n".join(f"{h}: {c}" for h, c in zip(head, row, strict=True)) for row in body]
    return BLOCK_BREAK.join(blocks) or " | ".join(head)


def _merge(run: list[Span]) -> list[Span]:
    out: list[Span] = []
    for span in run:
        if out and out[-1].marks == span.marks:
            out[-1] = Span(out[-1].text + span.text, span.marks)
        else:
            out.append(span)
    return out


# --------------------------------------------------------------------------- splitting


def split_spans(run: list[Span], limit: int) -> list[list[Span]]:
    """Cut `run` into parts of at most `limit` visible characters (see the module docstring).

    Whitespace at a cut is dropped; no other visible character is lost.
    """
    if limit < 16:
        raise ValueError("limit too small to split safely")
    text = plain(run)
    starts = list(itertools.accumulate((len(s.text) for s in run[:-1]), initial=0))
    parts: list[list[Span]] = []
    start = _skip_space(text, 0)
    while start < len(text):
        end = len(text) if len(text) - start <= limit else _cut(text, start, limit)
        stop = end
        while stop > start and text[stop - 1].isspace():
            stop -= 1
        if stop > start:
            parts.append(_slice(run, starts, start, stop))
        start = _skip_space(text, end)
    return parts or [[Span("")]]


def _cut(text: str, start: int, limit: int) -> int:
    window = text[start : start + limit]
    for sep in (BLOCK_BREAK, "\n", " "):
        at = window.rfind(sep)
        if at > limit // 3:
            return start + at + len(sep)
    return start + limit


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] == "\n":
        at += 1
    return at


def _slice(run: list[Span], starts: list[int], start: int, stop: int) -> list[Span]:
    """The spans covering visible characters [start, stop); `starts`: each span's offset."""
    out: list[Span] = []
    for i in range(max(bisect.bisect_right(starts, start) - 1, 0), len(run)):
        pos, span = starts[i], run[i]
        if pos >= stop:
            break
        lo, hi = max(start, pos), min(stop, pos + len(span.text))
        if lo < hi:
            out.append(Span(span.text[lo - pos : hi - pos], span.marks))
    return out


def escape(text: str) -> str:
    """`text` as markdown that renders literally (every ASCII punctuation backslash-escaped)."""
    return "".join("\\" + c if c in _PUNCTUATION else c for c in text)


_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
