"""A turn's scope as the state delta of its user message: ``active_mode`` is always written
(as sent, or derived from the scope), and a mode keeps only its own scope."""

from __future__ import annotations

import pytest

from services.agent.research import state_keys as sk
from services.agent.research.turn_scope import scope_state
from services.common.adk import names
from services.common.errors import InvalidArgument
from services.common.turn_scope import TurnScope

ITEM = {"item_key": "ABCD1234", "title": "lme4"}
SNIPPET = {"text": "REML", "item_key": "ABCD1234", "page": 3, "title": "lme4"}


@pytest.mark.parametrize(
    ("scope", "mode", "search_scope"),
    [
        (TurnScope(items=[ITEM], collection_key="COLL0001"), "items", ["ABCD1234"]),
        (
            TurnScope(collection_key="COLL0001", collection_name="Stats"),
            "collection",
            "collection:COLL0001",
        ),
        (TurnScope(), "library", "library"),
    ],
)
def test_the_derived_mode_is_written(scope: TurnScope, mode: str, search_scope: object) -> None:
    state = scope_state(scope)
    assert state[names.ACTIVE_MODE] == mode
    assert state[sk.SEARCH_SCOPE] == search_scope


def test_a_sent_mode_is_written_and_keeps_only_its_scope() -> None:
    state = scope_state(
        TurnScope(items=[ITEM], collection_key="COLL0001", snippets=[SNIPPET], mode="collection")
    )
    assert state[names.ACTIVE_MODE] == "collection"
    assert state[names.ACTIVE_CONTEXT_ITEMS] is None
    assert state[names.ACTIVE_COLLECTION] == {"key": "COLL0001", "name": ""}
    assert state[names.SNIPPETS] == [SNIPPET]  # snippets count in every mode

    library = scope_state(TurnScope(items=[ITEM], collection_key="COLL0001", mode="library"))
    assert library[names.ACTIVE_MODE] == "library" and library[sk.SEARCH_SCOPE] == "library"
    assert library[names.ACTIVE_CONTEXT_ITEMS] is None and library[names.ACTIVE_COLLECTION] is None
    assert library[sk.ACTIVE_CONTEXT_ITEMS_STR] == ""


@pytest.mark.parametrize(
    ("scope", "needs"),
    [
        ({"mode": "papers"}, "items, collection, library"),
        ({"mode": "items", "collection_key": "COLL0001"}, "active_items"),
        ({"mode": "collection", "items": [ITEM]}, "collection_key"),
    ],
)
def test_a_bad_or_unbacked_mode_is_refused(scope: dict[str, object], needs: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        TurnScope(**scope)  # type: ignore[arg-type]
    assert refused.value.code == "invalid_mode" and needs in refused.value.message
