"""What the user put in scope for one turn: the gateway reads it from ``POST /chat``, the
agent's client carries it in ``agent.v1.ChatRequest``, and the agent turns it into the session
state its agents read (:func:`services.agent.research.turn_scope.scope_state`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from services.common.errors import InvalidArgument

# The plugin's scope chips (the session-lifecycle document's "papers, collection, or entire
# library"), stored as the session state's ``active_mode``.
Mode = Literal["items", "collection", "library"]
ITEMS: Mode = "items"
COLLECTION: Mode = "collection"
LIBRARY: Mode = "library"
MODES: tuple[Mode, ...] = get_args(Mode)


@dataclass
class TurnScope:
    """What the user put in scope for one turn.

    ``mode`` says which scope the turn searches: ``items`` (``item_key``, ``title``), the
    papers they selected; ``collection`` (``collection_key``, ``collection_name``), the
    collection they work in; ``library``, the whole library. The fields of the other modes are
    dropped, and a mode without its field is refused. Without a mode it is derived: items if
    any, else a collection if given, else the library. ``snippets`` (``text``, ``item_key``,
    ``page``, ``title``): the passages they selected in the reader, in every mode.
    """

    items: list[dict[str, str]] = field(default_factory=list)
    collection_key: str = ""
    collection_name: str = ""
    snippets: list[dict[str, Any]] = field(default_factory=list)
    mode: str = ""

    def __post_init__(self) -> None:
        problem = mode_problem(
            self.mode, items=bool(self.items), collection=bool(self.collection_key)
        )
        if problem:
            raise InvalidArgument(problem, code="invalid_mode")
        if not self.mode:
            self.mode = ITEMS if self.items else COLLECTION if self.collection_key else LIBRARY
        if self.mode != ITEMS:
            self.items = []
        if self.mode != COLLECTION:
            self.collection_key = self.collection_name = ""


def mode_problem(mode: str, *, items: bool, collection: bool) -> str | None:
    """Why ``mode`` cannot be the mode of a turn with (or without) items and a collection, for
    a person; ``None`` when it can. An empty mode always can (it is derived)."""
    if not mode:
        return None
    if mode not in MODES:
        return f"mode must be one of {', '.join(MODES)}, not {mode!r}."
    if mode == ITEMS and not items:
        return "mode 'items' needs the selected papers in active_items; send at least one."
    if mode == COLLECTION and not collection:
        return "mode 'collection' needs the collection's key in collection_key."
    return None
