"""What the user wrote as evidence: the writer is told what each passage is, the offline
answer names it in its sources, a question about one's own notes is told apart and prefers
them, and each citation is checked against what it cites (a note against itself, a highlight
against its page or its comment)."""

from __future__ import annotations

import pytest

from services.agent.research import evidence as ev
from services.agent.research import offline_answer as oa
from services.agent.research import offline_questions as oq
from services.agent.research import offline_sentences as sents
from services.agent.research.citations import verify, with_quotes

NOTICE = "*offline*"
PAPER = {
    "id": "1", "n": 1, "label": "Bates et al. (2015)", "title": "lme4", "item_key": "LME4KEY1",
    "attachment_key": "PDFKEY01", "page": 24, "page_end": 24, "section": "5 Optimizers",
    "text": "The default optimizer of glmer is bobyqa, a derivative-free method.",
}  # fmt: skip
HIGHLIGHT = {
    **PAPER, "id": "2", "n": 2, "section": "", "origin": "highlight", "source_key": "ANNOKEY1",
    "text": "lme4 implements the Nelder-Mead simplex algorithm adapted from NLopt."
    "\n\nMy comment: Refit with nloptwrap "
    "whenever bobyqa warns about convergence.",
}  # fmt: skip
NOTE = {
    "id": "3", "n": 3, "label": "Bates et al. (2015)", "title": "lme4", "item_key": "LME4KEY1",
    "attachment_key": "", "page": 0, "page_end": 0, "section": "", "origin": "note",
    "source_key": "NOTEKEY1", "note_title": "Reading notes",
    "text": "Reading notes\n\nI should compare the optimizers of glmer on the sleep data.",
}  # fmt: skip


def test_evidence_blocks_say_what_the_user_wrote_and_parse_back() -> None:
    text = ev.evidence_blocks([PAPER, HIGHLIGHT, NOTE])
    assert "item LME4KEY1, p. 24, PDF PDFKEY01, your highlight ANNOKEY1\n" in text
    assert "item LME4KEY1, your note NOTEKEY1 'Reading notes'\n" in text  # no page
    blocks = sents.parse_blocks(text)
    assert [(b.n, b.page, b.origin, b.source_key, b.note_title) for b in blocks] == [
        (1, 24, "", "", ""),
        (2, 24, "highlight", "ANNOKEY1", ""),
        (3, 0, "note", "NOTEKEY1", "Reading notes"),
    ]


@pytest.mark.parametrize(
    ("question", "own", "subject"),
    [
        ("What did I note about the optimizers of glmer?", True, "optimizers of glmer"),
        ("Show my highlights on sandwich estimators", True, "sandwich estimators"),
        ("Did I comment on HC3?", True, "HC3"),
        ("Which optimizer did I note down for glmer?", True, "optimizer glmer"),
        ("What do the authors note about REML?", False, None),
        ("Which optimizer does glmer use?", False, None),
    ],
)
def test_a_question_about_ones_own_writing_is_told_apart(
    question: str, own: bool, subject: str | None
) -> None:
    assert oq.about_own_writing(question) is own
    if subject is not None:
        assert oq.own_writing_subject(question) == subject


async def test_a_question_about_my_notes_quotes_them_and_names_them_in_the_sources() -> None:
    blocks = sents.parse_blocks(ev.evidence_blocks([PAPER, HIGHLIGHT, NOTE]))
    answer = await oa.compose_answer(
        "What did I note about comparing the optimizers of glmer?", blocks, [], None,
        notice=NOTICE,
    )  # fmt: skip
    assert '"I should compare the optimizers of glmer on the sleep data." [3]' in answer
    assert "bobyqa, a derivative-free method" not in answer  # the paper is not what I wrote
    sources = answer.split("# Cited Sources\n", 1)[1]
    assert (
        sources
        == "[3] Bates et al. (2015). lme4. Item LME4KEY1, your note \u201cReading notes\u201d."
    )
    # Asked about the papers, the same evidence answers from the paper (with its page).
    plain = await oa.compose_answer(
        "Which optimizer does glmer use by default?", blocks, [], None, notice=NOTICE
    )
    assert "[1, p. 24]" in plain


async def test_own_evidence_comes_first_when_asked_about_it() -> None:
    ranked = [("1", 3.0, 10), ("3", 1.0, 10), ("2", 2.0, 10)]
    assert [r[0] for r in ev.own_first([PAPER, HIGHLIGHT, NOTE], ranked)] == ["3", "2", "1"]
    assert [r[0] for r in ev.own_first([PAPER, HIGHLIGHT, NOTE], None)] == ["2", "3", "1"]


async def test_each_citation_is_checked_against_what_it_cites() -> None:
    numbered = [PAPER, HIGHLIGHT, NOTE]
    answer = (
        '"I should compare the optimizers of glmer on the sleep data." [3] '
        '"I never wrote this sentence in any note at all." [3] '
        '"My comment: Refit with nloptwrap whenever bobyqa warns about convergence." [2, p. 24] '
        '"the Nelder-Mead simplex algorithm" [2, p. 24]'
    )
    cites = with_quotes(answer, ev.extract_citations(answer, numbered))
    assert [(c["n"], c["origin"], c["source_key"], c["page"]) for c in cites] == [
        (3, "note", "NOTEKEY1", 0),
        (2, "highlight", "ANNOKEY1", 24),
    ]
    reads: list[tuple[str, int, int]] = []

    async def read_pages(key: str, first: int, last: int, attachment_key: str = "") -> dict:
        reads.append((key, first, last))
        return {24: "lme4 incorporates the Nelder-Mead simplex algorithm adapted from NLopt."}

    checked = await verify(cites, numbered, read_pages)
    assert [c["verified"] for c in checked] == [True, True]
    assert reads == [("LME4KEY1", 24, 24)]  # a note's page is never read
    # A quote that is neither in the note nor on the highlight's page nor its comment fails.
    invented = [
        {**checked[0], "quote": "Nothing like this was ever written down."},
        {**checked[1], "quote": "Nothing like this is on the page or in the comment."},
    ]
    assert [c["verified"] for c in await verify(invented, numbered, read_pages)] == [False, False]


async def test_asked_what_i_commented_a_highlight_answers_with_its_comment() -> None:
    blocks = sents.parse_blocks(ev.evidence_blocks([PAPER, HIGHLIGHT, NOTE]))
    assert oq.asks_for_own_words("What did I comment about the Nelder-Mead simplex algorithm?")
    assert not oq.asks_for_own_words("What did I highlight about the Nelder-Mead simplex?")
    commented = await oa.compose_answer(
        "What did I comment on the Nelder-Mead simplex algorithm, refitting with nloptwrap "
        "when bobyqa warns about convergence?",
        blocks, [], None, notice=NOTICE,
    )  # fmt: skip
    assert (
        '"My comment: Refit with nloptwrap whenever bobyqa warns about convergence." [2, p. 24]'
        in commented
    )
    assert "lme4 implements the Nelder-Mead" not in commented
