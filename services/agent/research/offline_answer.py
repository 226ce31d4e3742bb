"""The offline synthesizer's answer: the sentences of the evidence that answer, picked by meaning.

The built-in model writes no prose of its own. From the numbered evidence of the synthesis
prompt it takes every sentence (overlapping chunks give the same sentence twice: it is kept
once), scores each against the question with the cross-encoder of the reranker service (a
sentence that starts with "It" or "This" is scored with the sentence before it), and writes:

1. the direct answer: the best one to three sentences, each cited [n, p. X];
2. the supporting passages: the next best sentences, preferring papers not quoted yet;
3. what the library does not cover, and ``# Cited Sources``.

Each part of the question (``offline_questions``) gets its own direct answer. When no sentence
scores above :data:`ABSTAIN_SCORE` the answer says the library has no evidence, with no
citations; a question that names something no passage mentions ("ADVI", "Mann-Kendall") needs
:data:`UNNAMED_SCORE`. Without a reranker (it is down) sentences are scored by shared rare
words.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from services.agent.research.citations import PageReader, on_page
from services.agent.research.offline_questions import (
    STOP,
    Part,
    about_own_writing,
    asks_for_own_words,
    own_writing_subject,
    question_parts,
    unmentioned_names,
)
from services.agent.research.offline_sentences import (
    Block,
    Sentence,
    candidate_sentences,
    words,
)
from services.common.own_reading import COMMENT_LEAD

logger = logging.getLogger(__name__)

# Cross-encoder (ms-marco MiniLM) logits: a sentence below this does not answer. Calibrated
# on bench/data/answer_questions.jsonl through the whole stack (bench_answers.py): the best
# sentence of 63 of 65 answerable questions scores above -1.7, and of 11 of 13 out-of-library
# ones below -2.7 (the other two, about Stan's ADVI and the Mann-Kendall test, find sentences
# about Stan and trends at 2.1: :data:`UNNAMED_SCORE` refuses those); -2.5 sits in that gap.
# See docs/benchmarks.md.
ABSTAIN_SCORE = -2.5
# How an answer that abstains begins its first line after the notice.
NO_EVIDENCE = "Your library has no evidence on this"
# A question that names something no passage of the evidence mentions ("ADVI", "Mann-Kendall",
# "Cas9") is about something else than the library: only a sentence that clearly answers it
# anyway (a synonym the paper uses) keeps it from abstaining. On the benchmark, the passages
# found for such questions best score 2.1-2.3 (sentences about Stan's sampler, about trends);
# answerable questions' names are all in their evidence.
UNNAMED_SCORE = 4.0
# Further direct-answer sentences must score within this of the best one.
DIRECT_MARGIN = 2.5
MAX_DIRECT = 3
MAX_SUPPORTING = 4
SUPPORT_SCORE = -1.0
# Said of a sentence that needs the one before it ("That is, ..."), or that runs on past 60
# words: a self-contained sentence of the same score answers better.
ANAPHOR_PENALTY = 1.0
LONG_PENALTY = 1.0

# (query, [(id, text)]) -> [(id, score)], best first.
Scorer = Callable[[str, list[tuple[str, str]]], Awaitable[list[tuple[str, float]]]]

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*[A-Za-z0-9+]|[A-Za-z]")

_ANAPHOR = re.compile(
    r"^(?:It|Its|This|These|That|Those|They|Their|Such|Here|Then|Thus|Hence|Both|The latter"
    r"|The former|In this|In that|In these|As a result|Consequently)\b"
)


@dataclasses.dataclass
class _Quote:
    sentence: Sentence
    score: float


def penalty(sentence: Sentence) -> float:
    penalty = ANAPHOR_PENALTY if _ANAPHOR.match(sentence.text) else 0.0
    return penalty + (LONG_PENALTY if len(sentence.text.split()) > 60 else 0.0)


def cross_encoder_text(sentence: Sentence) -> str:
    body = sentence.text
    # A comment on a highlight is about the highlighted text: scored with it.
    comment = sentence.block.origin == "highlight" and body.startswith(COMMENT_LEAD)
    if sentence.context and (comment or _ANAPHOR.match(body)):
        body = f"{sentence.context} {body}"
    return f"{sentence.block.title}\n{body}"


async def _score(
    scorer: Scorer | None, part: Part, sentences: list[Sentence]
) -> list[tuple[Sentence, float]]:
    pool = [s for s in sentences if part.papers is None or s.block.key in part.papers]
    if not pool:
        return []
    by_id = {s.id: s for s in pool}
    if scorer is not None:
        try:
            ranked = await scorer(part.query, [(s.id, cross_encoder_text(s)) for s in pool])
            scored = [(by_id[i], score - penalty(by_id[i])) for i, score in ranked if i in by_id]
            scored.sort(key=lambda x: -x[1])
            logger.debug(
                "offline answer %r: %s",
                part.query,
                [(round(sc, 2), s.text[:60]) for s, sc in scored[:8]],
            )
            return scored
        except Exception as exc:  # the reranker is down: words still find something
            logger.warning("offline answer: sentence scoring failed (%s); using shared words", exc)
    return lexical_scores(part.query, pool)


def lexical_scores(query: str, sentences: list[Sentence]) -> list[tuple[Sentence, float]]:
    """Shared words weighted by rarity, on the cross-encoder's scale: a sentence sharing a
    third of the query's weight sits at :data:`ABSTAIN_SCORE`. The fallback when the reranker
    cannot be reached."""
    wanted = {w for w in words(query) if w not in STOP and len(w) >= 3}
    if not wanted:
        return []
    df: dict[str, int] = {}
    bags = [set(words(s.text)) for s in sentences]
    for bag in bags:
        for w in bag & wanted:
            df[w] = df.get(w, 0) + 1
    total = sum(1.0 / df.get(w, 1) ** 0.5 for w in wanted)
    scored = []
    for s, bag in zip(sentences, bags, strict=True):
        if bag & wanted:
            share = sum(1.0 / df[w] ** 0.5 for w in bag & wanted) / total
            scored.append((s, ABSTAIN_SCORE + 10.0 * (share - 1 / 3)))
    scored.sort(key=lambda x: -x[1])
    return scored


async def compose_answer(
    question: str,
    blocks: list[Block],
    gaps: list[str],
    scorer: Scorer | None,
    *,
    notice: str,
    read_pages: PageReader | None = None,
    own_words_only: bool = False,
) -> str:
    own = [b for b in blocks if b.origin]
    if own and about_own_writing(question) and not own_words_only:
        # "What did I note about X": quoted from what the user wrote about X, if any of it
        # answers; else from everything, as any question. "What did I comment ...": a
        # highlight answers with its comment, not the paper's words under it.
        mine = await compose_answer(
            own_writing_subject(question), own, [], scorer, notice=notice, read_pages=read_pages,
            own_words_only=asks_for_own_words(question),
        )  # fmt: skip
        if f"\n{NO_EVIDENCE}: " not in mine:
            return mine
    lines = [notice, ""]
    sentences = candidate_sentences(blocks)
    if own_words_only:
        # The highlighted text stays in the passage (the context its comment is scored in).
        sentences = [s for s in sentences if _users_words(s)]
    parts = question_parts(question, blocks)
    open_gaps = list(gaps)
    direct: list[tuple[Part, list[_Quote]]] = []
    rest: list[_Quote] = []
    quoted: set[str] = set()
    best_scores: list[float] = []
    unmentioned = unmentioned_names(question, blocks)
    floor = max(ABSTAIN_SCORE, UNNAMED_SCORE) if unmentioned else ABSTAIN_SCORE
    for part in parts:
        # A part the search reported as a gap is still scored: the search judged by shared
        # words, the cross-encoder by meaning. It stays a gap unless a sentence answers it.
        scored = await _score(scorer, part, sentences)
        best_scores.append(scored[0][1] if scored else float("-inf"))
        if scored and scored[0][1] >= floor:
            open_gaps = [g for g in open_gaps if not _same_aspect(part.query, g)]
        if not scored or scored[0][1] < floor:
            label = part.query if part.papers is None else f"{part.label}: {part.query}"
            if not any(_same_aspect(label, g) for g in open_gaps):
                open_gaps.append(label)
            continue
        best = scored[0][1]
        picked: list[_Quote] = []
        for sentence, score in scored:
            if sentence.id in quoted:
                continue
            if len(picked) < MAX_DIRECT and score >= max(best - DIRECT_MARGIN, ABSTAIN_SCORE):
                picked.append(_Quote(sentence, score))
                quoted.add(sentence.id)
            elif score >= SUPPORT_SCORE:
                rest.append(_Quote(sentence, score))
        direct.append((part, picked))
    # What abstention is calibrated on (bench/bench_answers.py reads these lines).
    logger.info(
        "offline answer scored: best=%.2f parts=%d sentences=%d unmentioned=%s question=%r",
        max(best_scores, default=float("-inf")),
        len(parts),
        len(sentences),
        ",".join(unmentioned) or "-",
        question[:300],
    )
    if not direct:
        subject = question.strip() or "this question"
        lines.append(f"{NO_EVIDENCE}: {subject}")
        if unmentioned:
            lines.append("")
            names = ", ".join(f"“{n}”" for n in unmentioned)
            lines.append(f"No passage the search found mentions {names}.")
        elif blocks:
            lines.append("")
            lines.append(
                "The closest passages the search found do not answer it, so none is quoted."
            )
        return "\n".join(lines)
    pages = await _pages_of(
        [q.sentence for _, p in direct for q in p] + [q.sentence for q in rest], read_pages
    )
    cited: dict[int, tuple[Block, set[int]]] = {}
    multi = len(direct) > 1
    for part, picked in direct:
        if multi:
            lines.append(f"**{part_heading(part, blocks)}**")
        lines.append(" ".join(_cite(q.sentence, cited, pages) for q in picked))
        lines.append("")
    supporting = _supporting(rest, quoted, {q.sentence.block.key for _, p in direct for q in p})
    if supporting:
        lines.append("**Supporting passages**")
        lines.extend(f"- {_cite(q.sentence, cited, pages)}" for q in supporting)
        lines.append("")
    if unmentioned:  # answered all the same, by a sentence that scored high
        open_gaps.append("any passage that mentions " + ", ".join(f"“{n}”" for n in unmentioned))
    if open_gaps:
        lines.append("**Not found in your library:** " + "; ".join(open_gaps) + ".")
        lines.append("")
    lines.append("# Cited Sources")
    lines.extend(cited_sources(cited))
    return "\n".join(lines)


def _users_words(sentence: Sentence) -> bool:
    """Whether ``sentence`` is the user's own words: any of a comment or a note, of a highlight
    only its comment (the library writes it after ``COMMENT_LEAD``), not the paper's words."""
    if sentence.block.origin != "highlight":
        return True
    lead = sentence.block.body.find(COMMENT_LEAD)
    return lead >= 0 and sentence.block.body.find(sentence.text) >= lead


