"""The model factory: `ModelConfig` → a LangChain chat model instance (class imported by path)."""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
from typing import TYPE_CHECKING, Any

from agent import http
from agent.config import AgentConfig, ModelConfig
from agent.usage import UsageCounter

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

# Classes that read their key from the environment when `api_key` is not configured.
_KEY_ENV = {
    "langchain_openai:ChatOpenAI": "OPENAI_API_KEY",
    "langchain_openai:AzureChatOpenAI": "AZURE_OPENAI_API_KEY",
    "langchain_anthropic:ChatAnthropic": "ANTHROPIC_API_KEY",
    "langchain_deepseek:ChatDeepSeek": "DEEPSEEK_API_KEY",
}

# Classes whose streams report usage only when asked (`stream_options.include_usage`).
_STREAM_USAGE = frozenset(
    {
        "langchain_openai:ChatOpenAI",
        "langchain_openai:AzureChatOpenAI",
        "langchain_deepseek:ChatDeepSeek",
    }
)

# Built on the shared aiohttp pool with dict chunks (agent/http.py).
_LEAN_CLASS = "langchain_openai:ChatOpenAI"


class ModelError(Exception):
    """A model that cannot be built (bad `use` path, bad arguments)."""


def import_class(use: str) -> type[Any]:
    module_name, _, attr = use.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelError(f"cannot import {module_name!r} (from use: {use!r}): {exc}") from exc
    try:
        return getattr(module, attr)
    except AttributeError as exc:
        raise ModelError(f"{module_name!r} has no {attr!r} (from use: {use!r})") from exc


def model_kwargs(model: ModelConfig, agent: AgentConfig, *, thinking: bool) -> dict[str, Any]:
    """Constructor arguments: schema fields, extra keys, then the thinking overrides."""
    kwargs: dict[str, Any] = {
        "model": model.model,
        "streaming": True,
        "timeout": agent.request_timeout_seconds,
        "max_retries": agent.max_retries,
    }
    if model.api_key is not None:
        kwargs["api_key"] = model.api_key.get_secret_value()
    if model.base_url is not None:
        kwargs["base_url"] = str(model.base_url).rstrip("/")
    if model.use in _STREAM_USAGE:
        kwargs["stream_usage"] = True  # the provider's own token counts (agent/usage.py)
    kwargs.update(model.extra_kwargs())
    if thinking and model.supports_thinking:
        kwargs = deep_merge(kwargs, model.when_thinking_enabled)
    return kwargs


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def create_chat_model(
    model: ModelConfig, agent: AgentConfig, *, thinking: bool, purpose: str = "answer"
) -> BaseChatModel:
    """The model, with a `UsageCounter` for `purpose` (answer, title, memory, summary,
    subagent) among its callbacks: every call it makes is counted (agent/usage.py)."""
    cls = import_class(model.use)
    kwargs = model_kwargs(model, agent, thinking=thinking)
    kwargs["callbacks"] = [*(kwargs.get("callbacks") or []), UsageCounter(model.name, purpose)]
    lean = model.use == _LEAN_CLASS and http.wants_shared_client(kwargs)
    if lean:
        client = http.shared_client(str(kwargs.get("base_url", "")), kwargs["timeout"])
        lean = client is not None
        if lean:
            kwargs["http_async_client"] = client
    try:
        built = cls(**kwargs)
    except Exception as exc:  # pydantic validation and friends: name the model, keep it short
        raise ModelError(f"model {model.name!r} ({model.use}): {exc}") from exc
    return http.streams_dicts(built) if lean else built


def model_warnings(models: list[ModelConfig]) -> list[str]:
    """Problems worth a log line at start-up (never fatal): missing keys, unknown classes."""
    warnings: list[str] = []
    for index, model in enumerate(models):
        where = f"models[{index}] ({model.name})"
        env = _KEY_ENV.get(model.use)
        if env and model.api_key is None and not os.environ.get(env):
            warnings.append(f"{where}: no API key: set {env} or models[{index}].api_key")
        try:
            _check_importable(model.use)
        except ModelError as exc:
            warnings.append(f"{where}: {exc}")
    return warnings


def _check_importable(use: str) -> None:
    """The built-in class's package is a dependency: finding it is enough (importing LangChain's
    OpenAI client is most of what `antler check` would cost). Any other class is imported."""
    if use == _LEAN_CLASS and importlib.util.find_spec(use.partition(":")[0]) is not None:
        return
    import_class(use)


def warm_imports(models: list[ModelConfig]) -> None:
    """Import the agent framework and the model classes (on a worker thread, at start).

    They are imported lazily (a second of work); doing it at start keeps the first turn from
    stalling the service loop. A class that cannot be imported is reported again, readably,
    when the model is used.
    """
    import langchain.agents  # noqa: F401

    http.warm()
    for model in models:
        try:
            import_class(model.use)
        except Exception as exc:
            logging.getLogger("agent.runner").warning(
                "model %s: cannot import %s: %s", model.name, model.use, exc
            )
