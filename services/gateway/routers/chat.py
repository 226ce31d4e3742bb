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
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from services.common.compaction_gate import evaluate_gate
from services.common.errors import Unavailable, ZocratesError
from services.gateway import metrics
from services.gateway.deps import SessionId, State
from services.gateway.errors import COMMON_ERRORS, PEER_ERRORS, error_response, error_responses
from services.gateway.schemas.chat import MAX_PROMPT_CHARS, ChatBody, ResumeBody, RewindBody
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

STARTUP_WAIT_SECONDS = 60.0


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
    *,
    route: str,
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

    turn: dict[str, Any] = {"completed": False, "outcome": "cancelled"}
    metrics.ACTIVE_CHATS.inc()  # until ``finish``, which runs however the response ends

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
                    turn["outcome"] = "failed"
                    metrics.CHAT_LOCKS_LOST.inc()
                    yield error_frame(
                        Unavailable(
                            "The session's chat lock was lost (the lock store stopped "
                            "answering); the turn was stopped. Reload the session.",
                            code="lock_lost",
                        )
                    )
                    return
                _count_event(turn, kind, data)
                yield frame(kind, data)
        except ZocratesError as exc:
            logger.warning("turn on session %s failed: %s", session_id, exc)
            turn["outcome"] = "failed"
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
            metrics.ACTIVE_CHATS.dec()
            metrics.TURNS.labels(route, turn["outcome"]).inc()
            with contextlib.suppress(ZocratesError):
                await state.chat_lock.set_phase(session_id, None, ttl_seconds=0)
            await scope.aclose()
            state.vacuum_when_idle()  # a VACUUM deferred while this chat ran, if it was the last

    return sse_response(frames(), on_close=finish)


def _count_event(turn: dict[str, Any], kind: str, data: dict[str, Any]) -> None:
    """The metrics of one relayed event: a checkpoint offered, or how the turn ended (an
    ``error`` event from the agent fails it; a stream cut before ``done`` is 'cancelled')."""
    if kind == "request_input":
        metrics.CHECKPOINTS_OFFERED.inc()
    elif kind == "error":
        turn["outcome"] = "failed"
    elif kind == "done":
        status = data.get("status")
        turn["outcome"] = status if status in ("completed", "paused") else "failed"


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
            app_name=settings.app_name,
            user_id=settings.user_id,
            session_id=session_id,
            config=await state.load_config(),
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
    # The settings of the registered data directory go with the turn: the agent's own
    # directory is the one it started on, not necessarily the one /register chose.
    config = await state.load_config()
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
            config=config,
        ),
        route="chat",
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
    config = await state.load_config()
    response = await _stream_turn(
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
            config=config,
        ),
        route="resume",
    )
    # The agent started the turn: it accepted the answer (refusals raised above).
    metrics.CHECKPOINT_ANSWERS.labels(body.response.action).inc()
    return response


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