def _cite(
    sentence: Sentence, cited: dict[int, tuple[Block, set[int]]], pages: dict[str, int]
) -> str:
    page = pages.get(sentence.id, sentence.page)
    cited.setdefault(sentence.block.n, (sentence.block, set()))[1].add(page)
    if not page:  # a note: no page to name
        return f'"{sentence.text}" [{sentence.block.n}]'
    return f'"{sentence.text}" [{sentence.block.n}, p. {page}]'


def cited_sources(cited: dict[int, tuple[Block, set[int]]]) -> list[str]:
    """One line per paper (per PDF, when an item has two), in order of its first number:
    every evidence number cited from it, then the pages its quotes are on:
    ``[1], [3] Doe (2020). A Paper. Item KEY, pp. 9, 10.`` What the user wrote has a line
    of its own: ``[4] Doe (2020). A Paper. Item KEY, your highlight, p. 7.``"""
    papers: dict[tuple[str, str, str], list[int]] = {}
    for n in sorted(cited):
        block = cited[n][0]
        papers.setdefault((block.key, block.attachment_key, block.source_key), []).append(n)
    out: list[str] = []
    for numbers in papers.values():
        block = cited[numbers[0]][0]
        pages = sorted(p for p in set().union(*(cited[n][1] for n in numbers)) if p)
        where = ("p. " if len(pages) == 1 else "pp. ") + ", ".join(map(str, pages))
        if block.origin:
            named = f" \u201c{block.note_title}\u201d" if block.note_title else ""
            where = f"your {block.origin}{named}" + (f", {where}" if pages else "")
        marks = ", ".join(f"[{n}]" for n in numbers)
        out.append(f"{marks} {block.label}. {block.title}. Item {block.key}, {where}.")
    return out


