"""The dynamic search pipeline: retrieval passes, deep-research checkpoints, rerank, synthesis.

``search_library`` (a coordinator tool) runs ``search_library_pipeline`` as a child node in its
own isolation scope (``search_pipeline:<function call id>``), so the raw retrieval never enters
the coordinator's context. The pipeline:

1. runs the search subagent's initial pass (``search_initial``), unless this invocation already
   did (the persisted ``hitl_snapshot`` of this invocation says so);
2. checks the dual trigger (gaps left, or the subagent asked for an extension) with the smart
   skip; when it fires, persists ``hitl_snapshot`` (a child node, so the write precedes the
   pause) and runs ``search_budget_checkpoint``, which yields ADK's ``RequestInput`` and pauses
   the whole invocation;
3. on resume (the same invocation, the tool replayed by ADK with the same call id) it rebuilds
   its position chronologically from the snapshot and the answers recorded in this invocation's
   events: answered checkpoints are not asked again, finished extension passes (``completed``)
   are not run again;
4. reranks the evidence through the reranker service, trims it to the current ceilings and runs
   the synthesizer; then tears the snapshot and ceilings down, records the audit, and closes the
   isolation scope with a ``finish_task`` response so the next user message is unscoped.

In google-adk 2.13 a node started from a tool of a root ``LlmAgent`` runs without a replaying
scheduler (the root chat agent installs none), so ADK does not fast-forward finished children on
resume; the guards above are what keep passes from running twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.adk.agents.context import Context
from google.adk.agents.llm_agent import LlmAgent
from google.adk.workflow import node
from google.genai import types

from services.agent.research import evidence as ev
from services.agent.research import grounding
from services.agent.research import state_keys as sk
from services.agent.research.citations import PageReader, with_quotes
from services.agent.research.citations import verify as verify_citations
from services.agent.research.harness import Ceilings, Harness, should_checkpoint
from services.agent.research.markers import keep_markers
from services.agent.research.offline_answer import Scorer
from services.agent.research.offline_questions import about_own_writing
from services.agent.research.offline_rank import rank_by_sentences
from services.agent.research.pipeline_nodes import (
    TEARDOWN,
    StateWriter,
    audit_entries,
    ceilings_state,
    close_isolation_scope,
    current_snapshot,
    ensure_isolation_scope,
    findings_summary,
    interrupt_answer,
    persist_hitl_snapshot,
    search_budget_checkpoint,
)
from services.agent.research.turn_scope import prompt_images
from services.common.adk.internals import (
    FINISH_TASK_ERROR_RESULT,
    FINISH_TASK_SUCCESS_RESULT,
    NodeInterruptedError,
    invocation_context,
)
from services.common.adk.telemetry import child_node_span
from services.common.errors import ZocratesError
from services.common.reranking import Reranker
from services.common.tracing_enrich import CHAIN, OI_KIND, WORKFLOW, ZOCRATES_KIND, task_span

logger = logging.getLogger(__name__)

PIPELINE_NODE = "search_library_pipeline"
EXTEND = "extend_budget"
SYNTHESIZE = "synthesize"
RERANK_SPAN = "rerank_evidence"


@dataclass
class PipelineDeps:
    subagent: LlmAgent
    synthesizer: LlmAgent
    reranker: Reranker | None
    harness: Callable[[], Harness]
    # Reads pages of the library: each citation is checked against the page it cites.
    read_pages: PageReader | None = None
    # A generative writer's window (the evidence is fitted to it) and the sentence scorer of
    # the extractive backing its answer gets when no citation is on its page
    # (services/agent/research/grounding.py). None: the offline writer, which only quotes.
    writer: grounding.WriterLimits | None = None
    scorer: Scorer | None = None


def build_search_pipeline(deps: PipelineDeps) -> Any:
    """The ``search_library_pipeline`` node bound to its agents, reranker and harness."""

    async def run_pass(
        ctx: Context, write: StateWriter, prompt: str, run_id: str, request: str
    ) -> dict[str, Any]:
        await write(
            {
                sk.TEMP_SEARCH_REPORT: None,
                sk.TEMP_EXTENSION_REQUESTED: False,
                sk.TEMP_BLOCKED_CALLS: 0,
            }
        )
        await ctx.run_node(deps.subagent, node_input=prompt, run_id=run_id)
        report = ctx.state.get(sk.TEMP_SEARCH_REPORT)
        if not isinstance(report, dict):
            report = ev.auto_completion_report(
                request, list(ctx.state.get(sk.TEMP_RETRIEVED_EVIDENCE) or [])
            )
        return dict(report)

    async def rerank(
        request: str, evidence: list[dict[str, Any]], ceilings: Ceilings
    ) -> list[dict[str, Any]]:
        """Cross-encoder order, fair to every aspect the subagent searched.

        Each passage is scored against the query that found it (pages read whole, against the
        request), and the per-query rankings are interleaved: a question with two aspects gets
        the best evidence of each, instead of only passages that mention both.
        """
        with task_span(RERANK_SPAN, {"zocrates.rerank.passages": len(evidence)}) as span:
            ranked = None
            fallback = "no_reranker" if deps.reranker is None else "no_evidence"
            if deps.writer is None and deps.scorer is not None and evidence:
                # The offline synthesizer scores every sentence anyway: its passages are
                # ranked by their best one, in the same pass (offline_rank).
                span.set_attribute("zocrates.rerank.by", "sentences")
                try:
                    ranked = await rank_by_sentences(request, evidence, deps.scorer)
                except ZocratesError as exc:
                    logger.warning("sentence ranking failed (%s); using retrieval order", exc.code)
                    fallback = exc.code
            elif deps.reranker is not None and evidence:
                groups: dict[str, list[dict[str, Any]]] = {}
                for piece in evidence:
                    query = str(piece.get("query") or "") if piece.get("kind") == "chunk" else ""
                    groups.setdefault(query or request, []).append(piece)
                span.set_attribute("zocrates.rerank.groups", len(groups))
                reranker = deps.reranker
                try:
                    rankings = await asyncio.gather(
                        *(
                            reranker.rerank(query, [(p["id"], p["text"]) for p in pieces])
                            for query, pieces in groups.items()
                        )
                    )
                except ZocratesError as exc:
                    logger.warning("rerank failed (%s); using retrieval order", exc.code)
                    fallback = exc.code
                else:
                    ranked = ev.interleave(list(rankings))
            # Retrieval order stands in when there is no cross-encoder order.
            span.set_attribute("zocrates.rerank.fallback", ranked is None)
            if ranked is None:
                span.set_attribute("zocrates.rerank.fallback_reason", fallback)
            if about_own_writing(request):
                # "What did I note about ...": the user's own highlights, comments and notes
                # come first, each in its order; the papers' text follows.
                ranked = ev.own_first(evidence, ranked)
            selected = ev.select_evidence(evidence, ranked, ceilings)
            span.set_attribute("zocrates.rerank.selected", len(selected))
            return selected

    @node(name=PIPELINE_NODE, rerun_on_resume=True)
    async def search_library_pipeline(ctx: Context, node_input: dict[str, Any]) -> Any:
        scope = ensure_isolation_scope(ctx)
        ic = invocation_context(ctx)
        root_user_content = ic.user_content
        ic.user_content = None  # subagents get their node_input only, not the chat nudge
        request = str(node_input.get("request") or "")
        scope_note = str(node_input.get("scope_note") or "")
        snippets = str(ctx.state.get(sk.FOCAL_SNIPPETS_STR) or "")  # keys stripped: writer
        keyed_snippets = str(ctx.state.get(sk.FOCAL_SNIPPETS_KEYED_STR) or "")  # for retrieval
        harness = deps.harness()
        write = StateWriter(ctx)
        interrupted = False
        cancelled = False
        completed = False
        try:
            snapshot = current_snapshot(ctx)
            if snapshot is None:
                ceilings = harness.initial()
                initial = ceilings
                await write(
                    {
                        **ceilings_state(ceilings, 0),
                        sk.TEMP_RETRIEVAL_TOOL_COUNT: 0,
                        sk.TEMP_RETRIEVED_WORDS: 0,
                        sk.TEMP_RETRIEVED_EVIDENCE: [],
                        sk.TEMP_SEEN_CHUNK_IDS: [],
                        sk.TEMP_SEEN_ASSETS: [],
                    }
                )
                report = await run_pass(
                    ctx,
                    write,
                    ev.initial_prompt(request, scope_note, keyed_snippets),
                    "search_initial",
                    request,
                )
                completed_extensions: list[int] = []
                requested = bool(ctx.state.get(sk.TEMP_EXTENSION_REQUESTED))
            else:
                # Rehydrate from the snapshot: temp: keys did not survive the pause. Ceilings
                # restart from the turn's initial ones: the loop below re-extends them once per
                # answered checkpoint, as it did the first time.
                ceilings = Ceilings.from_dict(snapshot["initial_ceilings"])
                initial = ceilings
                report = dict(snapshot.get("search_report") or {})
                completed_extensions = [int(i) for i in snapshot.get("completed_extensions", [])]
                requested = bool(snapshot.get("extension_requested"))
                await write(
                    {
                        **ceilings_state(ceilings, 0),
                        sk.TEMP_RETRIEVED_EVIDENCE: list(snapshot.get("evidence") or []),
                        sk.TEMP_SEEN_CHUNK_IDS: list(snapshot.get("seen_chunk_ids") or []),
                        sk.TEMP_SEEN_ASSETS: list(snapshot.get("seen_assets") or []),
                        sk.TEMP_RETRIEVAL_TOOL_COUNT: int(snapshot.get("tool_count") or 0),
                        sk.TEMP_RETRIEVED_WORDS: int(snapshot.get("words") or 0),
                    }
                )
            guidance = ""
            extension_count = 0
            # Chronological: checkpoint 0, extension 1, checkpoint 1, ... Answered checkpoints
            # resolve from this invocation's events; completed passes are not run again.
            while True:
                interrupt_id = f"interrupt_ext_{extension_count + 1}"
                decision = interrupt_answer(ctx, interrupt_id)
                if decision is None:
                    if not should_checkpoint(
                        harness, list(report.get("gaps") or []), extension_count, requested
                    ):
                        break
                    evidence = list(ctx.state.get(sk.TEMP_RETRIEVED_EVIDENCE) or [])
                    calls = int(ctx.state.get(sk.TEMP_RETRIEVAL_TOOL_COUNT) or 0)
                    words = int(ctx.state.get(sk.TEMP_RETRIEVED_WORDS) or 0)
                    payload = ev.checkpoint_payload(
                        request=request,
                        report=report,
                        evidence=evidence,
                        extension_count=extension_count,
                        max_extensions=harness.max_extensions,
                        ceilings=ceilings,
                        next_ceilings=ceilings.extended(harness),
                        calls_used=calls,
                        words=words,
                        extension_requested=requested,
                    )
                    checkpoint_span = child_node_span(
                        ctx,
                        f"checkpoint_{extension_count}",
                        {
                            OI_KIND: CHAIN,
                            ZOCRATES_KIND: WORKFLOW,
                            "zocrates.checkpoint.interrupt_id": interrupt_id,
                            "zocrates.checkpoint.trigger": str(payload.get("trigger") or ""),
                            "zocrates.checkpoint.extension_count": extension_count,
                            "zocrates.checkpoint.tool_calls_used": calls,
                        },
                    )
                    with checkpoint_span:
                        await ctx.run_node(
                            persist_hitl_snapshot,
                            node_input={
                                "invocation_id": ctx.invocation_id,
                                "request": request,
                                "evidence": evidence,
                                "search_report": report,
                                "extension_count": extension_count,
                                "tool_count": calls,
                                "words": words,
                                "extension_requested": requested,
                                "isolation_scope": scope,
                                "completed_extensions": list(completed_extensions),
                                "ceilings": ceilings.to_dict(),
                                "initial_ceilings": initial.to_dict(),
                                "seen_chunk_ids": list(ctx.state.get(sk.TEMP_SEEN_CHUNK_IDS) or []),
                                "seen_assets": list(ctx.state.get(sk.TEMP_SEEN_ASSETS) or []),
                            },
                            run_id=f"snapshot_{extension_count}",
                        )
                        await ctx.run_node(
                            search_budget_checkpoint,
                            node_input={"interrupt_id": interrupt_id, "payload": payload},
                            run_id=f"checkpoint_{extension_count}",
                        )
                    raise RuntimeError("the checkpoint returned without pausing")
                if decision.get("action") != EXTEND:
                    guidance = str(decision.get("guidance") or "")
                    break
                guidance = str(decision.get("guidance") or "")
                extension_count += 1
                ceilings = ceilings.extended(harness)
                await write(ceilings_state(ceilings, extension_count))
                if extension_count not in completed_extensions:
                    prompt = ev.continuation_prompt(
                        request,
                        report,
                        ceilings,
                        int(ctx.state.get(sk.TEMP_RETRIEVAL_TOOL_COUNT) or 0),
                        extension_count,
                        guidance,
                        list(ctx.state.get(sk.TEMP_RETRIEVED_EVIDENCE) or []),
                    )
                    await write({sk.TEMP_EXTENSION_REQUEST_PASS: extension_count})
                    report = await run_pass(
                        ctx, write, prompt, f"search_extension_{extension_count}", request
                    )
                    requested = bool(ctx.state.get(sk.TEMP_EXTENSION_REQUESTED))
                    completed_extensions.append(extension_count)
                if extension_count >= harness.max_extensions:
                    break  # hard stop: no third extension is ever offered

            evidence = list(ctx.state.get(sk.TEMP_RETRIEVED_EVIDENCE) or [])
            selected = ev.number_evidence(await rerank(request, evidence, ceilings))
            ranked = selected  # all of it, numbered: the backing quotes from it
            if deps.writer is not None:
                frame = ev.synthesis_prompt(request, [], report, snippets, guidance)
                instruction = deps.synthesizer.instruction
                if isinstance(instruction, str):
                    frame += instruction
                selected = grounding.fit_evidence(selected, deps.writer.evidence_budget(frame))
            prompt = ev.synthesis_prompt(request, selected, report, snippets, guidance)
            # The images the user pinned go to the writer too (the prompt's <image_snippet>
            # elements name them by ordinal); ADK keeps this input out of the session.
            images = prompt_images(ctx.session.events, ctx.invocation_id)
            answer = await ctx.run_node(
                deps.synthesizer,
                node_input=(
                    types.Content(role="user", parts=[types.Part(text=prompt), *images])
                    if images
                    else prompt
                ),
                run_id="synthesize",
            )
            answer_text = _text_of(answer)
            invented = 0
            if deps.writer is not None:
                answer_text, invented = keep_markers(answer_text, {p["n"] for p in selected})
                answer_text, looped = grounding.cut_repetition(answer_text)
                if looped:
                    logger.info("writer answer repeated itself: cut at the first repeat")
            citations = await verify_citations(
                with_quotes(answer_text, ev.extract_citations(answer_text, selected)),
                selected,
                deps.read_pages,
            )
            backed = (
                deps.writer is not None
                and deps.read_pages is not None
                and grounding.needs_backing(answer_text, citations, selected)
            )
            if backed:
                answer_text = await grounding.backed_answer(
                    answer_text,
                    citations=citations,
                    question=request,
                    numbered=ranked,
                    gaps=list(report.get("gaps") or []),
                    scorer=deps.scorer,
                    read_pages=deps.read_pages,
                )
                citations = await verify_citations(
                    with_quotes(answer_text, ev.extract_citations(answer_text, ranked)),
                    ranked,
                    deps.read_pages,
                )
            if invented or backed:
                logger.info(
                    "writer answer: %d invented citation(s) dropped, backed by quotes: %s",
                    invented,
                    backed,
                )
            summary = findings_summary(report)
            await write(
                {sk.RETRIEVED_EVIDENCE: audit_entries(ctx, request, evidence, citations, summary)}
            )
            completed = True
            yield {
                "status": "success",
                "answer": answer_text,
                "summary": summary,
                "citations": citations,
                "evidence_count": len(evidence),
                "extensions": extension_count,
                "gaps": list(report.get("gaps") or []),
                **(
                    {"grounding": {"invented_citations": invented, "backed": backed}}
                    if deps.writer is not None
                    else {}
                ),
            }
        except NodeInterruptedError:
            interrupted = True
            raise
        except asyncio.CancelledError:
            cancelled = True  # the caller went away: ADK seals the aborted invocation
            raise
        finally:
            ic.user_content = root_user_content
            if not (interrupted or cancelled or ic.is_aborted):
                result = FINISH_TASK_SUCCESS_RESULT if completed else FINISH_TASK_ERROR_RESULT
                try:
                    await write(dict(TEARDOWN))
                    await ctx.run_node(
                        close_isolation_scope, node_input={"result": result}, run_id="close_scope"
                    )
                except Exception:  # never mask the turn's own outcome
                    logger.exception("could not close the search pipeline's isolation scope")

    return search_library_pipeline


def _text_of(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, types.Content):
        return "".join(p.text or "" for p in output.parts or [] if not p.thought)
    if isinstance(output, dict) and "text" in output:
        return str(output["text"])
    return "" if output is None else str(output)
