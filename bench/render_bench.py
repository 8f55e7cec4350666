"""Rendering cost: the one markdown parser and what each renderer does with its parse.

Figures in milliseconds of CPU on the service loop, for an LLM-style answer (headings, bold,
links with parentheses, lists, code, a table) of 4,000 / 20,000 / 100,000 characters: parsing,
a Telegram streaming preview (redrawn on every update), the Telegram final parts, the service's
split of a final (channels/text.py) and the Slack mrkdwn notification text (per update).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from channels.markdown import parser
from channels.slack.render import fallback_text
from channels.telegram.render import render_parts, render_preview
from channels.text import split_text

BLOCK = (
    "## Step\n\nSome **bold** and ***bold italic*** text with "
    "[a link](https://en.wikipedia.org/wiki/Foo_(bar)?a=1&b=2) and `code <x>`.\n\n"
    "- item one\n- item *two*\n  - nested\n\n```python\nif a < b:\n    print('&')\n```\n\n"
    "| name | value |\n|---|--:|\n| alpha | 1 |\n| beta | 22 |\n\n"
)


def _ms(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return round(best * 1000, 1)


async def run() -> dict[str, object]:
    figures: dict[str, object] = {}
    for size in (4_000, 20_000, 100_000):
        text = (BLOCK * (size // len(BLOCK) + 1))[:size]
        tag = f"{size // 1000}k"
        figures[f"parse_ms_{tag}"] = _ms(partial(parser().parse, text))
        figures[f"telegram_preview_ms_{tag}"] = _ms(partial(render_preview, text))
        figures[f"telegram_parts_ms_{tag}"] = _ms(partial(render_parts, text))
        figures[f"split_text_4000_ms_{tag}"] = _ms(partial(split_text, text, 4000))
        figures[f"slack_fallback_text_ms_{tag}"] = _ms(partial(fallback_text, text))
    return figures
