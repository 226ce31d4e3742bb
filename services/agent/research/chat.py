"""Research turns over ADK's Runner: chat, resume after a checkpoint, rewind.

``ChatService`` owns one ``Runner`` (the coordinator over a ``RemoteSessionService``) and turns
ADK events into the client's wire events:

- ``message``: ``{event_id, invocation_id, author, partial, kind, parts}`` where ``kind`` is
  ``answer`` (the text the user reads: the synthesizer's, or the coordinator's own), ``step``
  (tool calls and results, search passes) or ``thought``;
- ``request_input``: the checkpoint card, ``{interrupt_id, invocation_id, message, payload}``;
- ``done``: ``{status: "completed" | "paused", invocation_id, answer, citations, usage}``;
  ``usage`` (:func:`services.common.turn_usage.turn_usage`) sums the remote model calls of the
  whole turn so far, those before a checkpoint included when the turn resumes; null when only
  the offline model answered; ``compaction``
  (:func:`services.common.adk.turns.compaction_figures`): ``{turns_since_compaction,
  prompt_tokens}`` after the turn, the figures the gateway's envelope gate reads so a turn
  that cannot open it costs no call to the compactor (the gateway does not relay them).

Refusals happen before the run starts, so the gateway can answer them with an HTTP status:
a new message while a checkpoint waits (``checkpoint_pending``), a resume for an interrupt the
session is not waiting for (``stale_interrupt``). A caller that goes away aborts the run through
ADK's abort signal, which seals the invocation so the session stays consistent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.errors import StaleSessionError
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.session import Session
from google.genai import types

from services.agent.research.pipeline import EXTEND, SYNTHESIZE
from services.agent.research.run_locks import KeyedLocks, wait_through_cancellation
from services.agent.research.sealing import closing_events
from services.agent.research.turn_scope import prompt_parts, scope_state
from services.agent.research.wire import WireEvent, search_result, wire_events
from services.common.adk.history import find_pending_hitl
from services.common.adk.internals import build_abort_events
from services.common.adk.names import REQUEST_INPUT
from services.common.adk.runner import find_active_task_scope
from services.common.adk.turns import compaction_figures
from services.common.errors import Conflict, InvalidArgument, NotFound, StaleSession
from services.common.local_models import model_failure
from services.common.turn_scope import MAX_IMAGE_SNIPPETS, TurnScope, image_problem, is_image
from services.common.turn_usage import turn_usage

logger = logging.getLogger(__name__)

MAX_PROMPT_CHARS = 20_000
# A run that was just cancelled may still be sealing its invocation (abort events) when the
# next request on the session arrives: wait this long for it on this replica.
PREVIOUS_RUN_WAIT_SECONDS = 15.0
STALE_RETRIES = 3
MAX_SNIPPETS = 10


@dataclass
class _RunProgress:
    saw_event: bool = False


class ChatService:
    def __init__(
        self,
        *,
        runner: Runner,
        session_service: BaseSessionService,
        app_name: str,
        streaming: bool = True,
        locks: KeyedLocks | None = None,
        model_api_base: str = "",
    ) -> None:
        self.runner = runner
        self.model_api_base = model_api_base  # named in a model server's errors
        self.sessions = session_service
        self.app_name = app_name
        self.streaming = streaming
        self.locks = locks or KeyedLocks()

    async def _session(self, app_name: str, user_id: str, session_id: str) -> Session:
        if app_name and app_name != self.app_name:
            raise InvalidArgument(f"This agent serves app {self.app_name!r}, not {app_name!r}.")
        session = await self.sessions.get_session(
            app_name=self.app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise NotFound(f"No session {session_id!r}.", code="session_not_found")
        return session

    def _run_config(self) -> RunConfig:
        return RunConfig(streaming_mode=StreamingMode.SSE if self.streaming else StreamingMode.NONE)

    async def _seal(self, session: Session, invocation_id: str, why: str) -> Session:
        """Seal an invocation that ended without ADK sealing it (a crash, a failed write): its
        dangling calls get error responses and ADK then counts its isolation scopes as closed,
        so the next question reaches the coordinator instead of a dead search pipeline."""
        events = build_abort_events(
            session.events,
            invocation_id=invocation_id,
            root_agent_name=self.runner.agent.name,
            branch=None,
        ) or closing_events(session, invocation_id)
        logger.warning(
            "sealing invocation %s of session %s (%s): %d event(s)",
            invocation_id,
            session.id,
            why,
            len(events),
        )
        for event in events:
            await self.sessions.append_event(session, event)
        return session

    async def _seal_dead_scope(self, session: Session) -> Session:
        active = find_active_task_scope(session)
        if active is None or find_pending_hitl(session.events) is not None:
            return session  # nothing open, or a checkpoint legitimately waiting
        _, invocation_id = active
        return await self._seal(session, invocation_id, "left open by an earlier run")

    async def chat(
        self, *, app_name: str, user_id: str, session_id: str, prompt: str, scope: TurnScope
    ) -> AsyncIterator[WireEvent]:
        prompt = prompt.strip()
        if not prompt:
            raise InvalidArgument("The prompt is empty.", code="empty_prompt")
        if len(prompt) > MAX_PROMPT_CHARS:
            raise InvalidArgument(
                f"The prompt has {len(prompt)} characters; the limit is {MAX_PROMPT_CHARS}.",
                code="prompt_too_long",
            )
        if len(scope.snippets) > MAX_SNIPPETS:
            raise InvalidArgument(f"At most {MAX_SNIPPETS} snippets per message.")
        images = [s["image"] for s in scope.snippets if is_image(s)]
        if len(images) > MAX_IMAGE_SNIPPETS:
            raise InvalidArgument(
                f"At most {MAX_IMAGE_SNIPPETS} image snippets per message.",
                code="too_many_images",
            )
        for image in images:
            problem = image_problem(str(image.get("mime_type")), bytes(image.get("data") or b""))
            if problem:
                raise InvalidArgument(problem[1], code=problem[0])

        def check(session: Session) -> None:
            pending = find_pending_hitl(session.events)
            if pending is not None:
                raise Conflict(
                    "This chat is waiting at a deep-research checkpoint. Answer it (grant an "
                    "extension or synthesize now) with /chat/resume, or discard that turn with "
                    f"/sessions/{session_id}/rewind (invocation_id {pending['invocation_id']}).",
                    code="checkpoint_pending",
                )

        # The question, then each image snippet's image: the one copy of its bytes.
        message = types.Content(role="user", parts=prompt_parts(prompt, scope.snippets))
        return self._turn(app_name, user_id, session_id, message, scope_state(scope), check)

    async def resume(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        invocation_id: str,
        interrupt_id: str,
        response: dict[str, Any],
    ) -> AsyncIterator[WireEvent]:
        action = response.get("action")
        if action not in (EXTEND, SYNTHESIZE):
            raise InvalidArgument(
                f"response.action must be {EXTEND!r} or {SYNTHESIZE!r}, not {action!r}.",
                code="invalid_action",
            )
        guidance = response.get("guidance") or ""
        if not isinstance(guidance, str) or len(guidance) > 2000:
            raise InvalidArgument("response.guidance must be text of at most 2000 characters.")

        def check(session: Session) -> None:
            pending = find_pending_hitl(session.events)
            if (
                pending is None
                or pending["interrupt_id"] != interrupt_id
                or (invocation_id and pending["invocation_id"] != invocation_id)
            ):
                raise Conflict(
                    "Invalid or stale interrupt ID. The session is not waiting for this "
                    "interrupt"
                    + (
                        f"; it waits for {pending['interrupt_id']} of invocation "
                        f"{pending['invocation_id']}."
                        if pending
                        else "; it has no pending checkpoint."
                    ),
                    code="stale_interrupt",
                )

        message = types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=interrupt_id,
                        name=REQUEST_INPUT,
                        response={"action": action, "guidance": guidance},
                    )
                )
            ],
        )
        return self._turn(app_name, user_id, session_id, message, None, check)

    async def _turn(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        message: types.Content,
        state_delta: dict[str, Any] | None,
        check: Callable[[Session], None],
    ) -> AsyncIterator[WireEvent]:
        """Checks, then ``started``, then the run's events. Everything raised before
        ``started`` is a refusal (nothing was written); the caller maps it to a status."""
        async with self.locks.hold(session_id, timeout=PREVIOUS_RUN_WAIT_SECONDS):
            session = await self._session(app_name, user_id, session_id)
            try:
                session = await self._seal_dead_scope(session)
            except StaleSessionError:
                raise StaleSession(
                    "The session changed while it was being prepared; try again."
                ) from None
            check(session)
            known = {e.id for e in session.events}
            yield "started", {"session_id": session_id}
            for attempt in range(STALE_RETRIES + 1):
                progress = _RunProgress()
                try:
                    async for item in self._run_once(
                        user_id, session_id, message, state_delta, progress, session.events
                    ):
                        yield item
                    return
                except StaleSessionError:
                    # Another writer (a cancelled run on another replica sealing its invocation)
                    # got in between loading the session and appending the prompt. Nothing of
                    # this turn was written yet: load again and retry.
                    if (
                        progress.saw_event
                        or attempt == STALE_RETRIES
                        or await self._was_written(app_name, user_id, session_id, known, message)
                    ):
                        raise StaleSession(
                            "The session changed while this turn was running; reload it and "
                            "try again.",
                        ) from None
                    await asyncio.sleep(0.2 * (attempt + 1))

    async def _was_written(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        known: set[str],
        message: types.Content,
    ) -> bool:
        """Whether this turn's message reached the session before the stale error (ADK appends
        it without yielding it): then a retry would ask the question twice."""
        session = await self._session(app_name, user_id, session_id)
        wanted = message.model_dump(exclude_none=True)
        return any(
            e.id not in known
            and e.author == "user"
            and e.content is not None
            and e.content.model_dump(exclude_none=True) == wanted
            for e in session.events
        )

    async def _run_once(
        self,
        user_id: str,
        session_id: str,
        message: types.Content,
        state_delta: dict[str, Any] | None,
        progress: _RunProgress,
        earlier: list[Event],
    ) -> AsyncIterator[WireEvent]:
        """The run's wire events, then ``done``. ``earlier``: the session's events before the
        run, where a resumed turn's calls before its checkpoint are."""
        abort = asyncio.Event()
        invocation_id = ""
        paused = False
        result: dict[str, Any] | None = None
        answer_parts: list[str] = []
        seen: list[Event] = []
        finished = False
        run = self.runner.run_async(
            user_id=user_id,
            session_id=session_id,
            new_message=message,
            state_delta=state_delta,
            run_config=self._run_config(),
            abort_signal=abort,
        )
        # The runner is driven from its own task: when our caller is cancelled, the cancellation
        # must not land inside the runner (ADK would treat it as a crash and leave the pipeline's
        # scope open) but become ADK's abort signal, which seals the invocation.
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        async def pump() -> None:
            try:
                async for event in run:
                    await queue.put(("event", event))
                await queue.put(("end", None))
            except BaseException as exc:
                await queue.put(("error", exc))
                if isinstance(exc, asyncio.CancelledError):
                    raise

        task = asyncio.create_task(pump())
        try:
            while True:
                tag, item = await queue.get()
                if tag == "end":
                    break
                if tag == "error":
                    if progress.saw_event and invocation_id and not paused:
                        await self._seal_after_failure(user_id, session_id, invocation_id)
                    failure = model_failure(item, api_base=self.model_api_base)
                    if failure is not None:  # the model server's words, not "internal error"
                        raise failure from item
                    raise item
                event: Event = item
                progress.saw_event = True
                invocation_id = event.invocation_id or invocation_id
                if not event.partial:
                    seen.append(event)
                for kind, data in wire_events(event):
                    if kind == "request_input":
                        paused = True
                    elif data.get("kind") == "answer" and not data["partial"]:
                        answer_parts.append(
                            "".join(p.get("text", "") for p in data["parts"] if "text" in p)
                        )
                    yield kind, data
                result = search_result(event) or result
            finished = True
        finally:
            if not finished:
                abort.set()
            if not await wait_through_cancellation(task, PREVIOUS_RUN_WAIT_SECONDS):
                logger.error("the run on session %s did not stop after abort", session_id)
                task.cancel()
        answer = (result or {}).get("answer") or "\n\n".join(a for a in answer_parts if a)
        turn = [e for e in earlier if e.invocation_id == invocation_id] + seen
        figures = compaction_figures(earlier + _prompt_event(message, invocation_id, seen) + seen)
        yield (
            "done",
            {
                "status": "paused" if paused else "completed",
                "invocation_id": invocation_id,
                "session_id": session_id,
                "answer": "" if paused else answer,
                "citations": [] if paused else list((result or {}).get("citations") or []),
                "usage": turn_usage(turn),
                "compaction": {
                    "turns_since_compaction": figures.turns_since_compaction,
                    "prompt_tokens": figures.prompt_tokens,
                },
            },
        )

    async def _seal_after_failure(self, user_id: str, session_id: str, invocation_id: str) -> None:
        try:
            session = await self._session(self.app_name, user_id, session_id)
            await self._seal(session, invocation_id, "the run failed")
        except Exception:
            logger.exception("could not seal invocation %s after a failure", invocation_id)

    async def rewind(
        self, *, app_name: str, user_id: str, session_id: str, invocation_id: str
    ) -> None:
        if not invocation_id:
            raise InvalidArgument("invocation_id is required.", code="invalid_invocation_id")
        async with self.locks.hold(session_id, timeout=PREVIOUS_RUN_WAIT_SECONDS):
            session = await self._session(app_name, user_id, session_id)
            if not any(e.invocation_id == invocation_id for e in session.events):
                raise NotFound(
                    f"Session {session_id!r} has no invocation {invocation_id!r}.",
                    code="invocation_not_found",
                )
            await self.runner.rewind_async(
                user_id=user_id, session_id=session_id, rewind_before_invocation_id=invocation_id
            )


def _prompt_event(message: types.Content, invocation_id: str, seen: list[Event]) -> list[Event]:
    """The turn's prompt as the session holds it: ADK appends the user's message without
    yielding it, so the run's own events lack it (a resume's answer to a checkpoint is not a
    prompt; the question is among the earlier events)."""
    if not seen or any(p.function_response for p in message.parts or []):
        return []
    return [
        Event(
            author="user",
            invocation_id=invocation_id,
            content=message,
            timestamp=min(e.timestamp for e in seen) - 1e-6,
        )
    ]
