"""The images of a session's prompts (image snippets), by the SHA-256 their message's
``context`` names.

An image snippet's bytes are stored once, as an inline part of its prompt event; the prompt's
state delta (and so the message's ``context``) holds only its metadata, so loading a chat does
not ship every image to the plugin. The plugin asks for an image when it redraws the snippet's
chip (rewind, edit). Rewound prompts are searched too: their events stay in storage, and a
rewind is exactly when the plugin brings a prompt's images back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from google.adk.events.event import Event

from services.common.errors import InvalidArgument
from services.common.turn_scope import image_digest

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True)
class PromptImage:
    mime_type: str
    data: bytes


def check_digest(sha256: str) -> str:
    if not _SHA256.match(sha256):
        raise InvalidArgument(
            "An image is named by the hex SHA-256 of its bytes (64 characters 0-9a-f), as the "
            "message's context gives it.",
            code="invalid_image_id",
        )
    return sha256


def find_prompt_image(events: Iterable[Event], sha256: str) -> PromptImage | None:
    """The first image of a user event whose bytes hash to ``sha256``; None without one."""
    for event in events:
        if event.author != "user" or not (event.content and event.content.parts):
            continue
        for part in event.content.parts:
            blob = part.inline_data
            if blob is not None and blob.data and image_digest(blob.data) == sha256:
                return PromptImage(blob.mime_type or "application/octet-stream", blob.data)
    return None
