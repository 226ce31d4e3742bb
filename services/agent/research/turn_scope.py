"""A turn's scope (:class:`services.common.turn_scope.TurnScope`: selected papers, a
collection, the whole library, and the passages the user pointed at) as the session state the
agents read."""

from __future__ import annotations

from typing import Any

from services.agent.research import state_keys as sk
from services.common.adk import names
from services.common.turn_scope import TurnScope


def scope_state(scope: TurnScope) -> dict[str, Any]:
    """The state delta of the turn's user message: the scope for the tools and the sessions
    service (its mode as ``active_mode``, always set), and the headers the coordinator's and
    the synthesizer's instructions show."""
    if scope.items:
        search_scope: str | list[str] = [i["item_key"] for i in scope.items]
        header = "# Active Zotero Selection Context\nThe user selected these papers:\n" + (
            "\n".join(f"- {i.get('title') or i['item_key']} ({i['item_key']})" for i in scope.items)
        )
    elif scope.collection_key:
        search_scope = f"collection:{scope.collection_key}"
        header = (
            "# Active Zotero Selection Context\nThe user is working in the collection "
            f"{scope.collection_name or scope.collection_key!r}."
        )
    else:
        search_scope, header = "library", ""
    return {
        names.ACTIVE_MODE: scope.mode,
        names.ACTIVE_CONTEXT_ITEMS: list(scope.items) or None,
        names.ACTIVE_COLLECTION: (
            {"key": scope.collection_key, "name": scope.collection_name}
            if scope.collection_key
            else None
        ),
        sk.ACTIVE_CONTEXT_ITEMS_STR: header,
        sk.SEARCH_SCOPE: search_scope,
        sk.FOCAL_SNIPPETS_STR: focal_snippets_str(scope.snippets, with_keys=False),
        sk.FOCAL_SNIPPETS_KEYED_STR: focal_snippets_str(scope.snippets, with_keys=True),
        names.SNIPPETS: list(scope.snippets),
    }


def focal_snippets_str(snippets: list[dict[str, Any]], *, with_keys: bool) -> str:
    """Snippets as ``<text_snippet ...>`` elements; keys only where tools need provenance."""
    out = []
    for s in snippets:
        attrs = []
        if with_keys and s.get("item_key"):
            attrs.append(f'key="{s["item_key"]}"')
        if s.get("title"):
            attrs.append(f'title="{_xml_attr(str(s["title"]))}"')
        if s.get("page"):
            attrs.append(f'page="{int(s["page"])}"')
        body = str(s.get("text", "")).replace("<", "&lt;").replace(">", "&gt;")
        out.append(f"<text_snippet {' '.join(attrs)}>{body}</text_snippet>")
    return "\n".join(out)


def _xml_attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
