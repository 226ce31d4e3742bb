"""Evidence: ranking what a research turn retrieved, and the prompts built from it.

Pure functions: the completion report for a pass that did not conclude, the continuation prompt
of an extension pass, the checkpoint card's payload, the synthesizer's grounded prompt, and the
citations found in an answer.
"""

from __future__ import annotations

from typing import Any

from services.agent.research.harness import Ceilings, word_trigger
from services.agent.research.markers import find_markers

# The synthesis prompt's closing instruction starts so (the offline model reads up to it).
SYNTHESIS_INSTRUCTION_START = "Write the answer from this evidence only."


def auto_completion_report(request: str, evidence: list[dict[str, Any]]) -> dict[str, Any]:
    """The report for a pass that ended without ``conclude_search`` (budget hit, model stopped).

    It keeps the user's question as the open gap unless evidence was found, so the checkpoint
    still offers an extension rather than silently synthesizing from nothing.
    """
    papers = _papers(evidence)
    if not evidence:
        return {
            "summary": "The search pass ended without finding passages in the library.",
            "gaps": [request.strip()[:300]],
            "concluded": False,
        }
    return {
        "summary": (
            f"The search pass ended without a conclusion after retrieving {len(evidence)} "
            f"passages from {len(papers)} paper(s): " + "; ".join(papers[:8]) + "."
        ),
        "gaps": [f"Not confirmed as fully answered: {request.strip()[:300]}"],
        "concluded": False,
    }


def _papers(evidence: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, str] = {}
    for piece in evidence:
        seen.setdefault(piece["item_key"], piece.get("title") or piece["item_key"])
    return [f"{title} ({key})" for key, title in seen.items()]


def initial_prompt(request: str, scope_note: str, snippets: str) -> str:
    parts = [f"Research request: {request.strip()}"]
    if scope_note:
        parts.append(scope_note)
    if snippets:
        parts.append(f"The user pointed at these passages:\n{snippets}")
    parts.append(
        "Find the passages that answer it in the user's library, then call conclude_search "
        "with a summary and the aspects you found no evidence for."
    )
    return "\n\n".join(parts)


def continuation_prompt(
    request: str,
    report: dict[str, Any],
    ceilings: Ceilings,
    calls_used: int,
    extension: int,
    guidance: str,
    evidence: list[dict[str, Any]] | None = None,
) -> str:
    """The prompt of an extension pass: it sees nothing of earlier passes but this, so it names
    what was established, what is missing, the queries already run and the pages already read."""
    gaps = "\n".join(f"- {g}" for g in report.get("gaps") or []) or "- (none listed)"
    parts = [
        f"Deep research extension {extension}. Research request: {request.strip()}",
        f"Already established:\n{report.get('summary') or '(nothing yet)'}",
        f"Still missing:\n{gaps}",
    ]
    evidence = evidence or []
    queries = list(dict.fromkeys(str(p["query"]) for p in evidence if p.get("kind") == "chunk"))
    if queries:
        parts.append("Queries already run:\n" + "\n".join(f"- {q}" for q in queries[:30]))
    read = list(
        dict.fromkeys(
            f"{p['item_key']} p. {p['page']}" for p in evidence if p.get("kind") == "page"
        )
    )
    if read:
        parts.append("Pages already read: " + ", ".join(read[:40]) + ".")
    if guidance.strip():
        parts.append(f"The user's guidance for this extension: {guidance.strip()}")
    parts.append(
        f"Budget now: {ceilings.budget} retrieval calls in total ({calls_used} used), "
        f"{ceilings.word_ceiling} words. Search only for what is missing; do not repeat earlier "
        "queries. Then call conclude_search with an updated summary and the remaining gaps."
    )
    return "\n\n".join(parts)


def checkpoint_payload(
    *,
    request: str,
    report: dict[str, Any],
    evidence: list[dict[str, Any]],
    extension_count: int,
    max_extensions: int,
    ceilings: Ceilings,
    next_ceilings: Ceilings,
    calls_used: int,
    words: int,
    extension_requested: bool,
) -> dict[str, Any]:
    """What the checkpoint card shows: what was covered, what is missing, what a grant adds."""
    if extension_requested:
        trigger = "agent_request"
    elif calls_used >= ceilings.budget or word_trigger(words, ceilings):
        trigger = "budget_exhausted"
    else:
        trigger = "gaps"
    return {
        "request": request,
        "extension_number": extension_count + 1,
        "max_extensions": max_extensions,
        "covered_summary": report.get("summary") or "",
        "gaps": list(report.get("gaps") or []),
        "justification": report.get("justification") or "",
        "trigger": trigger,
        "papers": _papers(evidence)[:12],
        "evidence_count": len(evidence),
        "tool_calls_used": calls_used,
        "words_retrieved": words,
        "ceilings": ceilings.to_dict(),
        "next_ceilings": next_ceilings.to_dict(),
    }


def interleave(rankings: list[list[tuple[str, float, int]]]) -> list[tuple[str, float, int]]:
    """Round-robin over several rankings (best of each first), each id once."""
    merged: list[tuple[str, float, int]] = []
    seen: set[str] = set()
    for rank in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking) and ranking[rank][0] not in seen:
                seen.add(ranking[rank][0])
                merged.append(ranking[rank])
    return merged


