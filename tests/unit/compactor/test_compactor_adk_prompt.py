"""The compaction event against ADK itself: a real ``Runner`` with the coordinator as an
``LlmAgent`` over ``InMemorySessionService``, a scripted model at the ``BaseLlm`` boundary that
records every request, and the event appended as the compactor service will append it."""

from __future__ import annotations

from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from services.common.adk.turns import prior_compaction
from services.compactor.summarizer import (
    EXTRACTIVE_HEADER,
    ExtractiveSummarizer,
    compaction_event,
    plan_compaction,
)
from tests.support.scripted_llm import ScriptedToolLlm, call, text

APP = "zocrates"
USER = "researcher"


async def search_library(request: str, tool_context: ToolContext) -> dict[str, Any]:
    """Research a question in the user's library (stands in for the real pipeline)."""
    tool_context.actions.skip_summarization = True
    return {
        "status": "success",
        "answer": f"Full synthesis about {request} [1, p. 4].\n\n# Cited Sources\n[1] Doe 2021",
        "summary": f"Findings about {request}.",
        "citations": [{"item_key": "DOE2021", "page": 4}],
    }


class Conversation:
    def __init__(self) -> None:
        self.llm = ScriptedToolLlm(fallback=text("(unscripted)"))
        self.sessions = InMemorySessionService()
        agent = LlmAgent(
            name="coordinator",
            model=self.llm,
            instruction="Answer research questions.",
            tools=[search_library],
        )
        self.runner = Runner(app_name=APP, agent=agent, session_service=self.sessions)
        self.session_id = ""

    async def start(self) -> None:
        session = await self.sessions.create_session(app_name=APP, user_id=USER)
        self.session_id = session.id

    async def session(self) -> Session:
        session = await self.sessions.get_session(
            app_name=APP, user_id=USER, session_id=self.session_id
        )
        assert session is not None
        return session

    async def turn(self, question: str, *, research: bool = False) -> None:
        n = question.split(":")[0]
        self.llm.replies.append(call("search_library", request=n) if research else text(f"A{n}"))
        message = types.Content(role="user", parts=[types.Part(text=question)])
        async for _ in self.runner.run_async(
            user_id=USER, session_id=self.session_id, new_message=message
        ):
            pass

    async def compact(self, k: int = 2) -> str:
        session = await self.session()
        plan = plan_compaction(session.events, k)
        assert plan is not None
        summary = (await ExtractiveSummarizer().summarize(plan)).text
        await self.sessions.append_event(session, compaction_event(plan, summary))
        return summary

    def last_prompt(self) -> list[str]:
        """The texts of the latest model request, one string per part."""
        out = []
        for content in self.llm.requests[-1].contents:
            for part in content.parts or []:
                if part.text:
                    out.append(f"{content.role}: {part.text}")
                elif part.function_call:
                    out.append(f"{content.role}: call {part.function_call.name}")
                elif part.function_response:
                    response = part.function_response.response or {}
                    out.append(f"{content.role}: result {response.get('summary')}")
        return out


async def test_retention_turns_preserves_latest_k_turns_verbatim() -> None:
    chat = Conversation()
    await chat.start()
    await chat.turn("Q1: what causes lithium plating?", research=True)
    await chat.turn("Q2: does silicon plate less?", research=True)
    await chat.turn("Q3: how big is the volume expansion?")
    await chat.turn("Q4: and the cost of flow batteries?", research=True)

    summary = await chat.compact(k=2)
    await chat.turn("Q5: which stack materials dominate?")

    assert chat.last_prompt() == [
        f"model: {summary}",
        "user: Q3: how big is the volume expansion?",
        "model: AQ3",
        "user: Q4: and the cost of flow batteries?",
        "model: call search_library",
        "user: result Findings about Q4.",
        "user: Q5: which stack materials dominate?",
    ]
    assert "Q1: what causes lithium plating?" in summary
    assert "Findings about Q2." in summary


async def test_rolling_consolidation_subsumes_earlier_compaction() -> None:
    chat = Conversation()
    await chat.start()
    for n in range(1, 5):
        await chat.turn(f"Q{n}: topic {n}?", research=n % 2 == 1)
    first = await chat.compact(k=2)  # turns 1-2
    await chat.turn("Q5: topic 5?")
    await chat.turn("Q6: topic 6?", research=True)
    await chat.turn("Q7: topic 7?")
    second = await chat.compact(k=2)  # turns 1-5: the first summary plus turns 3-5
    await chat.turn("Q8: topic 8?")

    prompt = chat.last_prompt()

    assert prompt == [
        f"model: {second}",
        "user: Q6: topic 6?",
        "model: call search_library",
        "user: result Findings about Q6.",
        "user: Q7: topic 7?",
        "model: AQ7",
        "user: Q8: topic 8?",
    ]
    assert f"model: {first}" not in prompt  # the older summary is subsumed, not stacked
    assert second.startswith(first)  # ... its entries live on inside the consolidated one
    assert sum(line.count(EXTRACTIVE_HEADER) for line in prompt) == 1
    for n in range(1, 6):
        assert f"- Turn {n}: the user asked: Q{n}: topic {n}?" in second
    session = await chat.session()
    compactions = [e for e in session.events if e.actions.compaction]
    assert len(compactions) == 2  # both are stored (append-only); ADK shows one
    prior = prior_compaction(session.events)
    assert prior is not None and prior.events == (compactions[-1],)
    assert compactions[1].actions.compaction.start_timestamp == (
        compactions[0].actions.compaction.start_timestamp
    )
