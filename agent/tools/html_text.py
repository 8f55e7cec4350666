"""Readable text from an HTML page for `web_fetch`: markitdown's HTML converter (markdown:
headings, lists, links, tables), after the page's chrome is cut away — scripts, styles,
navigation, footers, forms, embedded frames and images drawn in SVG."""

from __future__ import annotations

import re

CHROME = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "nav",
    "footer",
    "iframe",
    "form",
    "button",
)


def html_to_text(html: str) -> tuple[str, str]:
    """(title, markdown text) of an HTML document."""
    from bs4 import BeautifulSoup
    from markitdown.converters import HtmlConverter

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(CHROME):
        tag.decompose()
    title = soup.title.get_text() if soup.title else ""
    result = HtmlConverter().convert_string(str(soup))
    body = re.sub(r"\n{3,}", "\n\n", result.markdown).strip()
    return " ".join(title.split()), body
