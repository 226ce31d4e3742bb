"""A citation names the PDF its evidence came from (an item may have several), and its check
reads that PDF's pages, not the item's first one (issue 16: two PDFs under one item)."""

from __future__ import annotations

from services.agent.research.citations import verify, with_quotes
from services.agent.research.evidence import extract_citations

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
