"""What the user put in scope for one turn: the gateway reads it from ``POST /chat``, the
agent's client carries it in ``agent.v1.ChatRequest``, and the agent turns it into the session
state its agents read (:func:`services.agent.research.turn_scope.scope_state`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from services.common.errors import InvalidArgument

# The plugin's scope chips ("papers, collection, or entire library"; docs/research.md, "Path
# of a turn"), stored as the session state's ``active_mode``.
Mode = Literal["items", "collection", "library"]
ITEMS: Mode = "items"
COLLECTION: Mode = "collection"
LIBRARY: Mode = "library"
MODES: tuple[Mode, ...] = get_args(Mode)

# A snippet is a passage of text (``kind`` "text", the default) or an image the user pinned
# from the reader (``kind`` "image": a figure or region, Zotero's image annotation).
TEXT_SNIPPET = "text"
IMAGE_SNIPPET = "image"
# What an image snippet may be: the types every vision model behind LiteLLM and Gemini take.
IMAGE_MIME_TYPES = ("image/png", "image/jpeg", "image/webp")
# Per image, decoded. Zotero renders an image annotation at 4x (288 dpi), so a half-page
# figure is a few hundred KB; the plugin shrinks a larger one before it sends it. The bytes
# live once in the prompt event (sessions.db), so the caps also bound how much a session grows.
MAX_IMAGE_BYTES = 2 * 1024 * 1024
MAX_IMAGE_SNIPPETS = 3  # per message, within the 10 snippets
_SIGNATURES = {
    "image/png": lambda b: b.startswith(b"\x89PNG\r\n\x1a\n"),
    "image/jpeg": lambda b: b.startswith(b"\xff\xd8\xff"),
    "image/webp": lambda b: b[:4] == b"RIFF" and b[8:12] == b"WEBP",
}


@dataclass
class TurnScope:
    """What the user put in scope for one turn.

    ``mode`` says which scope the turn searches: ``items`` (``item_key``, ``title``), the
    papers they selected; ``collection`` (``collection_key``, ``collection_name``), the
    collection they work in; ``library``, the whole library. The fields of the other modes are
    dropped, and a mode without its field is refused. Without a mode it is derived: items if
    any, else a collection if given, else the library. ``snippets`` (``text``, ``item_key``,
    ``page``, ``title``): the passages they selected in the reader, in every mode; an image
    snippet also has ``kind`` "image" and ``image`` (``mime_type``, ``data``: the decoded
    bytes), its ``text`` being the user's caption or comment (may be empty).
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


def is_image(snippet: dict[str, Any]) -> bool:
    return snippet.get("kind") == IMAGE_SNIPPET


def image_problem(mime_type: str, data: bytes) -> tuple[str, str] | None:
    """``(code, message)`` saying why ``data`` cannot be an image snippet of ``mime_type``,
    for a person; ``None`` when it can. The gateway answers 422 with that code, the agent
    refuses a request with it."""
    if mime_type not in IMAGE_MIME_TYPES:
        return (
            "unsupported_image_type",
            f"image.mime_type must be one of {', '.join(IMAGE_MIME_TYPES)}, not {mime_type!r}. "
            "Convert the image to PNG, JPEG or WebP.",
        )
    if not data:
        return "invalid_image", "image.data is empty: send the image's bytes, base64-encoded."
    too_large = image_size_problem(len(data))
    if too_large:
        return too_large
    if not _SIGNATURES[mime_type](data):
        return (
            "invalid_image",
            f"image.data is not a {mime_type.split('/')[1].upper()} image (its first bytes do "
            "not match the type); send the image file itself, base64-encoded.",
        )
    return None


def image_size_problem(size: int) -> tuple[str, str] | None:
    """``image_too_large`` and its message when ``size`` bytes exceed the cap."""
    if size <= MAX_IMAGE_BYTES:
        return None
    return (
        "image_too_large",
        f"The image has {size / 1_048_576:.1f} MB; an image snippet may have at most "
        f"{MAX_IMAGE_BYTES // 1_048_576} MB. Pin a smaller region, or send it scaled down.",
    )


def image_digest(data: bytes) -> str:
    """The name an image goes by in a message's ``context`` (hex SHA-256 of its bytes)."""
    return hashlib.sha256(data).hexdigest()
