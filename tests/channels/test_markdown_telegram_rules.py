"""The one markdown parser, rendered to Telegram HTML, held to Telegram's rules.

A corpus of answers as LLMs write them and generated markdown (hypothesis) go through
`render_parts`; every part must pass tests/fakes/telegram_html.check_html (allowed tags and
attributes, nesting, entity escapes, 1-4,096 visible characters) and, together, the parts must
show every letter and digit CommonMark itself would show, in order.
"""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from channels.markdown import parser
from channels.telegram.render import render_parts, render_preview
from channels.text import split_text
from tests.fakes.telegram_html import TelegramHtmlError, check_html
from tests.repeatable import REPEATABLE

CORPUS = [
    "***bold italic*** and **bold with *italic* inside** and *it with **bold** inside*",
    "Use **`code`** or _**both**_ or ~~**gone**~~",
    "See [the docs](https://en.wikipedia.org/wiki/Markdown_(disambiguation)) for more.",
    "[search](https://example.com/?q=a&b=c&lang=en) and <https://example.com/a?x=1&y=2>",
    'Compare `a < b && c > d` with ```\n<div class="x">&amp;</div>\n```',
    "```python\ndef f(x: int) -> bool:\n    return x < 3 and x > 1  # <b>not bold</b>\n```",
    "| Name | Price (&) | Notes |\n|:--|--:|---|\n| **A** | $1 | `x<y` |\n"
    "| B | 22 | [l](http://x) |",
    "Unbalanced **bold and *italic and `code and [link](http://x",
    "**bold at end of line\nnext line** and a lone * star and 2 * 3 = 6",
    "## Heading with *emphasis*\n\nParagraph 1.\n\n### Another\n\n- item **one**\n- item 2\n"
    "  - nested *a*\n  - nested b\n\n1. first\n2. second\n   continued",
    "> A quote with **bold**\n> > and a nested quote\n>\n> ```\n> code in quote\n> ```",
    "中文回答：**重要**的内容，*斜体*，以及`代码`。\n\n日本語のテキスト、한국어 텍스트",
    "Emoji 😀🎉 in **bold 👍** and a flag 🇺🇦 and ZWJ 👩‍💻 text",
    "Raw HTML <b>should</b> stay text, & ampersands, &amp; entities, &copy; and 5 > 3 < 4",
    "---\n\nAfter a rule\n\n***\n\n___",
    "Image: ![a cat](https://example.com/cat.png) and a link [](https://empty.label)",
    "Footnote-like [1] and [text] (not a link) and [ref][missing]",
    "Line with trailing spaces  \nhard break\\\nanother",
    "- [ ] todo\n- [x] done\n\n* star item\n+ plus item",
    "Escapes: \\*not italic\\*, \\_not\\_, \\`not code\\`",
    "A" * 5000,
    ("word " * 900) + "\n\n```js\n" + "\n".join(f"let v{i} = '<{i}>' && i;" for i in range(300)),
    "**" + "long bold text " * 400 + "**",
    "> " + "quoted text " * 500,
    "| h |\n|---|\n" + "\n".join(f"| row {i} & <x> |" for i in range(400)),
]

_TAGS = re.compile(r"<[^>]*>")


def commonmark_letters(markdown: str) -> str:
    """Letters and digits CommonMark shows for `markdown` (markdown-it's own HTML, tags removed)."""
    rendered = parser().render(markdown)
    return "".join(c for c in html.unescape(_TAGS.sub("", rendered)) if c.isalnum())


def letters(text: str) -> str:
    return "".join(c for c in text if c.isalnum())


def accepted_parts(markdown: str, limit: int = 4096) -> list[str]:
    out = []
    for part in render_parts(markdown, limit):
        try:
            visible = check_html(part.html)
        except TelegramHtmlError as exc:  # pragma: no cover - the failure message
            pytest.fail(f"Telegram would refuse {part.html[:300]!r}: {exc}")
        assert len(visible) <= limit
        assert visible == part.plain
        out.append(visible)
    return out


