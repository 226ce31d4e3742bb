"""A generative writer's answer (services/agent/research/grounding.py): evidence fitted to its
window by rank at sentence ends, invented citation numbers dropped, and an answer with no
citation on its page backed by the papers' own sentences."""

from __future__ import annotations

from typing import Any

from services.agent.research import evidence as ev
from services.agent.research import grounding
from services.agent.research.markers import keep_markers


def _piece(n: int, text: str, page: int = 3) -> dict[str, Any]:
    return {
        "id": f"c{n}",
        "n": n,
        "label": "Hyndman & Khandakar (2008)",
        "title": "Automatic Time Series Forecasting",
        "item_key": "FORECAST",
        "page": page,
        "text": text,
        "kind": "chunk",
        "words": len(text.split()),
    }


SENTENCES = [f"Sentence number {i} says something about seasonal differencing." for i in range(40)]


def test_evidence_fits_the_budget_by_rank_and_is_cut_only_at_a_sentence_end() -> None:
    numbered = [_piece(i + 1, " ".join(SENTENCES[i * 10 : i * 10 + 10])) for i in range(4)]
    whole = grounding.estimate_tokens(ev.evidence_block(numbered[0])) + 2
    fitted = grounding.fit_evidence(numbered, budget=whole + whole // 2)
    assert [p["n"] for p in fitted] == [1, 2]  # rank order; the third is not reached
    assert fitted[0]["text"] == numbered[0]["text"] and "trimmed" not in fitted[0]
    cut = fitted[1]["text"]
    assert cut.endswith(".") and numbered[1]["text"].startswith(cut) and fitted[1]["trimmed"]
    assert 0 < len(cut.split(". ")) < 10
    assert sum(grounding.estimate_tokens(ev.evidence_block(p)) + 2 for p in fitted) <= whole * 1.5
    assert grounding.fit_evidence(numbered, None) == numbered  # no window: all of it
    # A window too small for one whole passage still gets the best one's first sentence.
    tiny = grounding.fit_evidence(numbered, budget=5)
    assert [p["text"] for p in tiny] == [SENTENCES[0]]


def test_the_budget_leaves_room_for_the_prompt_and_the_answer() -> None:
    limits = grounding.WriterLimits(context_window=4096, max_tokens=682)
    frame = "Question: x" * 100
    budget = limits.evidence_budget(frame)
    assert budget == 4096 - grounding.estimate_tokens(frame) - 682 - grounding.MARGIN_TOKENS
    assert grounding.WriterLimits().evidence_budget(frame) is None
    assert grounding.WriterLimits(context_window=600, max_tokens=500).evidence_budget(frame) == (
        grounding.MIN_EVIDENCE_TOKENS
    )


def test_invented_citation_numbers_are_dropped_and_counted() -> None:
    text, dropped = keep_markers(
        "Seasonal D comes from a test [1, p. 10]. It was 1995 [7, p. 2]. See [1; 9, p. 4] and "
        "`x[9]` [2].",
        {1, 2},
    )
    assert text == "Seasonal D comes from a test [1, p. 10]. It was 1995. See [1] and `x[9]` [2]."
    assert dropped == 2
    assert keep_markers("No markers here.", {1}) == ("No markers here.", 0)


def test_an_answer_needs_backing_unless_every_quoted_citation_is_on_its_page() -> None:
    numbered = [_piece(1, SENTENCES[0])]
    on, off = {"quote": "A.", "verified": True}, {"quote": "B.", "verified": False}
    sources_line = {"quote": "", "verified": None}  # '# Cited Sources' quotes nothing
    assert grounding.needs_backing("", [], numbered)
    assert grounding.needs_backing("Prose.", [], numbered)
    assert grounding.needs_backing("Prose [1].", [sources_line], numbered)
    assert grounding.needs_backing("Prose [1]. More [1, p. 4].", [on, off], numbered)
    assert grounding.needs_backing("Prose [1].", [{**on, "verified": None}], numbered)
    assert not grounding.needs_backing("Prose [1].", [on, sources_line], numbered)
    assert not grounding.needs_backing("Nothing found.", [], [])  # no evidence to quote


async def test_the_backing_keeps_the_prose_drops_its_sources_and_quotes_the_papers() -> None:
    numbered = [
        _piece(
            1,
            "The number of seasonal differences D is chosen with an extended Canova-Hansen "
            "test. Critical values for periods above 12 come from a fitted line.",
            page=10,
        )
    ]
    answer = "Invented prose [1, p. 4].\n\n# Cited Sources\n[1] Someone (2000)."
    backed = await grounding.backed_answer(
        answer,
        question="How is the number of seasonal differences chosen?",
        numbered=numbered,
        gaps=[],
        scorer=None,
        read_pages=None,
    )
    body, _, rest = backed.partition(grounding.NO_VERIFIED_NOTICE)
    assert body.strip() == "Invented prose [1, p. 4]."  # the model's list of sources is gone
    assert grounding.SOME_UNVERIFIED_NOTICE not in backed
    assert "Canova-Hansen test" in rest and "[1, p. 10]" in rest
    assert rest.count("# Cited Sources") == 1
    empty = await grounding.backed_answer(
        "",
        question="seasonal differences",
        numbered=numbered,
        gaps=[],
        scorer=None,
        read_pages=None,
    )
    assert empty.startswith(grounding.NO_ANSWER_NOTICE)
    partly = await grounding.backed_answer(
        "Right [1, p. 10]. Wrong [1, p. 4].",
        citations=[{"quote": "Right", "verified": True}, {"quote": "Wrong", "verified": False}],
        question="seasonal differences",
        numbered=numbered,
        gaps=[],
        scorer=None,
        read_pages=None,
    )
    assert grounding.SOME_UNVERIFIED_NOTICE in partly and "Canova-Hansen" in partly


async def test_unchecked_prose_on_a_question_the_papers_do_not_answer_is_not_shown() -> None:
    """A small model answers an out-of-library question with fluent prose citing a paper; its
    citation is not on the page, and no sentence of the evidence answers the question: the
    user reads that the library has no evidence, not the guess."""
    numbered = [_piece(1, "The number of seasonal differences is chosen by a test.", page=10)]

    async def scorer(query: str, pairs: list[tuple[str, str]]) -> list[tuple[str, float]]:
        return [(pair_id, -9.0) for pair_id, _ in pairs]  # the cross-encoder: nothing answers

    guess = "Quantum annealers schedule their couplers adiabatically [1, p. 4]."
    backed = await grounding.backed_answer(
        guess,
        citations=[{"quote": "", "verified": False}],
        question="How do quantum annealers schedule their qubit couplers?",
        numbered=numbered,
        gaps=[],
        scorer=scorer,
        read_pages=None,
    )
    assert backed.startswith(grounding.NOT_IN_LIBRARY_NOTICE), backed
    assert "adiabatically" not in backed and "[1" not in backed
    assert "Your library has no evidence on this" in backed
    # With one citation on its page the prose stays, the papers' sentences below it.
    partly = await grounding.backed_answer(
        guess,
        citations=[{"quote": "x", "verified": True}, {"quote": "y", "verified": False}],
        question="How do quantum annealers schedule their qubit couplers?",
        numbered=numbered,
        gaps=[],
        scorer=scorer,
        read_pages=None,
    )
    assert "adiabatically" in partly and grounding.SOME_UNVERIFIED_NOTICE in partly


def test_an_answer_that_loops_is_cut_before_its_first_repeated_sentence() -> None:
    loop = (
        "This evidence does not contain any information which suggests that the library "
        "should exclude this feature. It will make the next one, item {n}.\n"
    )
    answer = (
        "Auto.arima picks D with a Canova-Hansen test [1].\n"
        + "".join(loop.format(n=n) for n in range(10, 15))
        + "\n# Cited Sources\n[1] Hyndman (2008). p. 10."
    )
    cut, looped = grounding.cut_repetition(answer)
    assert looped
    assert cut.count("should exclude this feature") == 1
    assert "item 10." in cut and "item 11" not in cut
    assert cut.split("# Cited Sources")[0].rstrip().endswith(grounding.REPEATED_NOTICE)
    assert cut.endswith("[1] Hyndman (2008). p. 10.")
    # Short sentences may recur, and an answer that does not repeat itself is left alone.
    plain = "See [1]. The test decides D [1]. See [1]. It uses KPSS tests for d [2]."
    assert grounding.cut_repetition(plain) == (plain, False)
