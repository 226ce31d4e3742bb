"""Write the plugin's wire fixtures from the agent's own code: zotero-plugin/test/golden/wire.json.

Representative ADK events of research turns (tests/support/wire_turns.py: the coordinator's
``search_library`` call, the search subagent's thoughts, notes, tool calls and results, a
``request_input`` checkpoint, the synthesizer's streamed thoughts and answer, the tool's result
with its citations, a direct answer) go through the code that serves them, not a copy of it:

- ``ChatService`` (services/agent/research/chat.py) runs each turn, so ``wire_events`` turns
  the events into ``message`` / ``request_input`` and the service adds ``done``; a runner that
  replays the events stands in for ADK's;
- the citations of the answer are read, quoted and checked on their pages by the pipeline's
  functions (``evidence.extract_citations``, ``citations.with_quotes``, ``citations.verify``);
- each event crosses the agent's gRPC message (``servicer._chat_event``, decoded as
  ``AgentClient`` does), the gateway drops what it does not relay (``started``; ``done``'s
  ``compaction``: ``routers/chat.py``, ``_stream_turn``) and frames it
  (``services/gateway/sse.py``, ``frame`` and ``error_frame``).

The Node test ``zotero-plugin/test/wire-golden.test.js`` serves these frames over HTTP to the
plugin's client and reducer; ``tests/unit/agent/test_wire_golden.py`` fails when the file is
not what this script writes, so a change on either side of the wire fails a test.

    python scripts/wire_golden.py           # write the file
    python scripts/wire_golden.py --check   # exit 1 if the file is stale
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import pathlib
import sys
from collections.abc import AsyncIterator
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from google.adk.events.event import Event  # noqa: E402
from google.adk.events.event_actions import EventActions  # noqa: E402
from google.adk.sessions.in_memory_session_service import InMemorySessionService  # noqa: E402

from services.agent.research.agents import COORDINATOR  # noqa: E402
from services.agent.research.chat import ChatService  # noqa: E402
from services.agent.research.pipeline import EXTEND  # noqa: E402
from services.agent.servicer import _chat_event  # noqa: E402
from services.common.errors import Unavailable  # noqa: E402
from services.gateway.schemas.chat import ChatBody, ResumeBody  # noqa: E402
from services.gateway.sse import error_frame, frame  # noqa: E402
from tests.support.wire_turns import (  # noqa: E402
    INTERRUPT,
    INVOCATION,
    QUESTION,
    Clock,
    direct_turn,
    lost_turn,
    paused_turn,
    resumed_turn,
)

GOLDEN = ROOT / "zotero-plugin" / "test" / "golden" / "wire.json"
APP, USER, SESSION = "zocrates", "local", "session-golden"


class _Replay:
    """Stands in for ADK's Runner: appends the new message, then yields the turn's events
    and appends the final ones, as the runner does (so a resume finds the checkpoint and the
    turn after it finds it answered)."""

    class agent:  # the attribute ChatService reads
        name = COORDINATOR

    def __init__(self, sessions: InMemorySessionService) -> None:
        self.sessions = sessions
        self.events: list[Event] = []

    async def run_async(self, **kwargs: Any) -> AsyncIterator[Event]:
        session = await self.sessions.get_session(
            app_name=APP, user_id=USER, session_id=kwargs["session_id"]
        )
        assert session is not None
        prompt = Event(
            id=f"prompt-{self.events[0].id}",
            invocation_id=self.events[0].invocation_id,
            author="user",
            content=kwargs["new_message"],
            actions=EventActions(state_delta=kwargs.get("state_delta") or {}),
            timestamp=self.events[0].timestamp - 0.5,
        )
        await self.sessions.append_event(session, prompt)
        for event in self.events:
            if not event.partial:
                await self.sessions.append_event(session, event)
            yield event


async def _frames(turn: AsyncIterator[tuple[str, dict[str, Any]]]) -> list[str]:
    """A turn's wire events as the gateway sends them: through the agent's gRPC message,
    without ``started`` and ``done``'s ``compaction``, framed."""
    out = []
    async for kind, data in turn:
        message = _chat_event(kind, data)
        kind, data = message.type, json.loads(message.data_json or "{}")
        if kind == "started":
            continue
        if kind == "done":
            data.pop("compaction", None)
        out.append(frame(kind, data).decode())
    return out


