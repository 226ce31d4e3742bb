"""What the user put in scope for one turn: the gateway reads it from ``POST /chat``, the
agent's client carries it in ``agent.v1.ChatRequest``, and the agent turns it into the session
state its agents read (:func:`services.agent.research.turn_scope.scope_state`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class TurnScope:
    """What the user put in scope for one turn.

    ``items`` (``item_key``, ``title``): the papers they selected; else ``collection_key`` and
    ``collection_name``: the collection they work in; neither: the whole library. ``snippets``
    (``text``, ``item_key``, ``page``, ``title``): the passages they selected in the reader.
    """

    items: list[dict[str, str]] = field(default_factory=list)
    collection_key: str = ""
    collection_name: str = ""
    snippets: list[dict[str, Any]] = field(default_factory=list)
