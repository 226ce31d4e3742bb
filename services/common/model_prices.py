"""What a model call costs, in US dollars, from the price map that ships inside LiteLLM.

LiteLLM's ``model_cost`` holds the list prices of several thousand hosted models, keyed by
LiteLLM's names: most with their provider (``gemini/gemini-2.5-flash``,
``deepseek/deepseek-chat``), OpenAI's without (``gpt-4o-mini``). The map is the copy inside the
wheel (see :mod:`services.common.litellm_local`), never fetched: prices are as of the installed
LiteLLM release, and an estimate (no cache discounts, no batch or priority tiers).

A model the map does not price has no cost (``None``), rather than LiteLLM's own fallbacks,
which give some unknown models a price of zero.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any

from services.common.litellm_local import import_litellm

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelPrice:
    """A model's entry in LiteLLM's price map: USD per input and per output token."""

    key: str
    input_per_token: float
    output_per_token: float


def _priced(entry: Any) -> dict[str, Any] | None:
    """The entry when it prices input and output tokens."""
    if (
        isinstance(entry, dict)
        and isinstance(entry.get("input_cost_per_token"), int | float)
        and isinstance(entry.get("output_cost_per_token"), int | float)
    ):
        return entry
    return None


@functools.lru_cache(maxsize=256)
def model_price(model: str) -> ModelPrice | None:
    """The price of ``model``, a LiteLLM model name (``openai/gpt-4o-mini``,
    ``gemini/gemini-2.5-flash``, ``openrouter/...``); ``None`` when the map has no price for it.

    The name is looked up as it is, then without its provider prefix when the entry found that
    way belongs to that provider (``openai/gpt-4o-mini`` is ``gpt-4o-mini`` of ``openai``).
    Importing LiteLLM takes seconds the first time: call from a thread in a running loop.
    """
    name = model.strip()
    if not name:
        return None
    costs: dict[str, Any] = import_litellm().model_cost
    candidates = [name]
    provider, sep, rest = name.partition("/")
    if sep and rest:
        candidates.append(rest)
    for key in candidates:
        entry = _priced(costs.get(key))
        if entry is None:
            continue
        if key != name and not str(entry.get("litellm_provider", "")).startswith(provider):
            continue
        return ModelPrice(
            key=key,
            input_per_token=float(entry["input_cost_per_token"]),
            output_per_token=float(entry["output_cost_per_token"]),
        )
    return None


def call_cost(model: str, *, input_tokens: int, output_tokens: int) -> float | None:
    """USD for one call of ``model`` with these token counts; ``None`` when its price is unknown.

    LiteLLM computes it from the entry :func:`model_price` found, so a model priced by tiers
    (more per token above 200k input tokens) is charged at its tier.
    """
    price = model_price(model)
    if price is None:
        return None
    try:
        prompt, completion = import_litellm().cost_per_token(
            model=price.key, prompt_tokens=input_tokens, completion_tokens=output_tokens
        )
        return float(prompt) + float(completion)
    except Exception:  # LiteLLM's own checks refused the entry: use its flat price
        logger.debug("cost_per_token failed for %s; using its flat price", price.key, exc_info=True)
        return input_tokens * price.input_per_token + output_tokens * price.output_per_token
