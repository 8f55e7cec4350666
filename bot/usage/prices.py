"""A model call's cost: the model's configured `price` (per million tokens in, out and cached),
else the maintained table of the `genai-prices` package (bundled data, read offline; USD), else
nothing (0, and `priced` says so)."""

from __future__ import annotations

import logging
from functools import lru_cache

from agent.config import ModelConfig, ModelPrice

log = logging.getLogger("bot.usage")

MILLION = 1_000_000


def cost_of(model: ModelConfig | None, prompt: int, completion: int, cached: int) -> float:
    """What the call cost in the configured currency (0 when no price is known)."""
    if model is None:
        return 0.0
    if model.price is not None:
        return configured_cost(model.price, prompt, completion, cached)
    return table_cost(model.model, prompt, completion, cached)


def configured_cost(price: ModelPrice, prompt: int, completion: int, cached: int) -> float:
    cached = min(cached, prompt)
    cached_rate = price.cached if price.cached is not None else price.input
    return ((prompt - cached) * price.input + cached * cached_rate + completion * price.output) / (
        MILLION
    )


def priced(model: ModelConfig) -> bool:
    return model.price is not None or _known(model.model)


def table_cost(ref: str, prompt: int, completion: int, cached: int) -> float:
    if not _known(ref):
        return 0.0
    from genai_prices import Usage, calc_price

    usage = Usage(
        input_tokens=prompt, output_tokens=completion, cache_read_tokens=min(cached, prompt)
    )
    try:
        return float(calc_price(usage, ref).total_price)
    except Exception as exc:  # a table that cannot price this call: counted, not priced
        log.debug("no price for %s: %s", ref, exc)
        return 0.0


@lru_cache(maxsize=256)
def _known(ref: str) -> bool:
    """Whether the table knows the model (looked up once per name)."""
    from genai_prices import Usage, calc_price

    try:
        calc_price(Usage(input_tokens=1, output_tokens=1), ref)
    except Exception:
        log.info("model %r is not in the price table: its calls are counted, not priced", ref)
        return False
    return True