def select_evidence(
    evidence: list[dict[str, Any]],
    ranked: list[tuple[str, float, int]] | None,
    ceilings: Ceilings,
) -> list[dict[str, Any]]:
    """The pieces the synthesizer gets: reranked order, at most ``max_chunks`` and the ceiling.

    ``ranked`` is the cross-encoder's (id, score, words); None (reranker unavailable) falls
    back to retrieval order.
    """
    by_id = {p["id"]: p for p in evidence}
    if ranked is None:
        order = [(p["id"], float(p.get("score") or 0.0)) for p in evidence]
    else:
        order = [(cid, score) for cid, score, _ in ranked if cid in by_id]
    chosen: list[dict[str, Any]] = []
    words = 0
    for cid, score in order:
        piece = by_id[cid]
        if len(chosen) >= ceilings.max_chunks:
            break
        if chosen and words + int(piece.get("words") or 0) > ceilings.word_ceiling:
            continue
        words += int(piece.get("words") or 0)
        chosen.append({**piece, "rerank_score": score})
    return chosen


def own_first(
    evidence: list[dict[str, Any]], ranked: list[tuple[str, float, int]] | None
) -> list[tuple[str, float, int]]:
    """``ranked`` (retrieval order when None) with what the user wrote first: a question about
    their own notes prefers them."""
    if ranked is None:
        ranked = [
            (p["id"], float(p.get("score") or 0.0), int(p.get("words") or 0)) for p in evidence
        ]
    own = {p["id"] for p in evidence if p.get("origin")}
    return [r for r in ranked if r[0] in own] + [r for r in ranked if r[0] not in own]


def _cite_label(piece: dict[str, Any]) -> str:
    authors = piece.get("authors") or []
    lead = authors[0].split(",")[0].split()[-1] if authors else ""
    if len(authors) > 2:
        lead += " et al."
    elif len(authors) == 2:
        lead += " & " + authors[1].split(",")[0].split()[-1]
    year = piece.get("year") or "n.d."
    return f"{lead or piece.get('title', '')[:40]} ({year})"


def number_evidence(selected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**p, "n": i + 1, "label": _cite_label(p)} for i, p in enumerate(selected)]


# How evidence the user wrote is named to the writer and in the sources (``origin``).
OWN_NAMES = {"highlight": "your highlight", "comment": "your comment", "note": "your note"}


def evidence_block(p: dict[str, Any]) -> str:
    """One numbered piece as the synthesizer reads it: ``### [n] label "title" item KEY, p. X``
    and the passage (``offline_sentences.EVIDENCE_BLOCK`` parses it back). What the user
    wrote says so: ``, your highlight KEY`` (the annotation), ``, your note KEY "title"``
    (a note has no page)."""
    own = OWN_NAMES.get(str(p.get("origin") or ""))
    pages = ""
    if p.get("page"):
        pages = f", p. {p['page']}" + (
            f"-{p['page_end']}" if p.get("page_end") and p["page_end"] != p["page"] else ""
        )
    # Which of the item's PDFs the passage is from (an item may have several).
    pdf = f", PDF {p['attachment_key']}" if p.get("attachment_key") else ""
    section = f", section {p['section']!r}" if p.get("section") else ""
    mine = ""
    if own:
        mine = f", {own} {p.get('source_key') or '-'}"
        if p.get("note_title"):
            mine += f" {str(p['note_title'])[:80]!r}"
    found_by = f"\n(found by: {p['query']})" if p.get("kind") == "chunk" and p.get("query") else ""
    # "### [n]" opens a block: passages may themselves hold lines like "[1] ..." (R output).
    return (
        f'### [{p["n"]}] {p.get("label", "")} "{p.get("title", "")}" item {p["item_key"]}'
        f"{pages}{pdf}{section}{mine}{found_by}\n{str(p.get('text') or '').strip()}"
    )


def evidence_blocks(numbered: list[dict[str, Any]]) -> str:
    return "\n\n".join(evidence_block(p) for p in numbered)


def synthesis_prompt(
    request: str,
    numbered: list[dict[str, Any]],
    report: dict[str, Any],
    snippets: str,
    guidance: str,
) -> str:
    gaps = "\n".join(f"- {g}" for g in report.get("gaps") or [])
    parts = [f"Question: {request.strip()}"]
    if snippets:
        parts.append(f"Passages the user pointed at:\n{snippets}")
    if guidance.strip():
        parts.append(f"User guidance: {guidance.strip()}")
    parts.append("Evidence from the user's library:\n\n" + (evidence_blocks(numbered) or "(none)"))
    if gaps:
        parts.append(f"Aspects the search found no evidence for:\n{gaps}")
    parts.append(
        f"{SYNTHESIS_INSTRUCTION_START} Cite every claim with the evidence number "
        "and page, like [3, p. 12] (a note has no page: [4]). Say plainly which aspects the "
        "library does not cover. End "
        "with a '# Cited Sources' section listing each cited number with its authors, year, "
        "title, item key and pages."
    )
    return "\n\n".join(parts)


def extract_citations(answer: str, numbered: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The evidence an answer cites: [{"n", "item_key", "title", "page"}], in order of use
    (the markers of ``markers.py``; a number no evidence has is dropped, a marker without a
    page cites the passage's first page, a range its first page)."""
    by_n = {p["n"]: p for p in numbered}
    found: dict[tuple[int, int], dict[str, Any]] = {}
    for marker in find_markers(answer):
        piece = by_n.get(marker.n)
        if piece is None:
            continue
        n = marker.n
        page = marker.page if marker.page is not None else int(piece["page"])
        cited = {
            "n": n,
            "item_key": piece["item_key"],
            "title": piece.get("title", ""),
            "page": page,
        }
        if piece.get("attachment_key"):
            cited["attachment_key"] = piece["attachment_key"]  # which of the item's PDFs
        if piece.get("origin"):  # what the user wrote: the annotation or note it opens
            cited["origin"] = piece["origin"]
            cited["source_key"] = piece.get("source_key") or ""
            if piece.get("note_title"):
                cited["note_title"] = piece["note_title"]
        found.setdefault((n, page), cited)
    return list(found.values())
