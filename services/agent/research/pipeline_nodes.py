"""The search pipeline's building blocks: invocation-scoped scans of the session, the child
nodes every pausing side effect goes through, and the turn's state bookkeeping."""

from __future__ import annotations

from typing import Any

from google.adk.agents.context import Context
from google.adk.events.event import Event
from google.adk.events.request_input import RequestInput
from google.adk.workflow import node
from google.genai import types

from services.agent.research import state_keys as sk
from services.agent.research.harness import Ceilings
from services.common.adk.history import live_events
from services.common.adk.internals import invocation_context
from services.common.adk.names import FINISH_TASK, REQUEST_INPUT

CHECKPOINT_NODE = "search_budget_checkpoint"
SCOPE_PREFIX = "search_pipeline:"
CHECKPOINT_MESSAGE = "Deep research limit reached. Extend retrieval or synthesize current findings?"


# ---------------------------------------------------------------------------------------------
# Invocation-scoped scans


def interrupt_answer(ctx: Context, interrupt_id: str) -> dict[str, Any] | None:
    """The user's answer to ``interrupt_id`` raised by *this* pipeline in this invocation.

    Only checkpoints this pipeline asked (its ``adk_request_input`` call, in its own isolation
    scope and invocation) count, so a second pipeline of the same turn, or an older turn, never
    picks up an answer meant for another.
    """
    asked = False
    for event in live_events(ctx.session.events):
        if event.invocation_id != ctx.invocation_id:
            continue
        for fc in event.get_function_calls():
            if (
                fc.id == interrupt_id
                and fc.name == REQUEST_INPUT
                and event.isolation_scope == ctx.isolation_scope
            ):
                asked = True
        if not asked:
            continue
        for fr in event.get_function_responses():
            if fr.id == interrupt_id and fr.name == REQUEST_INPUT:
                return dict(fr.response or {})
    if not asked:
        return None
    answer = (ctx.resume_inputs or {}).get(interrupt_id)
    if answer is not None:
        return answer if isinstance(answer, dict) else {"action": str(answer)}
    return None


def recover_isolation_scope(ctx: Context) -> str | None:
    """This pipeline's scope: the context's, else the snapshot's, else this invocation's events."""
    if ctx.isolation_scope:
        return ctx.isolation_scope
    snapshot = ctx.state.get(sk.HITL_SNAPSHOT)
    if (
        isinstance(snapshot, dict)
        and snapshot.get("invocation_id") == ctx.invocation_id
        and snapshot.get("isolation_scope")
    ):
        return str(snapshot["isolation_scope"])
    for event in reversed(ctx.session.events):
        if event.invocation_id == ctx.invocation_id and str(event.isolation_scope or "").startswith(
            SCOPE_PREFIX
        ):
            return str(event.isolation_scope)
    return None


def ensure_isolation_scope(ctx: Context) -> str | None:
    scope = recover_isolation_scope(ctx)
    if scope and not ctx.isolation_scope:
        ctx.isolation_scope = scope
        invocation_context(ctx).isolation_scope = scope
    return scope


def current_snapshot(ctx: Context) -> dict[str, Any] | None:
    """The persisted snapshot, only if it is this pipeline's: same invocation (never an older
    turn's) and same isolation scope (never another search_library call's)."""
    snapshot = ctx.state.get(sk.HITL_SNAPSHOT)
    if (
        isinstance(snapshot, dict)
        and snapshot.get("invocation_id") == ctx.invocation_id
        and snapshot.get("isolation_scope") == ctx.isolation_scope
    ):
        return snapshot
    return None


# ---------------------------------------------------------------------------------------------
# Child nodes (every side effect that must precede a pause happens in a child node)


@node(name=CHECKPOINT_NODE, rerun_on_resume=False)
async def search_budget_checkpoint(ctx: Context, node_input: dict[str, Any]) -> Any:
    yield RequestInput(
        interrupt_id=node_input["interrupt_id"],
        message=CHECKPOINT_MESSAGE,
        payload=node_input["payload"],
        response_schema=None,
    )


@node(name="persist_hitl_snapshot")
async def persist_hitl_snapshot(ctx: Context, node_input: dict[str, Any]) -> Any:
    ctx.state[sk.HITL_SNAPSHOT] = dict(node_input)
    yield None


@node(name="apply_state")
async def apply_state(ctx: Context, node_input: dict[str, Any]) -> Any:
    for key, value in node_input.items():
        ctx.state[key] = value
    yield None


@node(name="close_isolation_scope")
async def close_isolation_scope(ctx: Context, node_input: dict[str, Any]) -> Any:
    yield Event(
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        name=FINISH_TASK, response={"result": node_input["result"]}
                    )
                )
            ],
        )
    )


# ---------------------------------------------------------------------------------------------


class StateWriter:
    """Writes state through a child node, so each write is an event of its own.

    The pipeline never assigns ``ctx.state`` itself: its own pending delta would shadow what
    the subagent's tools write to the same keys until the pipeline emitted an event, and the
    pipeline would read its stale value back (ADK's ``State`` reads the delta first).
    """

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.count = 0

    async def __call__(self, updates: dict[str, Any]) -> None:
        self.count += 1
        await self.ctx.run_node(apply_state, node_input=updates, run_id=f"state_{self.count}")


def ceilings_state(ceilings: Ceilings, extension_count: int) -> dict[str, Any]:
    return {
        sk.TEMP_RETRIEVAL_TOOL_BUDGET: ceilings.budget,
        sk.TEMP_WORD_CEILING: ceilings.word_ceiling,
        sk.TEMP_MAX_RERANK_CHUNKS: ceilings.max_chunks,
        sk.TEMP_EXTENSION_COUNT: extension_count,
    }


TEARDOWN: dict[str, Any] = {
    sk.HITL_SNAPSHOT: None,
    sk.TEMP_EXTENSION_REQUESTED: False,
    sk.TEMP_EXTENSION_REQUEST_PASS: None,
    sk.TEMP_EXTENSION_COUNT: None,
    sk.TEMP_RETRIEVAL_TOOL_BUDGET: None,
    sk.TEMP_WORD_CEILING: None,
    sk.TEMP_MAX_RERANK_CHUNKS: None,
}


def findings_summary(report: dict[str, Any], max_words: int = 150) -> str:
    """The research turn's short findings (what compaction keeps instead of the synthesis)."""
    words = str(report.get("summary") or "").split()
    text = " ".join(words[:max_words]) + (" ..." if len(words) > max_words else "")
    gaps = list(report.get("gaps") or [])
    if gaps:
        text += " Not covered: " + "; ".join(str(g) for g in gaps[:5]) + "."
    return text.strip()


def audit_entries(
    ctx: Context,
    request: str,
    evidence: list[dict[str, Any]],
    citations: list[dict[str, Any]],
    summary: str,
) -> list[dict[str, Any]]:
    history = list(ctx.state.get(sk.RETRIEVED_EVIDENCE) or [])
    history.append(
        {
            "invocation_id": ctx.invocation_id,
            "request": request,
            "summary": summary,
            "queries": sorted({str(p.get("query")) for p in evidence if p.get("query")})[:30],
            "evidence": [
                {"item_key": p["item_key"], "page": p["page"], "title": p.get("title", "")}
                for p in evidence
            ][:60],
            "citations": citations,
        }
    )
    return history[-sk.MAX_AUDIT_HISTORY_TURNS :]