def part_heading(part: Part, blocks: Sequence[Block]) -> str:
    """A part's heading. A part about one named subject is labelled by the word the question
    matched, lowercase ("rcpparmadillo"): it takes the spelling of the part's papers, their
    titles first, then their text (not at a sentence's start), then the question's. A clause
    of the question keeps the question's own spelling, with a capital first."""
    label = part.label.rstrip("?").strip()
    if part.papers is None:
        return label[:1].upper() + label[1:]
    own = [b for b in blocks if b.key in part.papers]
    wanted = label.lower()
    for title in (b.title for b in own):
        for token in _TOKEN.findall(title):
            if token.lower() == wanted:
                return token
    for body in (b.body for b in own):
        for m in _TOKEN.finditer(body):
            sentence_start = (
                not body[: m.start()].rstrip() or body[: m.start()].rstrip()[-1] in ".!?"
            )
            if m.group(0).lower() == wanted and not sentence_start:
                return m.group(0)
    for token in _TOKEN.findall(part.query):
        if token.lower() == wanted:
            return token
    return label


async def _pages_of(sentences: list[Sentence], read_pages: PageReader | None) -> dict[str, int]:
    """The page each sentence is on, for those from passages that span pages (by sentence
    id); a sentence no page holds keeps its passage's first page."""
    found: dict[str, int] = {}
    if read_pages is None:
        return found
    texts: dict[tuple[str, int, int, str], dict[int, str]] = {}
    for sentence in sentences:
        block = sentence.block
        if block.page_end <= block.page:
            continue
        span = (block.key, block.page, block.page_end, block.attachment_key)
        if span not in texts:
            # The PDF the passage came from, when the prompt names it (an item may have two).
            extra = {"attachment_key": block.attachment_key} if block.attachment_key else {}
            try:
                texts[span] = await read_pages(*span[:3], **extra)
            except Exception as exc:  # the passage's first page is still a fair citation
                logger.warning("offline answer: cannot read %s pp. %d-%d (%s)", *span[:3], exc)
                texts[span] = {}
        page = next((p for p, t in sorted(texts[span].items()) if on_page(sentence.text, t)), None)
        if page is not None:
            found[sentence.id] = page
    return found


def _supporting(rest: list[_Quote], quoted: set[str], papers: set[str]) -> list[_Quote]:
    """The next best sentences, a paper not quoted yet first, one sentence per passage."""
    rest = sorted(rest, key=lambda q: -q.score)
    out: list[_Quote] = []
    used_blocks: set[int] = set()
    for prefer_new in (True, False):
        for q in rest:
            if len(out) >= MAX_SUPPORTING:
                return out
            s = q.sentence
            if s.id in quoted or s.block.n in used_blocks:
                continue
            if prefer_new and s.block.key in papers:
                continue
            out.append(q)
            quoted.add(s.id)
            used_blocks.add(s.block.n)
    return out


def _same_aspect(a: str, b: str) -> bool:
    a, b = a.lower().strip(" ?."), b.lower().strip(" ?.")
    return bool(a) and bool(b) and (a in b or b in a)


def scorer_from_reranker(reranker: Any) -> Scorer | None:
    """A :data:`Scorer` over the reranker service's client (None without one)."""
    if reranker is None:
        return None

    async def score(query: str, candidates: list[tuple[str, str]]) -> list[tuple[str, float]]:
        ranked = await reranker.rerank(query, candidates)
        return [(str(cid), float(s)) for cid, s, _ in ranked]

    return score
