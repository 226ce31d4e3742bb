"""Representative ADK events of research turns, shaped as the runner, the search pipeline and
its agents write them, for the plugin's wire fixtures (scripts/wire_golden.py): a turn that
pauses at its checkpoint, its resume to a cited answer, a direct answer, a turn cut short.

Ids and timestamps are fixed, so the fixtures are the same at every run. The checkpoint's
payload and the answer's citations come from the pipeline's own functions."""

from __future__ import annotations

from typing import Any

from google.adk.events.event import Event
from google.genai import types

from services.agent.research import evidence as ev
from services.agent.research.agents import COORDINATOR, SEARCH_SUBAGENT
from services.agent.research.citations import verify, with_quotes
from services.agent.research.harness import Harness
from services.agent.research.pipeline_nodes import CHECKPOINT_MESSAGE, CHECKPOINT_NODE, SCOPE_PREFIX
from services.common.adk.internals import FINISH_TASK_SUCCESS_RESULT
from services.common.adk.names import FINISH_TASK, REQUEST_INPUT, SEARCH_LIBRARY, SYNTHESIZER
from services.common.turn_usage import stamp_call

QUESTION = "How does lmer choose its optimizer, and how does brms fit the same kind of model?"
CALL = "call-search-1"
SCOPE = SCOPE_PREFIX + CALL
INTERRUPT = "interrupt_ext_1"
INVOCATION = "e-inv-golden-1"
LME4, BRMS = "ABCD2345", "BRMS7892"
LME4_TITLE = "Fitting Linear Mixed-Effects Models Using lme4"
BRMS_TITLE = "brms: An R Package for Bayesian Multilevel Models Using Stan"
# The pages the citations are checked against (what read_document would return).
PAGES = {
    (LME4, 3): "The default optimizer is BOBYQA, a derivative-free method for bounded problems.",
    (LME4, 4): "Nelder-Mead is used when the user asks for it.",
    (BRMS, 5): "brms translates the model formula into Stan code and samples with NUTS.",
    (BRMS, 6): "Priors default to weakly informative distributions.",
}
EVIDENCE = [
    {
        "id": "c1",
        "kind": "chunk",
        "item_key": LME4,
        "title": LME4_TITLE,
        "page": 3,
        "page_end": 4,
        "authors": ["Bates, Douglas", "Maechler, Martin", "Bolker, Ben"],
        "year": 2015,
        "text": PAGES[(LME4, 3)] + " " + PAGES[(LME4, 4)],
    },
    {
        "id": "c2",
        "kind": "chunk",
        "item_key": BRMS,
        "title": BRMS_TITLE,
        "page": 5,
        "page_end": 6,
        "authors": ["Bürkner, Paul-Christian"],
        "year": 2017,
        "text": PAGES[(BRMS, 5)] + " " + PAGES[(BRMS, 6)],
    },
]
THOUGHT = "Both papers answer a part: quote the optimizer, then the Stan step."
# The answer as a model writes it: the asked form, a range and two references in one bracket,
# a quotation, and R output in code (which cites nothing).
ANSWER = (
    '**lme4.** "The default optimizer is BOBYQA, a derivative-free method for bounded '
    'problems." [1, p. 3] You can pick another with `lmerControl(optimizer = "Nelder_Mead")`;'
    " its output starts `[1] 0.25`.\n\n"
    "**brms.** brms translates the model formula into Stan code and samples with NUTS "
    "[2, pp. 5-6; 1, p. 4].\n\n"
    "# Cited Sources\n"
    f"[1] Bates et al. (2015). {LME4_TITLE}. Item {LME4}, pp. 3-4.\n"
    f"[2] Bürkner (2017). {BRMS_TITLE}. Item {BRMS}, pp. 5-6."
)
DIRECT = "Zocrates answers from your library: ask about the papers in it."


class Clock:
    """Event ids and timestamps that are the same at every run."""

    def __init__(self) -> None:
        self.count = 0

    def event(self, author: str, *parts: types.Part, **fields: Any) -> Event:
        self.count += 1
        return Event(
            id=f"ev-{self.count:02d}",
            invocation_id=fields.pop("invocation_id", INVOCATION),
            author=author,
            content=types.Content(role="model", parts=list(parts)),
            timestamp=1_767_000_000.0 + self.count,
            **fields,
        )


def _text(text: str, *, thought: bool = False) -> types.Part:
    return types.Part(text=text, thought=thought or None)


def _call(name: str, call_id: str, **args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))


def _result(name: str, call_id: str, response: dict[str, Any]) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id=call_id, name=name, response=response)
    )


def _checkpoint_payload() -> dict[str, Any]:
    harness = Harness()
    ceilings = harness.initial()
    report = {
        "summary": "lme4 uses BOBYQA by default (Bates 2015, p. 3).",
        "gaps": ["how brms fits the same kind of model"],
        "justification": "One aspect has no evidence yet.",
    }
    return ev.checkpoint_payload(
        request=QUESTION,
        report=report,
        evidence=EVIDENCE[:1],
        extension_count=0,
        max_extensions=harness.max_extensions,
        ceilings=ceilings,
        next_ceilings=ceilings.extended(harness),
        calls_used=ceilings.budget,
        words=2_400,
        extension_requested=False,
    )


async def _citations() -> list[dict[str, Any]]:
    numbered = ev.number_evidence(EVIDENCE)

    async def read_pages(item_key: str, first: int, last: int) -> dict[int, str]:
        return {p: t for (k, p), t in PAGES.items() if k == item_key and first <= p <= last}

    cited = with_quotes(ANSWER, ev.extract_citations(ANSWER, numbered))
    return await verify(cited, numbered, read_pages)


