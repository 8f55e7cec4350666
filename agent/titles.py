"""A short conversation title from the first exchange (one small LLM call)."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from agent.config_context import TitleConfig
from agent.relay import content_text

log = logging.getLogger(__name__)

TITLE_PROMPT = """\
Write a title for this conversation: at most {max_words} words, no quotes, no trailing \
punctuation, in the language of the user's message. Answer with the title only."""

_QUOTES = "\"'`“”‘’«»*#"


def clean_title(text: str, max_words: int, max_chars: int) -> str:
    """First line, unquoted, at most `max_words` words and `max_chars` characters."""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = re.sub(r"^(title|titre|标题)\s*[:：]\s*", "", line.strip(), flags=re.IGNORECASE)
    line = line.strip(_QUOTES + " ").rstrip(".!?。")
    words = line.split()[:max_words]
    title = " ".join(words)
    if len(title) > max_chars:
        title = (
            title[:max_chars].rsplit(" ", 1)[0] if " " in title[:max_chars] else title[:max_chars]
        )
    return title.strip(_QUOTES + " ,;:")


async def make_title(
    model: Any, user_text: str, answer: str, config: TitleConfig, timeout: float = 30.0
) -> str:
    """The title, or "" when the model fails (the next first-exchange check will not retry)."""
    messages = [
        ("system", TITLE_PROMPT.format(max_words=config.max_words)),
        ("user", f"User: {user_text.strip()[:1000]}\n\nAssistant: {answer.strip()[:1000]}"),
    ]
    try:
        response = await asyncio.wait_for(model.ainvoke(messages), timeout)
    except Exception as exc:
        log.warning("title generation failed: %s", exc)
        return ""
    return clean_title(content_text(response.content), config.max_words, config.max_chars)
