"""What the user put in scope for one turn (selected papers, a collection, the whole library)
and the passages they pointed at, as the session state the agents read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from services.agent.research import state_keys as sk
from services.common.adk import names


@dataclass
class TurnScope:
    """What the user put in scope for one turn."""

    items: list[dict[str, str]] = field(default_factory=list)
    collection_key: str = ""
    collection_name: str = ""
    snippets: list[dict[str, Any]] = field(default_factory=list)

    def state_delta(self) -> dict[str, Any]:
        if self.items:
            scope: str | list[str] = [i["item_key"] for i in self.items]
            header = "# Active Zotero Selection Context\nThe user selected these papers:\n" + (
                "\n".join(
                    f"- {i.get('title') or i['item_key']} ({i['item_key']})" for i in self.items
                )
            )
        elif self.collection_key:
            scope = f"collection:{self.collection_key}"
            header = (
                "# Active Zotero Selection Context\nThe user is working in the collection "
                f"{self.collection_name or self.collection_key!r}."
            )
        else:
            scope, header = "library", ""
        return {
            names.ACTIVE_CONTEXT_ITEMS: list(self.items) or None,
            names.ACTIVE_COLLECTION: (
                {"key": self.collection_key, "name": self.collection_name}
                if self.collection_key
                else None
            ),
            sk.ACTIVE_CONTEXT_ITEMS_STR: header,
            sk.SEARCH_SCOPE: scope,
            sk.FOCAL_SNIPPETS_STR: focal_snippets_str(self.snippets, with_keys=False),
            sk.FOCAL_SNIPPETS_KEYED_STR: focal_snippets_str(self.snippets, with_keys=True),
            names.SNIPPETS: list(self.snippets),
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
