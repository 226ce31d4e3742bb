"""The request bodies of the chat routes (``/chat``, ``/chat/resume``, rewind): their
validation, and the turn scope a chat body stands for."""

from __future__ import annotations

import base64
import binascii
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from pydantic_core import PydanticCustomError

from services.common.turn_scope import (
    IMAGE_MIME_TYPES,
    IMAGE_SNIPPET,
    MAX_IMAGE_BYTES,
    MAX_IMAGE_SNIPPETS,
    TEXT_SNIPPET,
    Mode,
    TurnScope,
    image_problem,
    image_size_problem,
    mode_problem,
)
from services.gateway.deps import SESSION_ID_PATTERN

ITEM_KEY_PATTERN = r"^[A-Z0-9]{8}$"
MAX_PROMPT_CHARS = 20_000


class ActiveItem(BaseModel):
    model_config = ConfigDict(extra="ignore")
    item_key: str = Field(pattern=ITEM_KEY_PATTERN, description="Zotero item key.")
    title: str = Field(default="", max_length=500)


# base64 of MAX_IMAGE_BYTES: a longer string is refused before it is decoded.
_MAX_IMAGE_BASE64 = 4 * -(-MAX_IMAGE_BYTES // 3)


class ImageBody(BaseModel):
    """An image snippet's bytes. Refusals are 422s with their own codes:
    ``unsupported_image_type``, ``image_too_large``, ``invalid_image`` (not base64, or not
    an image of the type it claims)."""

    model_config = ConfigDict(extra="forbid")
    mime_type: str = Field(description=f"One of {', '.join(IMAGE_MIME_TYPES)}.")
    data: str = Field(
        description=(
            "The image file, base64 (standard alphabet, padded; no `data:` prefix), at most "
            f"{MAX_IMAGE_BYTES // 1_048_576} MB decoded."
        )
    )
    _decoded: bytes = PrivateAttr(default=b"")

    @model_validator(mode="after")
    def _is_an_image(self) -> ImageBody:
        if self.mime_type not in IMAGE_MIME_TYPES:
            code, message = image_problem(self.mime_type, b"") or ("", "")
            raise PydanticCustomError(code, message)
        text = "".join(self.data.split())
        if text.startswith("data:"):
            raise PydanticCustomError(
                "invalid_image",
                "image.data is a data: URL; send only the base64 text after its comma.",
            )
        too_large = len(text) > _MAX_IMAGE_BASE64 and image_size_problem(len(text) * 3 // 4)
        if too_large:
            raise PydanticCustomError(*too_large)
        try:
            self._decoded = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise PydanticCustomError(
                "invalid_image",
                "image.data is not valid base64 (standard alphabet A-Z a-z 0-9 + /, padded "
                "with =); encode the image file's bytes, e.g. with btoa or base64.b64encode.",
            ) from None
        problem = image_problem(self.mime_type, self._decoded)
        if problem:
            raise PydanticCustomError(*problem)
        return self

    @property
    def decoded(self) -> bytes:
        return self._decoded


class SnippetBody(BaseModel):
    """A passage (``kind`` "text", the default) or an image (``kind`` "image", with
    ``image``) the user pinned from the reader."""

    model_config = ConfigDict(extra="ignore")
    kind: Literal["text", "image"] = Field(
        default="text", description="`text` (a passage) or `image` (a figure or region)."
    )
    text: str = Field(
        default="",
        max_length=8000,
        description="The passage; for an image, the user's caption or comment (may be empty).",
    )
    item_key: str = Field(default="", pattern=r"^([A-Z0-9]{8})?$")
    page: int | None = Field(default=None, ge=1, le=100_000)
    title: str = Field(default="", max_length=500)
    image: ImageBody | None = Field(
        default=None, description="The image of an `image` snippet (only there)."
    )

    @model_validator(mode="after")
    def _has_its_content(self) -> SnippetBody:
        if self.kind == TEXT_SNIPPET and self.image is not None:
            raise PydanticCustomError("snippet_kind", "a snippet with an image needs kind 'image'.")
        if self.kind == TEXT_SNIPPET and not self.text:
            raise PydanticCustomError("snippet_text", "a text snippet needs its text.")
        if self.kind == IMAGE_SNIPPET and self.image is None:
            raise PydanticCustomError(
                "snippet_image", "an image snippet needs its image (mime_type and data)."
            )
        return self

    def scope_dict(self) -> dict[str, Any]:
        """The snippet as :class:`TurnScope` carries it (a text snippet as it always was)."""
        out: dict[str, Any] = {
            "text": self.text,
            "item_key": self.item_key,
            "page": self.page,
            "title": self.title,
        }
        if self.image is not None:
            out = {
                "kind": IMAGE_SNIPPET,
                **out,
                "image": {"mime_type": self.image.mime_type, "data": self.image.decoded},
            }
        return out


class ChatBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str = Field(pattern=SESSION_ID_PATTERN)
    # Longer prompts are refused with 413 ``prompt_too_long`` by the route (a size, not a
    # shape: pydantic's max_length would make it a 422).
    prompt: str = Field(min_length=1, json_schema_extra={"maxLength": MAX_PROMPT_CHARS})
    active_items: list[ActiveItem] | None = Field(
        default=None, max_length=500, description="Selected papers; null: no selection."
    )
    collection_key: str | None = Field(default=None, pattern=ITEM_KEY_PATTERN)
    collection_name: str = Field(default="", max_length=500)
    snippets: list[SnippetBody] = Field(
        default_factory=list,
        max_length=10,
        description=f"Pinned passages and images (at most {MAX_IMAGE_SNIPPETS} images).",
    )
    mode: Mode | None = Field(
        default=None,
        description=(
            "What the turn searches: `items` (needs `active_items`), `collection` (needs "
            "`collection_key`) or `library`; the other scope fields are then ignored. Null: "
            "items if any, else the collection if given, else the library. Stored as the "
            "session's `active_mode` and in the message's `context`."
        ),
    )

    @model_validator(mode="after")
    def _mode_has_its_scope(self) -> ChatBody:
        problem = mode_problem(
            self.mode or "", items=bool(self.active_items), collection=bool(self.collection_key)
        )
        if problem:
            raise PydanticCustomError("invalid_mode", problem)
        images = sum(1 for s in self.snippets if s.kind == IMAGE_SNIPPET)
        if images > MAX_IMAGE_SNIPPETS:
            raise PydanticCustomError(
                "too_many_images",
                f"{images} image snippets; a question may carry at most {MAX_IMAGE_SNIPPETS}. "
                "Unpin some of them.",
            )
        return self

    def turn_scope(self) -> TurnScope:
        return TurnScope(
            items=[{"item_key": i.item_key, "title": i.title} for i in self.active_items or []],
            collection_key=self.collection_key or "",
            collection_name=self.collection_name,
            snippets=[s.scope_dict() for s in self.snippets],
            mode=self.mode or "",
        )


class ResumeResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Literal["extend_budget", "synthesize"]
    guidance: str | None = Field(default=None, max_length=2000)


class ResumeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str = Field(pattern=SESSION_ID_PATTERN)
    invocation_id: str = Field(min_length=1, max_length=200)
    interrupt_id: str = Field(min_length=1, max_length=200)
    response: ResumeResponse


class RewindBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    invocation_id: str = Field(min_length=1, max_length=200)
