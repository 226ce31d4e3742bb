"""The search subagent's tools: the library tools under a budget, plus the two ways to end a
pass (``conclude_search`` and ``request_search_extension``).

Every retrieval call is counted against the turn's ceilings (``harness``); what it returns is
recorded as evidence in ``temp:retrieved_evidence`` (deduplicated by chunk, pages by item and
page) so the pipeline can rerank it and cite it. State is always reassigned whole, never
mutated in place, so ADK's delta tracking sees every change.
"""

from __future__ import annotations

import logging
from typing import Any

from google.adk.tools.tool_context import ToolContext

from services.agent.research import state_keys as sk
from services.agent.research.harness import Ceilings, check_and_increment_tool_budget
from services.agent.research.library_tools import (
    GET_DOCUMENT_TOC,
    READ_DOCUMENT,
    SEARCH_CORPUS,
    Tool,
)

logger = logging.getLogger(__name__)

CONCLUDE_SEARCH = "conclude_search"
REQUEST_SEARCH_EXTENSION = "request_search_extension"
MAX_BLOCKED_CALLS = 2


def current_ceilings(state: Any, default: Ceilings) -> Ceilings:
    budget = state.get(sk.TEMP_RETRIEVAL_TOOL_BUDGET)
    if budget is None:
        return default
    return Ceilings(
        int(budget),
        int(state.get(sk.TEMP_WORD_CEILING) or default.word_ceiling),
        int(state.get(sk.TEMP_MAX_RERANK_CHUNKS) or default.max_chunks),
    )


def _record(state: Any, pieces: list[dict[str, Any]]) -> int:
    """Add new evidence pieces; return how many words were new."""
    evidence = list(state.get(sk.TEMP_RETRIEVED_EVIDENCE) or [])
    seen = set(state.get(sk.TEMP_SEEN_CHUNK_IDS) or [])
    known = {p["item_key"]: p for p in evidence if p.get("authors")}
    new_words = 0
    for piece in pieces:
        if piece["id"] in seen:
            continue
        if not piece.get("authors") and piece["item_key"] in known:
            meta = known[piece["item_key"]]
            piece = {**piece, "authors": meta["authors"], "year": meta.get("year")}
        seen.add(piece["id"])
        evidence.append(piece)
        new_words += int(piece.get("words") or 0)
    state[sk.TEMP_RETRIEVED_EVIDENCE] = evidence
    state[sk.TEMP_SEEN_CHUNK_IDS] = sorted(seen)
    state[sk.TEMP_RETRIEVED_WORDS] = int(state.get(sk.TEMP_RETRIEVED_WORDS) or 0) + new_words
    return new_words


def own_writing(hit: dict[str, Any]) -> dict[str, Any]:
    """For a passage the user wrote (a highlight, a comment, a note): its ``origin`` and where
    it is (the annotation's or note's key, the page label, the note's title)."""
    origin = hit.get("kind") or "text"
    if origin == "text":
        return {}
    return {
        "origin": origin,
        "source_key": hit.get("source_key") or "",
        **{k: hit[k] for k in ("page_label", "note_title", "color") if hit.get(k)},
    }


def _scope_for(state: Any, requested: str | list[str] | None) -> str | list[str]:
    """The user's chosen scope wins; within the whole library the model may narrow it."""
    chosen = state.get(sk.SEARCH_SCOPE) or "library"
    if chosen != "library":
        return chosen  # type: ignore[no-any-return]
    return requested or "library"


