"""Research turns: ``POST /chat`` and ``POST /chat/resume`` as server-sent events, and
``POST /sessions/{id}/rewind``.

Every route holds the session's chat lock for its whole run (renewed while streaming), so a
second request on a busy session gets 409 ``session_busy``. Refusals that the agent makes
before the run starts (``checkpoint_pending``, ``stale_interrupt``, ``session_not_found``,
bad input) arrive before the first event and are answered with their HTTP status; failures
after that end the stream with an ``error`` event. A client that disconnects cancels the gRPC
stream, which aborts the run on the agent, and the lock is released.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from pydantic_core import PydanticCustomError

from services.common.compaction_gate import evaluate_gate
from services.common.errors import Unavailable, ZocratesError
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
from services.gateway.deps import SESSION_ID_PATTERN, SessionId, State
from services.gateway.errors import COMMON_ERRORS, PEER_ERRORS, error_response, error_responses
from services.gateway.schemas.events import CHAT_STREAM
from services.gateway.schemas.sessions import SessionBody
from services.gateway.sse import error_frame, frame, sse_response
from services.gateway.state import COMPACTING, GatewayState

logger = logging.getLogger(__name__)
router = APIRouter(tags=["chat"], responses=error_responses(*COMMON_ERRORS, *PEER_ERRORS, 422))

_BUSY = "`session_busy`: another request runs on the session"
_STARTING = (
    "`starting_up`: start-up maintenance has not finished; `maintenance_running`: session "
    "maintenance (any replica's) ran past `ZOCRATES_MAINTENANCE_WAIT_SECONDS`; or a service is "
    "down (`agent_unavailable`, ...)."
)

ITEM_KEY_PATTERN = r"^[A-Z0-9]{8}$"
MAX_PROMPT_CHARS = 20_000
STARTUP_WAIT_SECONDS = 60.0


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


async def _wait_for_startup(state: GatewayState) -> None:
    """Wait (bounded) for this gateway's start-up maintenance. Maintenance that runs later,
    started by any route of any replica, is waited for when the session's lock is taken
    (``GatewayState.acquire_session``): only there can the wait and the lock be one step."""
    try:
        await asyncio.wait_for(state.startup_done.wait(), STARTUP_WAIT_SECONDS)
    except TimeoutError:
        raise Unavailable(
            "The gateway is still starting (start-up maintenance has not finished). "
            "Try again in a minute.",
            code="starting_up",
        ) from None


async def _stream_turn(
    state: GatewayState,
    request: Request,
    session_id: str,
    start: Callable[[], AsyncIterator[tuple[str, dict[str, Any]]]],
) -> StreamingResponse:
    """Relay an agent stream as SSE while holding the session's lock.

    The lock is renewed from the moment it is taken, and the agent's RPC is started only once
    it is held (a gRPC stream starts when it is created). The agent answers ``started`` once
    its checks pass, so everything before it is a refusal that keeps its HTTP status; the
    ``started`` event itself is not relayed.
    """
    held = await state.acquire_session(session_id)
    scope = contextlib.AsyncExitStack()
    await scope.enter_async_context(state.chat_lock.keep(held))
    if await request.is_disconnected():  # gave up while waiting for a compaction: no turn
        await scope.aclose()
        raise Unavailable("The client went away before the turn started.", code="client_gone")
    events = start()
    scope.push_async_callback(_close, events)
    try:
        first = await anext(events, None)
    except BaseException:
        await scope.aclose()
        raise
    if first is not None and first[0] != "started":
        logger.warning("agent stream began with %r instead of 'started'", first[0])

    turn = {"completed": False}

    async def frames() -> AsyncIterator[bytes]:
        # The lock (``scope``) is released by ``finish``, after the response has ended and
        # compaction has run, however the response ends.
        try:
            if first is not None and first[0] != "started":
                yield frame(first[0], first[1])
            async for kind, data in events:
                figures = data.pop("compaction", None) if kind == "done" else None
                if kind == "done" and data.get("status") == "completed" and not held.lost.is_set():
                    # Note the coming compaction before the client hears 'done', so a next
                    # question sent at once waits for it instead of getting 409.
                    turn["completed"] = await _compaction_due(state, session_id, figures)
                    if turn["completed"]:
                        await _note_compacting(state, session_id)
                if held.lost.is_set():
                    yield error_frame(
                        Unavailable(
                            "The session's chat lock was lost (the lock store stopped "
                            "answering); the turn was stopped. Reload the session.",
                            code="lock_lost",
                        )
                    )
                    return
                yield frame(kind, data)
        except ZocratesError as exc:
            logger.warning("turn on session %s failed: %s", session_id, exc)
            yield error_frame(exc)
        finally:
            await _close(events)  # the agent's stream ends before compaction starts

    async def finish() -> None:
        # After the answer, still holding the lock: compact (never before the first token).
        # The response is already complete; the next /chat on this session waits for this.
        try:
            if turn["completed"] and not held.lost.is_set():
                await asyncio.shield(_compact(state, session_id))
        finally:
            with contextlib.suppress(ZocratesError):
                await state.chat_lock.set_phase(session_id, None, ttl_seconds=0)
            await scope.aclose()
            state.vacuum_when_idle()  # a VACUUM deferred while this chat ran, if it was the last

    return sse_response(frames(), on_close=finish)


async def _compaction_due(state: GatewayState, session_id: str, figures: Any) -> bool:
    """The envelope gate, applied here from the figures the agent reported with ``done``
    (completed turns since the last compaction, the coordinator's prompt tokens), so a turn
    that cannot open it costs no RPC to the compactor and no span. The compactor applies the
    same gate again to the session it loads. Without figures (an older agent) the compactor
    decides."""
    if state.compactor is None:
        return False
    if not isinstance(figures, dict):
        return True
    try:
        config = await state.load_config()
    except ZocratesError as exc:
        logger.warning("cannot read the config for the compaction gate (%s); skipping", exc)
        return False
    tokens = figures.get("prompt_tokens")
    gate = evaluate_gate(
        int(figures.get("turns_since_compaction") or 0),
        int(tokens) if isinstance(tokens, int | float) else None,
        config,
    )
    if not gate.opens:
        logger.debug(
            "post-turn compaction of %s: skipped (%s) turns=%d tokens=%s at the gateway",
            session_id,
            gate.reason,
            gate.turns,
            gate.prompt_tokens,
        )
    return gate.opens


async def _note_compacting(state: GatewayState, session_id: str) -> None:
    try:
        await state.chat_lock.set_phase(
            session_id, COMPACTING, ttl_seconds=state.settings.compaction_timeout_seconds + 5
        )
    except ZocratesError as exc:
        logger.warning("cannot note the compaction of %s (%s); compacting anyway", session_id, exc)


async def _compact(state: GatewayState, session_id: str) -> None:
    settings = state.settings
    try:
        assert state.compactor is not None
        result = await state.compactor.evaluate(
            app_name=settings.app_name, user_id=settings.user_id, session_id=session_id
        )
        logger.info(
            "post-turn compaction of %s: %s (%s) in %.1f ms",
            session_id,
            result["outcome"],
            result["reason"],
            result["took_ms"],
        )
    except ZocratesError as exc:  # fail open: the turn is done and the session intact
        logger.warning("post-turn compaction of %s failed open: %s", session_id, exc)


async def _close(events: AsyncIterator[Any]) -> None:
    with contextlib.suppress(Exception):
        await events.aclose()  # type: ignore[attr-defined]


@router.post(
    "/chat",
    summary="Ask a question; streams `message` events, then `done` (or `request_input`)",
    response_class=StreamingResponse,
    responses={
        **CHAT_STREAM,
        **error_responses(
            notes={
                400: "`empty_prompt` and other bad input.",
                404: "`session_not_found`.",
                409: f"{_BUSY}; `checkpoint_pending`: a checkpoint waits for an answer.",
                413: (
                    "`prompt_too_long`: a question over 20,000 characters; "
                    "`payload_too_large`: a body over the gateway's limit."
                ),
                503: _STARTING,
            }
        ),
    },
)
async def chat(state: State, body: ChatBody, request: Request) -> Response:
    if len(body.prompt) > MAX_PROMPT_CHARS:
        return error_response(
            413,
            "prompt_too_long",
            f"The question is {len(body.prompt):,} characters long; at most "
            f"{MAX_PROMPT_CHARS:,} are taken. Shorten it, or pin the long passage as a snippet "
            "from the reader.",
        )
    await _wait_for_startup(state)
    scope = body.turn_scope()
    return await _stream_turn(
        state,
        request,
        body.session_id,
        lambda: state.agent.chat(
            app_name=state.settings.app_name,
            user_id=state.settings.user_id,
            session_id=body.session_id,
            prompt=body.prompt,
            scope=scope,
        ),
    )


@router.post(
    "/chat/resume",
    summary="Answer a deep-research checkpoint; the same turn continues as SSE",
    response_class=StreamingResponse,
    responses={
        **CHAT_STREAM,
        **error_responses(
            notes={
                400: "`invalid_action` and other bad input.",
                404: "`session_not_found`.",
                409: f"{_BUSY}; `stale_interrupt`: the session is not waiting for it.",
                503: _STARTING,
            }
        ),
    },
)
async def resume(state: State, body: ResumeBody, request: Request) -> StreamingResponse:
    await _wait_for_startup(state)
    return await _stream_turn(
        state,
        request,
        body.session_id,
        lambda: state.agent.resume(
            app_name=state.settings.app_name,
            user_id=state.settings.user_id,
            session_id=body.session_id,
            invocation_id=body.invocation_id,
            interrupt_id=body.interrupt_id,
            response=body.response.model_dump(),
        ),
    )


@router.post(
    "/sessions/{session_id}/rewind",
    summary="Discard a turn (and everything after it); returns the session as it is now",
    response_model=SessionBody,
    response_model_exclude_unset=True,
    responses=error_responses(
        notes={
            400: "`invalid_invocation_id`.",
            404: "`session_not_found`, `invocation_not_found`.",
            409: f"{_BUSY}.",
            503: _STARTING,
        }
    ),
)
async def rewind(state: State, session_id: SessionId, body: RewindBody) -> dict[str, Any]:
    await _wait_for_startup(state)
    held = await state.acquire_session(session_id)
    async with state.chat_lock.keep(held):
        await state.agent.rewind(
            app_name=state.settings.app_name,
            user_id=state.settings.user_id,
            session_id=session_id,
            invocation_id=body.invocation_id,
        )
        session = await state.sessions.get_formatted(session_id)
    state.vacuum_when_idle()  # in the background: the response is not delayed
    return {"status": "success", "session": session}