@pytest.mark.parametrize("markdown", CORPUS)
def test_corpus_parts_are_accepted_and_nothing_is_lost(markdown: str) -> None:
    shown = accepted_parts(markdown)
    expected = commonmark_letters(markdown)
    if "1. first" in markdown:  # ordered list numbers are text in Telegram
        expected = expected.replace("first", "1first").replace("second", "2second")
    if "![a cat]" in markdown:  # an image is shown as a link labelled with its alt text
        expected = expected.replace("Imageand", "Imageacatand") + "httpsemptylabel"  # and an
        # empty link label shows the URL instead
    assert letters("".join(shown)) == expected


def test_bold_italic_is_one_properly_nested_pair() -> None:
    (part,) = render_parts("***bold italic*** rest")
    assert part.html == "<i><b>bold italic</b></i> rest"


def test_link_url_keeps_parentheses_and_escapes_ampersands() -> None:
    (part,) = render_parts("[x](https://w.org/A_(b)?q=1&r=2)")
    assert part.html == '<a href="https://w.org/A_(b)?q=1&amp;r=2">x</a>'


def test_long_bold_split_closes_and_reopens_in_each_part() -> None:
    parts = render_parts("**" + ("long bold text " * 400).strip() + "**")
    assert len(parts) == 2
    assert all(p.html.startswith("<b>") and p.html.endswith("</b>") for p in parts)


def test_code_point_limit_counts_emoji_once() -> None:
    (part,) = render_parts("😀" * 4096)
    assert len(check_html(part.html)) == 4096


def test_preview_of_a_long_answer_is_accepted() -> None:
    preview = render_preview("**" + "x " * 3000 + "**")
    assert check_html(preview.html).endswith("…")


def test_validator_refuses_what_telegram_refuses() -> None:
    for bad in ("<b><i>x</b></i>", "<b>x", "a < b", "x &nbsp; y", "<pre><b>x</b></pre>",
                "<blockquote><blockquote>x</blockquote></blockquote>", "<div>x</div>",
                '<a href="x" title="t">x</a>', "<code class=\"language-py\">x</code>", " ",
                "x" * 4097):  # fmt: skip
        with pytest.raises(TelegramHtmlError):
            check_html(bad)


FRAGMENTS = [
    "word", "Ünïcødé", "中文", "😀", "👩‍💻", " ", " ", "\n", "\n\n", "*", "**", "***", "_", "__",
    "~~", "`", "```", "```py\n", "[", "]", "](", "(", ")", "](https://x.io/a_(b)?c=d&e=f)",
    "<", ">", "&", "&amp;", "<b>", "# ", "## ", "- ", "  - ", "> ", "| a | b |\n|---|---|\n",
    "| c | d |\n", "---\n", "\\", "http://x.y/z",
]  # fmt: skip


MARKDOWN_EXAMPLES = settings(
    REPEATABLE, max_examples=300, suppress_health_check=[HealthCheck.too_slow]
)


@MARKDOWN_EXAMPLES
@given(
    st.lists(st.sampled_from(FRAGMENTS), max_size=80).map("".join),
    st.sampled_from([64, 200, 4096]),
)
def test_generated_markdown_every_part_accepted_nothing_lost(markdown: str, limit: int) -> None:
    shown = letters("".join(accepted_parts(markdown, limit)))
    expected = commonmark_letters(markdown)
    assert is_subsequence(expected, shown)  # nothing lost ...
    urls = sum(len(letters(url)) for url in re.findall(r"\]\((\S*)", markdown))
    assert len(shown) - len(expected) <= urls  # ... nothing added but a label-less link's URL


def is_subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(c in it for c in needle)


@MARKDOWN_EXAMPLES
@given(
    st.lists(st.sampled_from(FRAGMENTS), max_size=120).map("".join),
    st.sampled_from([100, 400]),
)
def test_split_markdown_parts_fit_and_lose_nothing(markdown: str, limit: int) -> None:
    parts = split_text(markdown, limit)
    assert all(len(p) <= limit for p in parts)
    shown = "".join(commonmark_letters(p) for p in parts)
    assert is_subsequence(commonmark_letters(markdown), shown)


def test_bold_inside_bold_is_one_tag_not_nested() -> None:
    (part,) = render_parts("# A **b** c\n\n**x **y** z** and *i *j* k*")
    assert part.html == "<b>A b c</b>\n\n<b>x y z</b> and <i>i j k</i>"
    check_html(part.html)
