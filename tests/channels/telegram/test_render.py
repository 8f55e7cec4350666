"""Markdown -> Telegram HTML, checked against the fake server's Telegram-like HTML parser."""

from __future__ import annotations

import pytest

from channels.base import Button, ReplyDoc, ToolStep
from channels.markdown import spans
from channels.telegram.buttons import TOKEN_PREFIX, ButtonTokens
from channels.telegram.render import doc_markdown, render_parts, render_preview, serialise
from tests.fakes.telegram_server import visible_text


def parses(html: str) -> str:
    text, error = visible_text(html, "HTML")
    assert not error, (error, html)
    return text


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("**bold** and __bold__", "<b>bold</b> and <b>bold</b>"),
        ("*it* and _it_ but snake_case_name", "<i>it</i> and <i>it</i> but snake_case_name"),
        ("~~gone~~", "<s>gone</s>"),
        ("use `a<b> & c`", "use <code>a&lt;b&gt; &amp; c</code>"),
        ("[docs](https://x.io/a_b?q=1&r=2)", '<a href="https://x.io/a_b?q=1&amp;r=2">docs</a>'),
        ("[bad](javascript:alert)", "[bad](javascript:alert)"),
        ("## Heading *x*", "<b>Heading <i>x</i></b>"),
        ("- one\n- two\n  - three", "• one\n• two\n   • three"),
        ("1. first\n2. second", "1. first\n2. second"),
        ("***bold italic***", "<i><b>bold italic</b></i>"),
        (
            "[wiki](https://w.org/Foo_(bar)?a=1&b=2)",
            '<a href="https://w.org/Foo_(bar)?a=1&amp;b=2">wiki</a>',
        ),
        ("> quoted **b**\n> more", "<blockquote>quoted <b>b</b>\nmore</blockquote>"),
        ("1 < 2 & 3 > 2", "1 &lt; 2 &amp; 3 &gt; 2"),
        ("---", "———"),
    ],
)
def test_inline_and_block_markdown(markdown: str, html: str) -> None:
    assert to_html(markdown) == html
    parses(html)


def test_code_block_keeps_language_and_escapes() -> None:
    html = to_html("before\n```python\nif a < b:\n    print('**no**')\n```\nafter")
    assert (
        "<pre><code class=\"language-python\">if a &lt; b:\n    print('**no**')</code></pre>"
        in html
    )
    assert parses(html).startswith("before\n\nif a < b:")


def test_unclosed_fence_while_streaming_is_still_valid_html() -> None:
    parses(to_html("text\n```js\nlet x = 1 <"))


def test_table_becomes_aligned_preformatted_text() -> None:
    html = to_html("| name | n |\n|---|--:|\n| alpha | 1 |\n| b | 22 |")
    assert html == "<pre>name  | n\n------+---\nalpha | 1\nb     | 22</pre>"
    parses(html)


def test_long_text_is_split_after_formatting_without_breaking_code() -> None:
    code = "```python\n" + "\n".join(f"x_{i} = '<{i}>'" for i in range(400)) + "\n```"
    markdown = ("**word** " * 600) + "\n\n" + code
    parts = render_parts(markdown)
    assert len(parts) > 2
    for part in parts:
        assert len(parses(part.html)) <= 4096
        assert part.html.count("<pre>") == part.html.count("</pre>")
    assert "".join(parses(p.html) for p in parts).count("x_399") == 1


def test_preview_shows_first_part_and_marks_more() -> None:
    preview = render_preview("word " * 2000)
    assert len(preview.html) <= 4096
    assert preview.html.endswith("…")


def test_doc_markdown_shows_progress_text_and_note() -> None:
    doc = ReplyDoc(
        text="Answer",
        progress=(ToolStep(id="1", label="search", state="done"), ToolStep(id="2", label="read")),
        note="model: gpt",
    )
    assert doc_markdown(doc) == "✅ search\n⏳ read\n\nAnswer\n\n_model: gpt_"
    assert doc_markdown(ReplyDoc()) == "…"
    assert "Queued" in doc_markdown(ReplyDoc(status="queued"))


def test_button_values_fit_callback_data() -> None:
    tokens = ButtonTokens()
    long_value = "/models " + "m" * 80
    markup = tokens.keyboard(
        [Button(label="GPT", value="/models gpt"), Button(label="Long", value=long_value)]
    )
    datas = [b.callback_data for row in markup.inline_keyboard for b in row]
    assert datas[0] == "\x1fv:/models gpt"  # marked as ours
    assert tokens.value_of(str(datas[0])) == "/models gpt"
    assert tokens.value_of("/models gpt") is None  # data without our marker is never a value
    assert str(datas[1]).startswith(TOKEN_PREFIX)
    assert len(str(datas[1]).encode()) <= 64
    assert tokens.value_of(str(datas[1])) == long_value
    assert tokens.value_of(TOKEN_PREFIX + "999") is None


def to_html(markdown: str) -> str:
    """The whole of `markdown` as one Telegram HTML string (no length limit)."""
    return serialise(spans(markdown))
