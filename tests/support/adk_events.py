"""Builders of real ADK events, shaped as ADK's runner and workflows write them."""

from __future__ import annotations

import time
import uuid
from typing import Any

import sqlalchemy as sa
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.sessions.schemas.v1 import StorageSession
from google.genai import types

from services.sessions.store import SessionStore


def _id() -> str:
    return str(uuid.uuid4())


def user_text(
    text: str,
    *,
    invocation_id: str,
    state_delta: dict[str, Any] | None = None,
    ts: float | None = None,
) -> Event:
    return Event(
        id=_id(),
        author="user",
        invocation_id=invocation_id,
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=state_delta or {}),
        timestamp=ts or time.time(),
    )


def model_text(
    text: str,
    *,
    invocation_id: str,
    thought: str | None = None,
    author: str = "coordinator",
    isolation_scope: str | None = None,
    ts: float | None = None,
) -> Event:
    parts = []
    if thought:
        parts.append(types.Part(text=thought, thought=True))
    parts.append(types.Part(text=text))
    return Event(
        id=_id(),
        author=author,
        invocation_id=invocation_id,
        content=types.Content(role="model", parts=parts),
        isolation_scope=isolation_scope,
        timestamp=ts or time.time(),
    )


def tool_call(
    name: str, args: dict[str, Any], *, invocation_id: str, author: str = "coordinator"
) -> Event:
    return Event(
        id=_id(),
        author=author,
        invocation_id=invocation_id,
        content=types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(id=_id(), name=name, args=args))],
        ),
    )


def request_input(
    interrupt_id: str, *, invocation_id: str, payload: dict[str, Any], message: str
) -> Event:
    """What ADK's workflow writes when a node yields RequestInput."""
    return Event(
        id=_id(),
        author="search_budget_checkpoint",
        invocation_id=invocation_id,
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id=interrupt_id,
                        name="adk_request_input",
                        args={
                            "interruptId": interrupt_id,
                            "payload": payload,
                            "message": message,
                            "response_schema": None,
                        },
                    )
                )
            ],
        ),
        long_running_tool_ids={interrupt_id},
    )


CHECKPOINT_PAYLOAD = {"aspects": ["methods", "datasets"], "extension": 1}


def checkpointed_turn(interrupt_id: str = "interrupt_ext_1", inv: str = "inv-9") -> list[Event]:
    """A research turn paused at a deep-research checkpoint (payload ``CHECKPOINT_PAYLOAD``)."""
    return [
        user_text("deep research please", invocation_id=inv),
        model_text("searching", invocation_id=inv),
        request_input(
            interrupt_id,
            invocation_id=inv,
            payload=CHECKPOINT_PAYLOAD,
            message="Deep research limit reached. Continue?",
        ),
    ]


def request_input_response(
    interrupt_id: str, *, invocation_id: str, response: dict[str, Any]
) -> Event:
    """The user's answer to a checkpoint (POST /chat/resume)."""
    return Event(
        id=_id(),
        author="user",
        invocation_id=invocation_id,
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=interrupt_id, name="adk_request_input", response=response
                    )
                )
            ],
        ),
    )


def compaction(start: float, end: float, summary: str) -> Event:
    return Event(
        id=_id(),
        author="user",
        invocation_id=_id(),
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=start,
                end_timestamp=end,
                compacted_content=types.Content(role="model", parts=[types.Part(text=summary)]),
            )
        ),
    )


def rewind(before_invocation_id: str) -> Event:
    return Event(
        id=_id(),
        author="user",
        invocation_id=_id(),
        actions=EventActions(rewind_before_invocation_id=before_invocation_id),
    )


async def set_update_time(store: SessionStore, session_id: str, epoch: float) -> None:
    """Move a session's last update into the past, as if it had been idle."""
    table = StorageSession.__table__
    async with store.engine.begin() as conn:
        await conn.execute(
            table.update()
            .where(table.c.id == session_id)
            .values(
                update_time=sa.literal(_naive_utc(epoch)), create_time=sa.literal(_naive_utc(epoch))
            )
        )


def _naive_utc(epoch: float):  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, tz=UTC).replace(tzinfo=None)