def make_subagent_tools(library_tools: list[Tool], default_ceilings: Ceilings) -> list[Tool]:
    """Budgeted ``search_corpus``, ``get_document_toc``, ``read_document`` and the two enders."""
    by_name = {t.__name__: t for t in library_tools}
    inner_search = by_name[SEARCH_CORPUS]
    inner_toc = by_name[GET_DOCUMENT_TOC]
    inner_read = by_name[READ_DOCUMENT]

    def _gate(tool_context: ToolContext) -> tuple[dict[str, Any] | None, str | None]:
        state = tool_context.state
        ceilings = current_ceilings(state, default_ceilings)
        check = check_and_increment_tool_budget(
            int(state.get(sk.TEMP_RETRIEVAL_TOOL_COUNT) or 0),
            int(state.get(sk.TEMP_RETRIEVED_WORDS) or 0),
            ceilings,
        )
        if not check.allowed:
            blocked = int(state.get(sk.TEMP_BLOCKED_CALLS) or 0) + 1
            state[sk.TEMP_BLOCKED_CALLS] = blocked
            if blocked >= MAX_BLOCKED_CALLS:
                # The model ignored the block: end the pass here. The pipeline's automatic
                # completion report takes over (a runaway loop must not burn the turn).
                tool_context.actions.skip_summarization = True
            return {"status": "blocked", "notice": check.notice}, None
        state[sk.TEMP_RETRIEVAL_TOOL_COUNT] = check.calls
        return None, check.notice

    def _with_notice(result: dict[str, Any], notice: str | None) -> dict[str, Any]:
        if notice:
            result = {**result, "budget_notice": notice}
        return result

    async def search_corpus(
        query: str,
        tool_context: ToolContext,
        scope: str | list[str] = "library",
        k: int = 8,
        of: str = "all",
    ) -> dict[str, Any]:
        blocked, notice = _gate(tool_context)
        if blocked:
            return blocked
        result = await inner_search(
            query=query, scope=_scope_for(tool_context.state, scope), k=k, of=of
        )
        if result.get("status") == "success":
            pieces = [
                {
                    "id": str(r["chunk_id"]),
                    "kind": "chunk",
                    "query": query,
                    **{k: r[k] for k in ("item_key", "title", "authors", "year", "page")},
                    "attachment_key": r.get("attachment_key") or "",
                    "page_end": r.get("page_end") or r["page"],
                    "section": r.get("section") or "",
                    "text": r["text"],
                    "words": r.get("word_count") or len(r["text"].split()),
                    "score": r.get("score", 0.0),
                    **own_writing(r),
                }
                for r in result["results"]
            ]
            _record(tool_context.state, pieces)
        return _with_notice(result, notice)

    async def get_document_toc(
        item_key: str, tool_context: ToolContext, attachment_key: str | None = None
    ) -> dict[str, Any]:
        blocked, notice = _gate(tool_context)
        if blocked:
            return blocked
        result = await inner_toc(item_key=item_key, attachment_key=attachment_key)
        if result.get("status") == "success":
            assets = set(tool_context.state.get(sk.TEMP_SEEN_ASSETS) or [])
            assets.add(item_key)
            tool_context.state[sk.TEMP_SEEN_ASSETS] = sorted(assets)
        return _with_notice(result, notice)

    async def read_document(
        item_key: str,
        tool_context: ToolContext,
        section: str | None = None,
        start_page: int | None = None,
        end_page: int | None = None,
        attachment_key: str | None = None,
    ) -> dict[str, Any]:
        blocked, notice = _gate(tool_context)
        if blocked:
            return blocked
        result = await inner_read(
            item_key=item_key,
            section=section,
            start_page=start_page,
            end_page=end_page,
            attachment_key=attachment_key,
        )
        if result.get("status") == "success":
            read_from = str(result.get("attachment_key") or attachment_key or "")
            pieces = [
                {
                    # Pages of two PDFs of one item are different pieces.
                    "id": f"{item_key}:{read_from}:page:{p['page']}",
                    "kind": "page",
                    "query": section or f"pages {result['start_page']}-{result['end_page']}",
                    "item_key": item_key,
                    "attachment_key": read_from,
                    "title": result["title"],
                    "authors": [],
                    "year": None,
                    "page": p["page"],
                    "page_end": p["page"],
                    "section": result.get("section") or "",
                    "text": p["text"],
                    "words": len(p["text"].split()),
                    "score": 0.0,
                }
                for p in result["pages"]
            ]
            _record(tool_context.state, pieces)
        return _with_notice(result, notice)

    async def conclude_search(
        summary: str, gaps: list[str], tool_context: ToolContext
    ) -> dict[str, Any]:
        """End this retrieval pass and hand your findings to the writer.

        Call it once you have enough evidence, when the budget runs out, or when a warning
        tells you to conclude.

        Args:
            summary: What the retrieved passages establish, naming papers (item_key) and pages.
            gaps: Aspects of the question you found no evidence for; empty when fully covered.
        """
        tool_context.state[sk.TEMP_SEARCH_REPORT] = {
            "summary": summary.strip(),
            "gaps": [g.strip() for g in gaps if g and g.strip()],
            "concluded": True,
        }
        tool_context.actions.skip_summarization = True
        return {"status": "concluded"}

    async def request_search_extension(
        justification: str,
        covered_summary: str,
        missing_aspects: list[str],
        tool_context: ToolContext,
    ) -> dict[str, Any]:
        """Ask the user for a deep-research extension (more calls, words and evidence).

        Use it when the question clearly needs more retrieval than this pass allows (several
        papers to compare, long sections to read). It ends this pass; the user decides.

        Args:
            justification: Why more retrieval is needed, in one or two sentences.
            covered_summary: What you have established so far, naming papers and pages.
            missing_aspects: The aspects still uncovered, one per entry.
        """
        aspects = [a.strip() for a in missing_aspects if a and a.strip()]
        tool_context.state[sk.TEMP_EXTENSION_REQUESTED] = True
        tool_context.state[sk.TEMP_SEARCH_REPORT] = {
            "summary": covered_summary.strip(),
            "gaps": aspects or [justification.strip()],
            "justification": justification.strip(),
            "concluded": True,
        }
        tool_context.actions.skip_summarization = True
        return {"status": "extension_requested"}

    for fn, inner in ((search_corpus, inner_search), (get_document_toc, inner_toc)):
        fn.__doc__ = inner.__doc__
    read_document.__doc__ = inner_read.__doc__
    search_corpus.__name__ = SEARCH_CORPUS
    get_document_toc.__name__ = GET_DOCUMENT_TOC
    read_document.__name__ = READ_DOCUMENT
    return [
        search_corpus,
        get_document_toc,
        read_document,
        conclude_search,
        request_search_extension,
    ]
