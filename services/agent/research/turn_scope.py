"""A turn's scope (:class:`services.common.turn_scope.TurnScope`: selected papers, a
collection, the whole library, and the passages and images the user pointed at) as the session
state the agents read and the parts of the turn's user message.

An image snippet's bytes travel once, as an inline image part of the user message (after its
text, in snippet order), so the coordinator's model sees them in the conversation as it sees
the question. Everything else that names the image carries metadata only: the state delta's
``snippets`` (``image``: ``mime_type``, ``size``, ``sha256``, ``part``, the index of its part in
the message; the sessions service hands it back as the message's ``context`` and serves the
bytes by ``sha256``), and the ``<image_snippet>`` elements of the instructions, which point at
the image by its ordinal (``image="1"``) and hold the user's caption.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from google.adk.events.event import Event
from google.genai import types

from services.agent.research import state_keys as sk
from services.common.adk import names
from services.common.turn_scope import TurnScope, image_digest, is_image


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
        names.SNIPPETS: snippet_records(scope.snippets),
    }


def prompt_parts(prompt: str, snippets: list[dict[str, Any]]) -> list[types.Part]:
    """The user message's parts: the question, then each image snippet's image."""
    return [types.Part(text=prompt)] + [
        types.Part(
            inline_data=types.Blob(mime_type=s["image"]["mime_type"], data=s["image"]["data"])
        )
        for s in snippets
        if is_image(s)
    ]


def snippet_records(snippets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The snippets as the prompt's state delta keeps them: text ones as sent, image ones with
    their image's metadata in place of its bytes (``part``: its index in the message)."""
    out = []
    part = 0
    for s in snippets:
        if not is_image(s):
            out.append(dict(s))
            continue
        part += 1
        data = s["image"]["data"]
        out.append(
            {
                **{k: v for k, v in s.items() if k != "image"},
                "image": {
                    "mime_type": s["image"]["mime_type"],
                    "size": len(data),
                    "sha256": image_digest(data),
                    "part": part,
                },
            }
        )
    return out


def focal_snippets_str(snippets: list[dict[str, Any]], *, with_keys: bool) -> str:
    """Snippets as ``<text_snippet ...>`` and ``<image_snippet ...>`` elements; keys only where
    tools need provenance. An image's element names its ordinal among the message's images
    (``image="1"``) and holds the user's caption (empty without one)."""
    out = []
    images = 0
    for s in snippets:
        attrs = []
        if with_keys and s.get("item_key"):
            attrs.append(f'key="{s["item_key"]}"')
        if is_image(s):
            images += 1
            attrs.append(f'image="{images}"')
        if s.get("title"):
            attrs.append(f'title="{_xml_attr(str(s["title"]))}"')
        if s.get("page"):
            attrs.append(f'page="{int(s["page"])}"')
        tag = "image_snippet" if is_image(s) else "text_snippet"
        body = str(s.get("text", "")).replace("<", "&lt;").replace(">", "&gt;")
        out.append(f"<{tag} {' '.join(attrs)}>{body}</{tag}>")
    return "\n".join(out)


def prompt_images(events: Iterable[Event], invocation_id: str) -> list[types.Part]:
    """The image parts of an invocation's prompt (its user message with text), in order; none
    when it had no image snippets. The search pipeline hands them to the synthesizer."""
    for event in events:
        if (
            event.author == "user"
            and event.invocation_id == invocation_id
            and event.content
            and event.content.parts
            and not event.get_function_responses()
            and any(p.text for p in event.content.parts)
        ):
            return [p for p in event.content.parts if p.inline_data is not None]
    return []


def _xml_attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