def _chat_request(prompt: str) -> dict[str, Any]:
    """A POST /chat body as the plugin sends it for the whole library."""
    return {
        "session_id": SESSION,
        "prompt": prompt,
        "mode": "library",
        "active_items": None,
        "collection_key": None,
        "collection_name": "",
        "snippets": [],
    }


async def _ask(chat: ChatService, request: dict[str, Any]) -> list[str]:
    """POST /chat: the body checked by the gateway's own model, its scope as it derives it."""
    body = ChatBody.model_validate(request)
    turn = await chat.chat(
        app_name=APP,
        user_id=USER,
        session_id=body.session_id,
        prompt=body.prompt,
        scope=body.turn_scope(),
    )
    return await _frames(turn)


async def _resume(chat: ChatService, request: dict[str, Any]) -> list[str]:
    """POST /chat/resume, the body checked as the gateway checks it."""
    body = ResumeBody.model_validate(request)
    turn = await chat.resume(
        app_name=APP,
        user_id=USER,
        session_id=body.session_id,
        invocation_id=body.invocation_id,
        interrupt_id=body.interrupt_id,
        response=body.response.model_dump(),
    )
    return await _frames(turn)


async def build() -> dict[str, Any]:
    """The golden file's content."""
    sessions = InMemorySessionService()  # type: ignore[no-untyped-call]
    await sessions.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    replay = _Replay(sessions)
    chat = ChatService(runner=replay, session_service=sessions, app_name=APP)  # type: ignore[arg-type]
    clock = Clock()
    streams: list[dict[str, Any]] = []

    def add(name: str, path: str, request: dict[str, Any], frames: list[str]) -> None:
        streams.append({"name": name, "path": path, "request": request, "frames": frames})

    replay.events = paused_turn(clock)
    request = _chat_request(QUESTION)
    add("chat_paused", "/chat", request, await _ask(chat, request))

    replay.events = await resumed_turn(clock)
    request = {
        "session_id": SESSION,
        "invocation_id": INVOCATION,
        "interrupt_id": INTERRUPT,
        "response": {"action": EXTEND, "guidance": "brms"},
    }
    add("resume_completed", "/chat/resume", request, await _resume(chat, request))

    replay.events = direct_turn(clock)
    request = _chat_request("Hello?")
    add("chat_direct_answer", "/chat", request, await _ask(chat, request))

    # A failure after the stream started: the gateway ends it with an error frame.
    replay.events = lost_turn(clock)
    request = _chat_request("Again?")
    lost = Unavailable("The research agent stopped answering.", code="agent_unavailable")
    frames = [*(await _ask(chat, request))[:1], error_frame(lost).decode()]
    add("chat_agent_lost", "/chat", request, frames)

    return {
        "about": (
            "Written by scripts/wire_golden.py from the agent's and gateway's code; do not edit. "
            "Each stream: the request the plugin sends and the SSE frames the gateway answers."
        ),
        "session_id": SESSION,
        "streams": streams,
    }


def render(content: dict[str, Any]) -> str:
    return json.dumps(content, ensure_ascii=False, indent=1) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=pathlib.Path, default=GOLDEN, help="the golden file")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if the file is stale"
    )
    args = parser.parse_args()
    text = render(asyncio.run(build()))
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current == text:
            sys.stdout.write(f"{args.out}: up to date\n")
            return 0
        sys.stdout.writelines(
            difflib.unified_diff(
                current.splitlines(keepends=True),
                text.splitlines(keepends=True),
                str(args.out),
                "scripts/wire_golden.py",
                n=1,
            )
        )
        sys.stdout.write(
            f"\n{args.out} is stale: run `make wire-golden` (scripts/wire_golden.py).\n"
        )
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