def paused_turn(clock: Clock) -> list[Event]:
    """/chat: the coordinator calls the research tool; the subagent thinks, searches and
    notes what it found; the pipeline stops at the checkpoint."""
    call = clock.event(COORDINATOR, _call(SEARCH_LIBRARY, CALL, request=QUESTION))
    stamp_call(
        call, model="openai/gpt-4o-mini", input_tokens=1_200, output_tokens=40, cost_usd=0.000204
    )
    results = [
        {"chunk_id": "c1", "item_key": LME4, "title": LME4_TITLE, "page_start": 3, "page_end": 4},
        {"chunk_id": "c9", "item_key": LME4, "title": LME4_TITLE, "page_start": 9, "page_end": 9},
        {"chunk_id": "c7", "item_key": "GLMM2345", "title": "", "page_start": 1, "page_end": 1},
    ]
    return [
        call,
        clock.event(
            SEARCH_SUBAGENT,
            _text("Look for lme4", thought=True),
            isolation_scope=SCOPE,
            partial=True,
        ),
        clock.event(
            SEARCH_SUBAGENT,
            _text(" optimizers.", thought=True),
            isolation_scope=SCOPE,
            partial=True,
        ),
        clock.event(
            SEARCH_SUBAGENT, _text("Look for lme4 optimizers.", thought=True), isolation_scope=SCOPE
        ),
        clock.event(
            SEARCH_SUBAGENT,
            _call("search_corpus", "call-sc-1", query="lmer optimizer", k=8),
            isolation_scope=SCOPE,
        ),
        clock.event(
            SEARCH_SUBAGENT,
            _result(
                "search_corpus",
                "call-sc-1",
                {
                    "status": "success",
                    "results": results,
                    "budget_notice": "WARNING: 1 retrieval call left of 10.",
                },
            ),
            isolation_scope=SCOPE,
        ),
        clock.event(
            SEARCH_SUBAGENT, _text("lme4 is covered; nothing on brms yet."), isolation_scope=SCOPE
        ),
        clock.event(
            CHECKPOINT_NODE,
            _call(
                REQUEST_INPUT,
                INTERRUPT,
                interruptId=INTERRUPT,
                message=CHECKPOINT_MESSAGE,
                payload=_checkpoint_payload(),
                response_schema=None,
            ),
            isolation_scope=SCOPE,
            long_running_tool_ids={INTERRUPT},
        ),
    ]


async def resumed_turn(clock: Clock) -> list[Event]:
    """/chat/resume after a grant: the extension reads a page, the synthesizer streams its
    thought and its answer, the pipeline closes its scope and the tool returns the answer."""
    read = {
        "status": "success",
        "item_key": BRMS,
        "title": BRMS_TITLE,
        "section": None,
        "start_page": 5,
        "end_page": 6,
        "word_count": 21,
        "pages": [{"page": p, "text": PAGES[(BRMS, p)]} for p in (5, 6)],
    }
    head, tail = ANSWER[:60], ANSWER[60:]
    events = [
        clock.event(
            SEARCH_SUBAGENT,
            _call("read_document", "call-rd-1", item_key=BRMS, start_page=5, end_page=6),
            isolation_scope=SCOPE,
        ),
        clock.event(
            SEARCH_SUBAGENT, _result("read_document", "call-rd-1", read), isolation_scope=SCOPE
        ),
        clock.event(
            SYNTHESIZER, _text(THOUGHT[:30], thought=True), isolation_scope=SCOPE, partial=True
        ),
        clock.event(
            SYNTHESIZER, _text(THOUGHT[30:], thought=True), isolation_scope=SCOPE, partial=True
        ),
        clock.event(SYNTHESIZER, _text(head), isolation_scope=SCOPE, partial=True),
        clock.event(SYNTHESIZER, _text(tail), isolation_scope=SCOPE, partial=True),
        clock.event(
            SYNTHESIZER, _text(THOUGHT, thought=True), _text(ANSWER), isolation_scope=SCOPE
        ),
    ]
    stamp_call(
        events[-1],
        model="openai/gpt-4o-mini",
        input_tokens=3_000,
        output_tokens=420,
        cost_usd=0.0007,
    )
    result = {
        "status": "success",
        "answer": ANSWER,
        "summary": "lme4: BOBYQA by default; brms: Stan code sampled with NUTS.",
        "citations": await _citations(),
        "evidence_count": len(EVIDENCE),
        "extensions": 1,
        "gaps": [],
    }
    # The pipeline closes its scope (pipeline_nodes.close_isolation_scope), then the tool's
    # result reaches the coordinator.
    closing = _result(FINISH_TASK, "call-ft-1", {"result": FINISH_TASK_SUCCESS_RESULT})
    events += [
        clock.event("close_isolation_scope", closing, isolation_scope=SCOPE),
        clock.event(COORDINATOR, _result(SEARCH_LIBRARY, CALL, result)),
    ]
    return events


def direct_turn(clock: Clock) -> list[Event]:
    """/chat: a coordinator that answers without searching (a greeting), streamed."""
    inv = "e-inv-golden-2"
    return [
        clock.event(COORDINATOR, _text(DIRECT[:20]), invocation_id=inv, partial=True),
        clock.event(COORDINATOR, _text(DIRECT[20:]), invocation_id=inv, partial=True),
        clock.event(COORDINATOR, _text(DIRECT), invocation_id=inv),
    ]


def lost_turn(clock: Clock) -> list[Event]:
    """/chat: the coordinator's call, after which the agent is gone (the gateway's error)."""
    call = _call(SEARCH_LIBRARY, "call-search-3", request="Again?")
    return [clock.event(COORDINATOR, call, invocation_id="e-inv-golden-3")]
