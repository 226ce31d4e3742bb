"""Sessions shaped like the agent writes them: research turns with a scoped search pipeline,
conversational turns, checkpoints and resumes, rewinds. Timestamps advance one second per
event so tests can reason about ranges."""

from __future__ import annotations

import uuid
from typing import Any

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.genai import types

COORDINATOR = "coordinator"


def _id() -> str:
    return str(uuid.uuid4())


def _usage(prompt_tokens: int | None) -> types.GenerateContentResponseUsageMetadata | None:
    if prompt_tokens is None:
        return None
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt_tokens, candidates_token_count=50
    )


class SessionEvents:
    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.clock = start
        self.events: list[Event] = []

    def _add(self, **fields: Any) -> Event:
        self.clock += 1.0
        event = Event(id=_id(), timestamp=self.clock, **fields)
        self.events.append(event)
        return event

    def user(self, text: str, invocation_id: str) -> Event:
        return self._add(
            author="user",
            invocation_id=invocation_id,
            content=types.Content(role="user", parts=[types.Part(text=text)]),
        )

    def chat_turn(self, question: str, reply: str, *, prompt_tokens: int | None = None) -> str:
        inv = "e-" + _id()
        self.user(question, inv)
        self._add(
            author=COORDINATOR,
            invocation_id=inv,
            content=types.Content(role="model", parts=[types.Part(text=reply)]),
            usage_metadata=_usage(prompt_tokens),
        )
        return inv

    def start_research(
        self, question: str, *, prompt_tokens: int | None = None, subagent_tokens: int = 90_000
    ) -> tuple[str, str]:
        """User question, coordinator call and the scoped pipeline's events; no answer yet."""
        inv = "e-" + _id()
        call_id = "adk-" + _id()
        scope = f"search_pipeline:{call_id}"
        self.user(question, inv)
        self._add(
            author=COORDINATOR,
            invocation_id=inv,
            content=types.Content(
                role="model",
                parts=[
                    types.Part(
                        function_call=types.FunctionCall(
                            id=call_id, name="search_library", args={"request": question}
                        )
                    )
                ],
            ),
            usage_metadata=_usage(prompt_tokens),
        )
        sub_call = "adk-" + _id()
        self._add(
            author="search_subagent",
            invocation_id=inv,
            isolation_scope=scope,
            content=types.Content(
                role="model",
                parts=[
                    types.Part(
                        function_call=types.FunctionCall(
                            id=sub_call, name="search_corpus", args={"query": question}
                        )
                    )
                ],
            ),
            usage_metadata=_usage(subagent_tokens),
        )
        self._add(
            author="search_subagent",
            invocation_id=inv,
            isolation_scope=scope,
            content=types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=sub_call,
                            name="search_corpus",
                            response={"chunks": ["RAW CHUNK TEXT " * 20]},
                        )
                    )
                ],
            ),
        )
        return inv, call_id

    def finish_research(
        self,
        inv: str,
        call_id: str,
        *,
        summary: str,
        answer: str | None = None,
        synthesizer_tokens: int = 120_000,
    ) -> None:
        scope = f"search_pipeline:{call_id}"
        answer = answer or f"{summary}\n\nDetails [1, p. 3].\n\n# Cited Sources\n[1] Doe 2020"
        self._add(
            author="synthesizer",
            invocation_id=inv,
            isolation_scope=scope,
            content=types.Content(role="model", parts=[types.Part(text=answer)]),
            usage_metadata=_usage(synthesizer_tokens),
        )
        self._add(
            author=COORDINATOR,
            invocation_id=inv,
            content=types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call_id,
                            name="search_library",
                            response={
                                "status": "success",
                                "answer": answer,
                                "summary": summary,
                                "citations": [{"item_key": "ABCD1234", "page": 3}],
                            },
                        )
                    )
                ],
            ),
        )

    def research_turn(
        self,
        question: str,
        summary: str,
        *,
        answer: str | None = None,
        prompt_tokens: int | None = None,
        subagent_tokens: int = 90_000,
    ) -> str:
        inv, call_id = self.start_research(
            question, prompt_tokens=prompt_tokens, subagent_tokens=subagent_tokens
        )
        self.finish_research(inv, call_id, summary=summary, answer=answer)
        return inv

    def checkpoint(self, inv: str, call_id: str) -> str:
        """The pipeline pauses at a checkpoint (scoped request_input)."""
        interrupt = "interrupt_ext_1"
        self._add(
            author="search_budget_checkpoint",
            invocation_id=inv,
            isolation_scope=f"search_pipeline:{call_id}",
            content=types.Content(
                role="model",
                parts=[
                    types.Part(
                        function_call=types.FunctionCall(
                            id=interrupt, name="adk_request_input", args={"message": "Extend?"}
                        )
                    )
                ],
            ),
            long_running_tool_ids={interrupt},
        )
        return interrupt

    def resume(self, inv: str, interrupt: str) -> None:
        """POST /chat/resume: the user's answer, in the paused invocation."""
        self._add(
            author="user",
            invocation_id=inv,
            content=types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=interrupt, name="adk_request_input", response={"choice": "extend"}
                        )
                    )
                ],
            ),
        )

    def rewind(self, before_invocation_id: str) -> None:
        self._add(
            author="user",
            invocation_id="e-" + _id(),
            actions=EventActions(rewind_before_invocation_id=before_invocation_id),
        )

    def compaction(self, start: float, end: float, summary: str) -> Event:
        return self._add(
            author="user",
            invocation_id="e-" + _id(),
            actions=EventActions(
                compaction=EventCompaction(
                    start_timestamp=start,
                    end_timestamp=end,
                    compacted_content=types.Content(role="model", parts=[types.Part(text=summary)]),
                )
            ),
        )

    def append(self, event: Event) -> None:
        """Append an event built elsewhere (a compaction), stamped after the last one."""
        self.clock += 1.0
        event.timestamp = self.clock
        self.events.append(event)
