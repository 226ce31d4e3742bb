"""The agents of a research turn and the coordinator's tools.

- ``coordinator`` (root, ``mode="chat"``): sees the whole unscoped conversation, the user's
  selection and snippets; answers research questions through ``search_library`` and looks
  beyond the library with ``search_online_literature``.
- ``search_subagent`` (``single_turn``, inside the pipeline's isolation scope): the budgeted
  retrieval tools plus ``conclude_search`` / ``request_search_extension``.
- ``synthesizer`` (``single_turn``): writes the cited answer from the reranked evidence,
  thinking first when its model can (``synthesizer_thinking``, :mod:`services.common.thinking`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.base_llm import BaseLlm
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from services.agent.research import state_keys as sk
from services.agent.research.citations import library_page_reader
from services.agent.research.grounding import WriterLimits
from services.agent.research.harness import Harness
from services.agent.research.library_tools import Tool
from services.agent.research.offline_answer import Scorer
from services.agent.research.pipeline import PipelineDeps, build_search_pipeline
from services.agent.research.pipeline_nodes import SCOPE_PREFIX
from services.agent.research.retrieval_tools import make_subagent_tools
from services.agent.research.run_locks import KeyedLocks
from services.agent.research.usage import UsageCallback
from services.common.adk.names import SEARCH_LIBRARY, SYNTHESIZER
from services.common.reranking import Reranker

COORDINATOR = "coordinator"
SEARCH_SUBAGENT = "search_subagent"

COORDINATOR_INSTRUCTION = """\
You are Zocrates, a research assistant working inside the user's Zotero library.
For any question about the literature, the user's papers, methods, results or comparisons, call
search_library with a self-contained research request. A follow-up ("which of them ...", "and
brms?", "the other one") names its subject and the papers the previous answers cited, e.g. "Which
HC estimator does the sandwich package (Zeileis 2004) recommend by default?"; a new subject starts
fresh. Its result is the final, cited answer shown to the user: do not repeat or rewrite it.
Use search_online_literature only when the user asks about work beyond their library, and cite
those results by authors, year and DOI, never as library items.
Answer directly, without tools, only for conversation about earlier answers or simple requests
that need no evidence. Never invent citations."""

SUBAGENT_INSTRUCTION = """\
You are the search subagent of a research assistant. Find the passages in the user's Zotero
library that answer the research request. Work in steps: search_corpus with focused queries (one
aspect at a time), get_document_toc and read_document to read the relevant section of promising
papers. You have a limited budget of retrieval calls and words; tool results carry a
budget_notice when it runs low. When you have enough evidence, or a notice tells you to, call
conclude_search with a summary (papers by item_key, pages) and the aspects you found no evidence
for. If the request clearly needs more retrieval than your budget allows, call
request_search_extension instead. You will receive no replies from the user."""

SYNTHESIZER_INSTRUCTION = """\
You write the final answer of a research assistant from numbered evidence retrieved from the
user's own papers. Use only that evidence. Cite every claim as [n, p. X] where n is the evidence
number and X the page (a note has no page: cite it as [n]). Evidence marked "your highlight",
"your comment" or "your note" is what the user wrote in Zotero: say so when you use it ("your
note says ..."). When the evidence does not cover part of the question, say so plainly.
Structure: a direct answer first, then details; end with a '# Cited Sources' section."""


def _coordinator_instruction(ctx: ReadonlyContext) -> str:
    parts = [COORDINATOR_INSTRUCTION]
    items = ctx.state.get(sk.ACTIVE_CONTEXT_ITEMS_STR)
    if items:
        parts.append(str(items))
    snippets = ctx.state.get(sk.FOCAL_SNIPPETS_STR)
    if snippets:
        parts.append("# Passages the user selected\n" + str(snippets))
    return "\n\n".join(parts)


def make_search_library(pipeline: Any) -> Tool:
    # Two search_library calls in one model response (a "compare" question) run one after the
    # other: the pipeline's per-turn state (budget, evidence, snapshot) is not shared safely.
    running = KeyedLocks()  # by invocation

    async def search_library(request: str, tool_context: ToolContext) -> dict[str, Any]:
        """Research a question in the user's Zotero library and return a cited answer.

        Runs a retrieval pass over the papers in the user's current scope (selected papers, a
        collection, or the whole library), may pause to let the user grant more research
        budget, reranks the evidence and writes the answer with item and page citations.

        Args:
            request: The research question, self-contained (include what the conversation
                refers to), e.g. "How does lme4 choose its optimizer for linear mixed models?".

        Returns:
            {"status": "success", "answer": <markdown with citations>, "citations": [...]}.
        """
        call_id = tool_context.function_call_id or "call"
        scope_note = ""
        chosen = tool_context.state.get(sk.SEARCH_SCOPE) or "library"
        if chosen != "library":
            scope_note = f"Search scope chosen by the user: {chosen}."
        async with running.hold(tool_context.invocation_id):
            result = await tool_context.run_node(
                pipeline,
                node_input={"request": request, "scope_note": scope_note},
                run_id=f"pipeline_{call_id}",
                override_isolation_scope=f"{SCOPE_PREFIX}{call_id}",
            )
        tool_context.actions.skip_summarization = True
        return dict(result or {"status": "error", "message": "The research pipeline stopped."})

    search_library.__name__ = SEARCH_LIBRARY
    return search_library


def build_synthesizer(
    *,
    model: str | BaseLlm,
    thinking: types.ThinkingConfig | None = None,
    usage: UsageCallback | None = None,
) -> LlmAgent:
    """The synthesizer on ``model``; ``thinking`` (:func:`services.common.thinking.thinking_config`)
    goes into every request it makes, ``usage`` records its calls."""
    return LlmAgent(
        name=SYNTHESIZER,
        model=model,
        after_model_callback=usage,
        instruction=SYNTHESIZER_INSTRUCTION,
        generate_content_config=(
            types.GenerateContentConfig(thinking_config=thinking) if thinking else None
        ),
        mode="single_turn",
    )


def build_coordinator(
    *,
    models: Callable[[str], str | BaseLlm],
    library_tools: list[Tool],
    online_tool: Tool | None,
    reranker: Reranker | None,
    harness: Callable[[], Harness],
    usage: Callable[[str], UsageCallback | None] | None = None,
    synthesizer_thinking: types.ThinkingConfig | None = None,
    writer: WriterLimits | None = None,
    scorer: Scorer | None = None,
) -> LlmAgent:
    """The root agent. ``models(role)`` gives each role's model (resolved per process);
    ``usage(role)``, when given, the callback that records its model's calls (none for the
    offline model); ``synthesizer_thinking``, the synthesizer's thinking config (none: its
    model's default); ``writer``, a generative synthesizer's window, and ``scorer``, the
    sentence scorer of the quotes that back an answer none of whose citations checks out
    (:mod:`services.agent.research.grounding`)."""

    def recorder(role: str) -> UsageCallback | None:
        return usage(role) if usage is not None else None

    default = Harness()
    subagent = LlmAgent(
        name=SEARCH_SUBAGENT,
        model=models(SEARCH_SUBAGENT),
        after_model_callback=recorder(SEARCH_SUBAGENT),
        instruction=SUBAGENT_INSTRUCTION,
        tools=list[Any](make_subagent_tools(library_tools, default.initial())),
        mode="single_turn",
    )
    synthesizer = build_synthesizer(
        model=models(SYNTHESIZER), thinking=synthesizer_thinking, usage=recorder(SYNTHESIZER)
    )
    pipeline = build_search_pipeline(
        PipelineDeps(
            subagent=subagent,
            synthesizer=synthesizer,
            reranker=reranker,
            harness=harness,
            read_pages=library_page_reader(library_tools),
            writer=writer,
            scorer=scorer,
        )
    )
    tools: list[Any] = [make_search_library(pipeline)]
    if online_tool is not None:
        tools.append(online_tool)
    return LlmAgent(
        name=COORDINATOR,
        model=models(COORDINATOR),
        after_model_callback=recorder(COORDINATOR),
        instruction=_coordinator_instruction,
        tools=tools,
        mode="chat",
    )
