"""What a generative writer's answer may show the user.

A writer model (the synthesizer, when it is not the offline model) gets the evidence that fits
its context window (:func:`fit_evidence`: by rank, a passage that does not fit whole cut at a
sentence end, never mid-sentence). Its answer then loses the citations it invented (a number
no evidence has, :func:`services.agent.research.markers.keep_markers`), and, when not one of
its quoted citations is on the page it cites, says so and shows the papers' own sentences: the
extractive answer the offline model would have written from the same evidence
(:func:`backed_answer`); when that answer is that the library has no evidence, the unchecked
prose is not shown at all. Small local models write fluent prose with made-up quotes; the user
must never see such an answer as if it were checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from services.agent.research import evidence as ev
from services.agent.research.citations import PageReader
from services.agent.research.offline_answer import NO_EVIDENCE, Scorer, compose_answer
from services.agent.research.offline_sentences import parse_blocks, sentence_key
from services.common.tokens import fit_tokens

CITED_SOURCES = "# Cited Sources"
# Tokens kept free beyond the estimate: the chat template's own tokens, the estimate's error.
MARGIN_TOKENS = 128
# The least evidence worth a call: below it the window is too small for the question.
MIN_EVIDENCE_TOKENS = 200

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]\u201d\u2019]*\s+(?=[\"'(\[\u201c]?[A-Z0-9])")

NO_VERIFIED_NOTICE = (
    "*None of the citations above could be found on the page it cites, so this answer is not "
    "checked against your papers. What the papers themselves say, quoted:*"
)
SOME_UNVERIFIED_NOTICE = (
    "*Some of the citations above are not on the page they cite. What the papers themselves "
    "say, quoted:*"
)
NO_ANSWER_NOTICE = (
    "*The model wrote no answer from the evidence. What the papers themselves say, quoted:*"
)
NOT_IN_LIBRARY_NOTICE = (
    "*The model's answer is not shown: none of its citations could be found on the page it "
    "cites, and no passage the search found answers the question.*"
)


REPEATED_NOTICE = "*[The model began repeating itself here; the rest of its answer is cut.]*"
# A sentence this long said a second time is a loop, not emphasis.
MIN_REPEATED_WORDS = 6

estimate_tokens = fit_tokens  # what the evidence and the prompt count as


@dataclass(frozen=True, slots=True)
class WriterLimits:
    """The writer model's window: ``context_window`` tokens in all (None: large enough for
    any evidence, as a hosted model's), of which ``max_tokens`` are kept for its answer."""

    context_window: int | None = None
    max_tokens: int | None = None

    def evidence_budget(self, prompt_without_evidence: str) -> int | None:
        """Tokens left for the evidence blocks; None when there is no limit."""
        if self.context_window is None:
            return None
        used = estimate_tokens(prompt_without_evidence) + (self.max_tokens or 0) + MARGIN_TOKENS
        return max(self.context_window - used, MIN_EVIDENCE_TOKENS)


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def cut_repetition(answer: str) -> tuple[str, bool]:
    """``answer`` cut before the first sentence it says a second time, and whether it was.

    A small model that loops repeats whole sentences until its ``max_tokens`` runs out (the
    135M model wrote one sentence 14 times in one answer); the user should read the answer
    once, with a line that says where it was cut. Short sentences ("See [2].") may recur.
    """
    body, sources = answer, ""
    if CITED_SOURCES in answer:
        body, rest = answer.split(CITED_SOURCES, 1)
        sources = CITED_SOURCES + rest
    seen: set[str] = set()
    offset = 0
    for line in body.splitlines(keepends=True):
        start = 0
        for sentence in _sentences(line):
            at = line.find(sentence, start)
            start = at + len(sentence)
            key = sentence_key(sentence)
            if len(key.split()) < MIN_REPEATED_WORDS:
                continue
            if key in seen:
                kept = body[: offset + at].rstrip()
                tail = f"\n\n{sources}" if sources else ""
                return f"{kept}\n\n{REPEATED_NOTICE}{tail}", True
            seen.add(key)
        offset += len(line)
    return answer, False


def fit_evidence(numbered: list[dict[str, Any]], budget: int | None) -> list[dict[str, Any]]:
    """The best-ranked evidence whose blocks fit ``budget`` tokens, numbered as given.

    Pieces go whole in rank order; the first that does not fit is cut after its last sentence
    that does (if one does) and ends the list: a lower-ranked piece never displaces a better
    one's opening. The first piece keeps at least its first sentence.
    """
    if budget is None:
        return list(numbered)
    fitted: list[dict[str, Any]] = []
    left = budget
    for piece in numbered:
        cost = estimate_tokens(ev.evidence_block(piece)) + 2
        if cost <= left:
            fitted.append(piece)
            left -= cost
            continue
        header = estimate_tokens(ev.evidence_block({**piece, "text": ""})) + 2
        kept: list[str] = []
        for sentence in _sentences(str(piece.get("text") or "")):
            if header + estimate_tokens(" ".join([*kept, sentence])) > left:
                break
            kept.append(sentence)
        if not kept and not fitted:
            kept = _sentences(str(piece.get("text") or ""))[:1]
        if kept:
            text = " ".join(kept)
            fitted.append({**piece, "text": text, "words": len(text.split()), "trimmed": True})
        break
    return fitted


def body_of(answer: str) -> str:
    """The answer without its '# Cited Sources' list."""
    return answer.split(CITED_SOURCES, 1)[0].rstrip()


def needs_backing(
    answer: str, citations: list[dict[str, Any]], numbered: list[dict[str, Any]]
) -> bool:
    """Whether the answer needs the papers' own sentences under it: there was evidence, and the
    answer is empty, cites nothing, or quotes a sentence that is not on the page it cites (a
    line of '# Cited Sources' quotes nothing and is not judged)."""
    if not numbered:
        return False
    quoted = [c for c in citations if c.get("quote")]
    return not answer.strip() or not quoted or not all(c.get("verified") is True for c in quoted)


async def backed_answer(
    answer: str,
    *,
    citations: Sequence[dict[str, Any]] = (),
    question: str,
    numbered: list[dict[str, Any]],
    gaps: list[str],
    scorer: Scorer | None,
    read_pages: PageReader | None,
) -> str:
    """``answer`` (without its sources list) followed by the notice and the extractive answer
    from the numbered evidence (all of it, not only what fitted the writer's window: the
    numbers are the same), which cites only sentences that are on their pages; ``citations``
    are the answer's own, checked."""
    body = body_of(answer)
    if not body.strip():
        notice = NO_ANSWER_NOTICE
    elif any(c.get("verified") is True for c in citations):
        notice = SOME_UNVERIFIED_NOTICE
    else:
        notice = NO_VERIFIED_NOTICE
    extractive = await compose_answer(
        question,
        parse_blocks(ev.evidence_blocks(numbered)),
        gaps,
        scorer,
        notice=notice,
        read_pages=read_pages,
    )
    abstains = extractive.removeprefix(notice).lstrip().startswith(NO_EVIDENCE)
    if abstains and notice == NO_VERIFIED_NOTICE:
        # Unchecked prose on a question the papers do not answer: the library's answer is that
        # it has no evidence, not the model's fluent guess with citations that are not there.
        return NOT_IN_LIBRARY_NOTICE + extractive.removeprefix(notice)
    return f"{body}\n\n{extractive}" if body.strip() else extractive
