"""What a turn cost: the tokens and dollars of its model calls, as the session stores them.

The agent stamps every model response of a remote model (Gemini, a LiteLLM model) with one
record in the response's ``custom_metadata``, under :data:`USAGE_KEY`::

    {"model": "openai/gpt-4o-mini", "input_tokens": 1234, "output_tokens": 210,
     "cost_usd": 0.00031}

(``cost_usd`` null when the model's price is unknown). ADK copies ``custom_metadata`` into the
event it stores, so the record lives in the session with the call it describes. The built-in
offline model's responses are never stamped: it reports token estimates for compaction, which
cost nothing and are no usage.

:func:`turn_usage` sums the records of a turn's events. The agent calls it for the ``done``
event of a chat turn and the sessions service for each turn of a reloaded chat, so both show
the same figure.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from google.adk.events.event import Event
    from google.adk.models.llm_response import LlmResponse

USAGE_KEY = "zocrates_usage"


class Usage(TypedDict):
    """One call's record, or a turn's sum. ``model``: the model's name as configured; for a
    turn that used several, their names in order of first use, joined by ", "."""

    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


def stamp_call(
    response: LlmResponse,
    *,
    model: str,
    input_tokens: int,
    output_tokens: int,
    cost_usd: float | None,
) -> None:
    """Record one remote model call on its response (kept in the stored event)."""
    record: Usage = {
        "model": model,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": cost_usd,
    }
    response.custom_metadata = {**(response.custom_metadata or {}), USAGE_KEY: record}


def _record(event: Event) -> dict[str, Any] | None:
    if event.partial:
        return None
    record = (event.custom_metadata or {}).get(USAGE_KEY)
    return record if isinstance(record, dict) else None


def turn_usage(events: Iterable[Event]) -> Usage | None:
    """The sum of the stamped calls among ``events``; ``None`` when there is none (a turn of
    the offline model). The cost is null as soon as one call's price is unknown."""
    models: list[str] = []
    input_tokens = output_tokens = 0
    cost: float | None = 0.0
    for event in events:
        record = _record(event)
        if record is None:
            continue
        model = str(record.get("model") or "")
        if model not in models:
            models.append(model)
        input_tokens += int(record.get("input_tokens") or 0)
        output_tokens += int(record.get("output_tokens") or 0)
        call_cost = record.get("cost_usd")
        cost = None if cost is None or call_cost is None else cost + float(call_cost)
    if not models:
        return None
    return {
        "model": ", ".join(models),
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": None if cost is None else round(cost, 10),
    }
