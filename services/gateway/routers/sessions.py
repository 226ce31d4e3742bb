"""Session REST contract: list, create, get, rename, delete, storage stats, maintenance."""

from __future__ import annotations

import base64
from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, status
from pydantic import BaseModel, ConfigDict, Field

from services.gateway.deps import SessionId, State
from services.gateway.errors import COMMON_ERRORS, PEER_ERRORS, error_responses
from services.gateway.locks.base_chat_lock import SessionBusy
from services.gateway.schemas.base import Success
from services.gateway.schemas.sessions import (
    MaintenanceBody,
    PromptImageBody,
    SessionBody,
    SessionList,
    StorageStats,
)

router = APIRouter(
    prefix="/sessions",
    tags=["sessions"],
    responses=error_responses(*COMMON_ERRORS, *PEER_ERRORS),
)

MAX_TITLE = 200


class CreateSessionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(default="New Chat", max_length=MAX_TITLE, description="Shown in the list.")


class RenameSessionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=MAX_TITLE, description="The new title.")


@router.get("", summary="List session manifests, oldest first", response_model=SessionList)
async def list_sessions(state: State) -> dict[str, Any]:
    return {"status": "success", "sessions": await state.sessions.list_manifests()}


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    summary="Create a session",
    response_model=SessionBody,
    response_model_exclude_unset=True,
    responses=error_responses(422),
)
async def create_session(
    state: State, body: Annotated[CreateSessionBody | None, Body()] = None
) -> dict[str, Any]:
    title = (body or CreateSessionBody()).title
    return {"status": "success", "session": await state.sessions.create_chat(title=title)}


@router.get(
    "/storage_stats",
    summary="Size, pages, free pages and counts of sessions.db",
    response_model=StorageStats,
)
async def storage_stats(state: State) -> dict[str, Any]:
    return {"status": "success", **await state.sessions.storage_stats()}


@router.post(
    "/maintenance", summary="Apply retention and reclaim space now", response_model=MaintenanceBody
)
async def maintenance(state: State) -> dict[str, Any]:
    return {"status": "success", **await state.run_maintenance(reason="on_demand")}


@router.get(
    "/{session_id}",
    summary="A session with its messages and any pending checkpoint",
    response_model=SessionBody,
    response_model_exclude_unset=True,
    responses=error_responses(404, 422),
)
async def get_session(state: State, session_id: SessionId) -> dict[str, Any]:
    return {"status": "success", "session": await state.sessions.get_formatted(session_id)}


@router.get(
    "/{session_id}/images/{sha256}",
    summary="An image a question of the session carried (an image snippet)",
    response_model=PromptImageBody,
    responses=error_responses(
        404,
        422,
        notes={
            400: "`invalid_image_id`: not a hex SHA-256.",
            404: "`session_not_found`, `image_not_found`.",
        },
    ),
)
async def get_prompt_image(
    state: State,
    session_id: SessionId,
    sha256: Annotated[
        str, Path(description="The image's `sha256`, as the message's context names it.")
    ],
) -> dict[str, Any]:
    mime_type, data = await state.sessions.prompt_image(session_id, sha256=sha256)
    image = {"mime_type": mime_type, "data": base64.b64encode(data).decode("ascii")}
    return {"status": "success", "image": image}


@router.patch(
    "/{session_id}",
    summary="Rename a session",
    response_model=SessionBody,
    response_model_exclude_unset=True,
    responses=error_responses(404, 422),
)
async def rename_session(
    state: State, session_id: SessionId, body: RenameSessionBody
) -> dict[str, Any]:
    session = await state.sessions.rename(session_id, title=body.title)
    return {"status": "success", "session": session}


@router.delete(
    "/{session_id}",
    summary="Delete a session and its history",
    response_model=Success,
    responses=error_responses(
        404, 422, notes={409: "`session_busy`: a chat is running on the session."}
    ),
)
async def delete_session(state: State, session_id: SessionId) -> dict[str, Any]:
    try:
        held = await state.acquire_session(session_id)
    except SessionBusy:
        raise SessionBusy(
            "A chat is running on this session; wait for it to finish or stop it, then delete."
        ) from None
    try:  # holding the lock: no chat can start on the session while it is deleted
        await state.sessions.delete(session_id)
    finally:
        await state.chat_lock.release(held)
        state.vacuum_when_idle()  # maintenance counts this lock as a chat in flight too
    return {"status": "success"}
