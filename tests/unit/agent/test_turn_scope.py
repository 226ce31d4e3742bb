"""A turn's scope as the state delta of its user message: ``active_mode`` is always written
(as sent, or derived from the scope), and a mode keeps only its own scope."""

from __future__ import annotations

import hashlib

import pytest

from services.agent.research import state_keys as sk
from services.agent.research.turn_scope import prompt_parts, scope_state
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


# -- image snippets -------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 32
IMAGE = {
    "kind": "image",
    "text": "Figure 2: profile <zeta> plots",
    "item_key": "ABCD1234",
    "page": 7,
    "title": 'lme4 "fits"',
    "image": {"mime_type": "image/png", "data": PNG},
}


def test_an_image_snippet_is_an_image_snippet_element_keys_only_for_retrieval() -> None:
    state = scope_state(TurnScope(snippets=[SNIPPET, IMAGE]))
    shown = state[sk.FOCAL_SNIPPETS_STR]
    assert shown.splitlines() == [
        '<text_snippet title="lme4" page="3">REML</text_snippet>',
        '<image_snippet image="1" title="lme4 &quot;fits&quot;" page="7">'
        "Figure 2: profile &lt;zeta&gt; plots</image_snippet>",
    ]
    keyed = state[sk.FOCAL_SNIPPETS_KEYED_STR]
    assert '<image_snippet key="ABCD1234" image="1" title=' in keyed
    assert "key=" not in shown


def test_the_state_delta_names_the_image_without_its_bytes() -> None:
    state = scope_state(TurnScope(snippets=[SNIPPET, IMAGE]))
    text, image = state[names.SNIPPETS]
    assert text == SNIPPET
    assert image == {
        "kind": "image",
        "text": IMAGE["text"],
        "item_key": "ABCD1234",
        "page": 7,
        "title": IMAGE["title"],
        "image": {
            "mime_type": "image/png",
            "size": len(PNG),
            "sha256": hashlib.sha256(PNG).hexdigest(),
            "part": 1,
        },
    }
    assert PNG not in repr(state).encode()


def test_the_user_message_carries_the_question_then_each_image_once() -> None:
    second = {**IMAGE, "image": {"mime_type": "image/jpeg", "data": b"\xff\xd8\xff"}}
    parts = prompt_parts("What does it show?", [SNIPPET, IMAGE, second])
    assert parts[0].text == "What does it show?"
    assert [(p.inline_data.mime_type, p.inline_data.data) for p in parts[1:]] == [  # type: ignore[union-attr]
        ("image/png", PNG),
        ("image/jpeg", b"\xff\xd8\xff"),
    ]
    records = scope_state(TurnScope(snippets=[SNIPPET, IMAGE, second]))[names.SNIPPETS]
    assert [r["image"]["part"] for r in records if "image" in r] == [1, 2]
