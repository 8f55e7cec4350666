"""Counting model calls: one LangChain callback handler on every model the agent builds.

`create_chat_model` puts a `UsageCounter(model name, purpose)` on each chat model (answers,
titles, memory passes, summaries, subagents), so every call is seen once, whoever makes it. At
the end of a call the counter reads the provider's usage from LangChain's `usage_metadata`
(prompt, completion, cached and reasoning tokens; OpenAI-compatible streams carry it when asked
with `stream_options.include_usage`, which `stream_usage=True` sets). A server that sends none
gets an estimate (4 characters a token), marked `estimated`.

Who a call is for travels in a context variable, `UsageScope`, set where a run (or a memory
pass) starts: the run, thread, person and chat, the `sink` the service supplies (plain
`UsageRecord`s, no import of the service) and an optional `check` run before each model call
(a budget: it raises `UsageRefused` to stop the run before the call). Counting adds no model
call: it reads what the response already carries.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import AsyncCallbackHandler

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4


class UsageRefused(Exception):
    """A model call the scope's check refused (a budget reached); `str()` is fit for a user."""


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One model call's tokens and whom they are for."""

    model: str  # the configured model name (models[].name)
    purpose: str  # answer | title | memory | summary | subagent
    prompt: int
    completion: int
    cached: int = 0
    reasoning: int = 0
    estimated: bool = False
    run_id: str = ""
    thread_id: str = ""
    user_id: str = ""
    chat: str = ""

    @property
    def total(self) -> int:
        return self.prompt + self.completion


UsageSink = Callable[[UsageRecord], None]


@dataclass(frozen=True, slots=True)
class UsageScope:
    sink: UsageSink | None = None
    run_id: str = ""
    thread_id: str = ""
    user_id: str = ""
    chat: str = ""
    # awaited before each model call; raises UsageRefused to stop the run before the call
    check: Callable[[UsageScope], Awaitable[None]] | None = None


_SCOPE: contextvars.ContextVar[UsageScope | None] = contextvars.ContextVar(
    "antler_usage_scope", default=None
)


def current_scope() -> UsageScope | None:
    return _SCOPE.get()


@contextlib.contextmanager
def usage_scope(**fields: Any) -> Iterator[UsageScope]:
    """Set (or narrow, keeping the sink) the scope for the calls made inside."""
    base = _SCOPE.get() or UsageScope()
    scope = dataclasses.replace(base, **fields)
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def new_run_id() -> str:
    return uuid.uuid4().hex


class UsageCounter(AsyncCallbackHandler):
    """Reports each finished call of one model to the scope's sink (awaited inline, in the
    run's own task: no thread hop, the run's context)."""

    run_inline = True
    raise_error = True  # a refused call (UsageRefused) stops the run; our own errors never raise

    def __init__(self, model: str, purpose: str) -> None:
        self.model = model
        self.purpose = purpose
        self._prompt_chars: dict[Any, int] = {}

    async def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[Any]], *, run_id: Any, **_: Any
    ) -> None:
        scope = _SCOPE.get()
        if scope is not None and scope.check is not None:
            try:
                await scope.check(scope)  # UsageRefused propagates: the call is not made
            except UsageRefused:
                raise
            except Exception as exc:  # a budget that cannot be read stops no answer
                log.warning("usage check failed, the call goes ahead: %s", exc)
        self._prompt_chars[run_id] = sum(_chars(m) for batch in messages for m in batch)

    async def on_llm_end(self, response: Any, *, run_id: Any, **_: Any) -> None:
        chars = self._prompt_chars.pop(run_id, 0)
        scope = _SCOPE.get()
        if scope is None or scope.sink is None:
            return
        try:
            record = self._record(response, chars, scope)
        except Exception:  # counting never breaks an answer
            return
        with contextlib.suppress(Exception):
            scope.sink(record)

    async def on_llm_error(self, error: BaseException, *, run_id: Any, **_: Any) -> None:
        self._prompt_chars.pop(run_id, None)

    def _record(self, response: Any, prompt_chars: int, scope: UsageScope) -> UsageRecord:
        message = _message(response)
        meta = getattr(message, "usage_metadata", None) or {}
        where: dict[str, Any] = {
            "run_id": scope.run_id,
            "thread_id": scope.thread_id,
            "user_id": scope.user_id,
            "chat": scope.chat,
        }
        if meta.get("input_tokens") or meta.get("output_tokens"):
            details_in = meta.get("input_token_details") or {}
            details_out = meta.get("output_token_details") or {}
            return UsageRecord(
                self.model,
                self.purpose,
                prompt=int(meta.get("input_tokens") or 0),
                completion=int(meta.get("output_tokens") or 0),
                cached=int(details_in.get("cache_read") or 0),
                reasoning=int(details_out.get("reasoning") or 0),
                **where,
            )
        out_chars = _chars(message) if message is not None else 0
        return UsageRecord(
            self.model,
            self.purpose,
            prompt=_tokens(prompt_chars),
            completion=_tokens(out_chars),
            estimated=True,
            **where,
        )


def _message(response: Any) -> Any:
    for batch in getattr(response, "generations", None) or []:
        for generation in batch:
            return getattr(generation, "message", None)
    return None


def _chars(message: Any) -> int:
    content = getattr(message, "content", "")
    size = len(content) if isinstance(content, str) else len(str(content))
    for call in getattr(message, "tool_calls", None) or []:
        size += len(str(call.get("name", ""))) + len(str(call.get("args", "")))
    return size


def _tokens(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
