"""A citation names the PDF its evidence came from (an item may have several), and its check
reads that PDF's pages, not the item's first one (issue 16: two PDFs under one item)."""

from __future__ import annotations

from services.agent.research import evidence as ev
from services.agent.research.citations import verify, with_quotes
from services.agent.research.evidence import extract_citations
from services.agent.research.offline_answer import compose_answer
from services.agent.research.offline_sentences import parse_blocks

MAIN, SUPPLEMENT = "MAIN2345", "SUPP2345"
NUMBERED = [
    {"n": 1, "item_key": "ABCD2345", "attachment_key": SUPPLEMENT, "title": "lme4", "page": 3},
    {"n": 2, "item_key": "ABCD2345", "title": "lme4", "page": 3},  # no key: the item's own PDF
]
PAGES = {
    SUPPLEMENT: {3: "The supplement says the optimizer is Nelder-Mead for the first step."},
    MAIN: {3: "The paper says nothing of the kind on this page."},
}


async def test_the_check_reads_the_cited_pdf() -> None:
    answer = (
        "The supplement says the optimizer is Nelder-Mead for the first step [1, p. 3]. "
        "The paper says nothing of the kind on this page [2, p. 3]."
    )
    cited = extract_citations(answer, NUMBERED)
    assert [c.get("attachment_key") for c in cited] == [SUPPLEMENT, None]
    asked: list[tuple[str, str]] = []

    async def read_pages(
        item_key: str, first: int, last: int, /, attachment_key: str = ""
    ) -> dict[int, str]:
        asked.append((item_key, attachment_key))
        pdf = attachment_key or MAIN
        return {p: t for p, t in PAGES[pdf].items() if first <= p <= last}

    checked = await verify(with_quotes(answer, cited), NUMBERED, read_pages)
    assert [c["verified"] for c in checked] == [True, True]
    assert asked == [("ABCD2345", SUPPLEMENT), ("ABCD2345", "")]


async def test_the_offline_answer_finds_a_quotes_page_in_the_pdf_it_came_from() -> None:
    """The synthesis prompt names each passage's PDF, and the offline answer reads that PDF's
    pages to cite the page a quote is on (the item's main PDF does not hold it)."""
    quote = "The supplement's optimizer is Nelder-Mead for the first step."
    piece = {
        "id": "1",
        "kind": "chunk",
        "item_key": "ABCD2345",
        "attachment_key": SUPPLEMENT,
        "title": "lme4",
        "authors": ["Bates, Douglas"],
        "year": 2015,
        "page": 3,
        "page_end": 4,
        "text": f"Something else entirely stands on this first page here. {quote}",
        "words": 20,
    }
    numbered = ev.number_evidence([piece])
    prompt = ev.synthesis_prompt("Which optimizer does the supplement use?", numbered, {}, "", "")
    blocks = parse_blocks(prompt.split("Evidence from the user's library:", 1)[1])
    assert [(b.key, b.attachment_key) for b in blocks] == [("ABCD2345", SUPPLEMENT)]
    pages = {
        SUPPLEMENT: {3: "Something else entirely stands on this first page here.", 4: quote},
        MAIN: {3: "The paper says nothing of the kind.", 4: "Nor on this page."},
    }
    asked: list[str] = []

    async def read_pages(
        item_key: str, first: int, last: int, /, attachment_key: str = ""
    ) -> dict[int, str]:
        asked.append(attachment_key)
        return {p: t for p, t in pages[attachment_key or MAIN].items() if first <= p <= last}

    answer = await compose_answer(
        "Which optimizer does the supplement use?",
        blocks,
        [],
        None,
        notice="",
        read_pages=read_pages,
    )
    assert f'"{quote}" [1, p. 4]' in answer
    assert asked == [SUPPLEMENT]
