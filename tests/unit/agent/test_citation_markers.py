"""Citation markers read back from answers (``markers.py``, ``evidence.extract_citations``),
the quote each supports (``citations.with_quotes``) and the check of the cited page
(``citations.verify``), on tables of the forms models write."""

from __future__ import annotations

from typing import Any

import pytest

from services.agent.research import evidence as ev
from services.agent.research.citations import verify, with_quotes
from services.agent.research.library_tools import MAX_READ_PAGES
from services.agent.research.markers import find_markers, strip_markers

NUMBERED = [
    {"n": 1, "item_key": "AAAA2222", "title": "One", "page": 3, "page_end": 4},
    {"n": 2, "item_key": "BBBB3333", "title": "Two", "page": 5, "page_end": 6},
    {"n": 3, "item_key": "CCCC4444", "title": "Three", "page": 9, "page_end": 9},
]


@pytest.mark.parametrize(
    ("answer", "cited"),
    [
        pytest.param("Claim [1, p. 3].", [(1, 3)], id="the-asked-form"),
        pytest.param("Claim [1, p.4].", [(1, 4)], id="no-space-after-p"),
        pytest.param("Claim [2].", [(2, 5)], id="no-page-cites-the-passages-first-page"),
        pytest.param("Claim [2, pp. 5-6].", [(2, 5)], id="a-range-cites-its-first-page"),
        pytest.param("Claim [2, pp. 5\u20136].", [(2, 5)], id="a-range-with-an-en-dash"),
        pytest.param("Claim [1, page 4].", [(1, 4)], id="page-spelled-out"),
        pytest.param("Claim [1, P. 4].", [(1, 4)], id="capital-p"),
        pytest.param("Claim [1, p. 3; 2, p. 5].", [(1, 3), (2, 5)], id="two-references-with-pages"),
        pytest.param("Claim [1; 2].", [(1, 3), (2, 5)], id="two-bare-references"),
        pytest.param("Claim [3; 1, pp. 3-4].", [(3, 9), (1, 3)], id="mixed-references-in-order"),
        pytest.param(
            "Values in [1, 3] are rare.", [], id="bare-numbers-are-an-interval-not-a-marker"
        ),
        pytest.param("Claim [1, p. 3; see 2].", [], id="one-odd-reference-spoils-the-bracket"),
        pytest.param("Claim [1, p. 40].", [(1, 40)], id="a-page-outside-the-passage-is-kept"),
        pytest.param(
            "Claim [7, p. 1]. Other [0].", [], id="evidence-numbers-out-of-range-are-dropped"
        ),
        pytest.param("Claim [2; 7].", [(2, 5)], id="only-the-known-number-of-a-bracket"),
        pytest.param("Use `coef(fit)[2]` here [1, p. 3].", [(1, 3)], id="inline-code-is-not-cited"),
        pytest.param("Run ``x[`1`][3]`` now.", [], id="double-backtick-code-is-not-cited"),
        pytest.param(
            "```r\n> mean(x)\n[1] 0.25\n```\nSo [2, p. 6].",
            [(2, 6)],
            id="r-output-in-a-fenced-block",
        ),
        pytest.param("~~~\n[3]\n~~~\n", [], id="a-tilde-fenced-block"),
        pytest.param(
            "See [1](https://example.org) and [2].", [(2, 5)], id="a-links-text-is-not-a-marker"
        ),
        pytest.param("A stray ` and [1, p. 3].", [(1, 3)], id="an-unclosed-backtick-hides-nothing"),
        pytest.param(
            "A [1, p. 3]. B [1, p. 3]. C [1, p. 4].", [(1, 3), (1, 4)], id="each-page-once"
        ),
        pytest.param("B [2, p. 5]. A [1, p. 3].", [(2, 5), (1, 3)], id="in-order-of-use"),
        pytest.param(
            "Answer.\n\n# Cited Sources\n[3] Doe (2020). Three.", [(3, 9)], id="a-sources-line"
        ),
    ],
)
def test_extract_citations(answer: str, cited: list[tuple[int, int]]) -> None:
    found = ev.extract_citations(answer, NUMBERED)
    assert [(c["n"], c["page"]) for c in found] == cited
    by_n = {p["n"]: p for p in NUMBERED}
    assert all(c["item_key"] == by_n[c["n"]]["item_key"] for c in found)


@pytest.mark.parametrize(
    ("text", "refs"),
    [
        pytest.param("[2, pp. 4-5]", [(2, 4, 5)], id="range"),
        pytest.param("[1, p. 3; 2, p. 5]", [(1, 3, None), (2, 5, None)], id="two"),
        pytest.param("[1]\n[2]", [(1, None, None), (2, None, None)], id="one-per-line"),
        pytest.param("[1\n, p. 3]", [], id="no-marker-across-lines"),
        pytest.param("[1, p. 3]]", [(1, 3, None)], id="a-bracket-after"),
    ],
)
def test_find_markers(text: str, refs: list[tuple[int, int | None, int | None]]) -> None:
    assert [(m.n, m.page, m.page_end) for m in find_markers(text)] == refs


def test_markers_keep_their_offsets_in_the_answer() -> None:
    answer = "`[9]` first, then claim [1, p. 3; 2, p. 5]."
    (one, two) = find_markers(answer)
    assert answer[one.start : one.end] == "[1, p. 3; 2, p. 5]" == answer[two.start : two.end]
    assert strip_markers(answer) == "`[9]` first, then claim ."


@pytest.mark.parametrize(
    ("answer", "quotes"),
    [
        pytest.param(
            "Models converge [1, p. 3; 2, p. 5].",
            {(1, 3): "Models converge", (2, 5): "Models converge"},
            id="one-sentence-for-both-references",
        ),
        pytest.param(
            '"BOBYQA is the default optimizer." [1; 2]',
            {
                (1, 3): "BOBYQA is the default optimizer.",
                (2, 5): "BOBYQA is the default optimizer.",
            },
            id="a-quotation-before-a-bracket-of-two",
        ),
        pytest.param(
            "First claim [1; 2] and then another one [3].",
            {(1, 3): "First claim", (2, 5): "First claim", (3, 9): "and then another one"},
            id="the-sentence-starts-after-the-previous-marker",
        ),
        pytest.param(
            "Fits use `optimizer[1]` by default [1, p. 4].",
            {(1, 4): "Fits use optimizer[1] by default"},
            id="code-stays-in-the-quote-without-its-ticks-and-cites-nothing",
        ),
        pytest.param(
            "**lme4.** Fits use BOBYQA [1, p. 3]. **brms.** It samples with *NUTS* [2].",
            {(1, 3): "Fits use BOBYQA", (2, 5): "It samples with NUTS"},
            id="a-bold-lead-in-ends-a-sentence-and-emphasis-goes",
        ),
        pytest.param(
            '- *"BOBYQA is the default optimizer."* [1]',
            {(1, 3): "BOBYQA is the default optimizer."},
            id="an-emphasised-quotation-in-a-list",
        ),
        pytest.param(
            "Use the snake_case name nloptwrap_bobyqa here [1].",
            {(1, 3): "Use the snake_case name nloptwrap_bobyqa here"},
            id="underscores-inside-words-stay",
        ),
        pytest.param(
            "See [Table 2] and 2 * 3 = 6 there [3].",
            {(3, 9): "See [Table 2] and 2 * 3 = 6 there"},
            id="other-brackets-and-a-times-sign-stay",
        ),
        pytest.param(
            "Only here [2, pp. 5-6].\n\n# Cited Sources\n[2] Two. Item BBBB3333, pp. 5-6.",
            {(2, 5): "Only here"},
            id="the-sources-list-quotes-nothing",
        ),
    ],
)
def test_with_quotes(answer: str, quotes: dict[tuple[int, int], str]) -> None:
    cited = with_quotes(answer, ev.extract_citations(answer, NUMBERED))
    assert {(c["n"], c["page"]): c["quote"] for c in cited} == quotes


class Pages:
    """``read_pages`` over fixed page texts, stopping after ``MAX_READ_PAGES`` pages as the
    library's ``read_document`` does; records what was read."""

    def __init__(self, texts: dict[int, str]) -> None:
        self.texts = texts
        self.reads: list[tuple[int, int]] = []

    async def __call__(self, item_key: str, first: int, last: int) -> dict[int, str]:
        self.reads.append((first, last))
        last = min(last, first + MAX_READ_PAGES - 1)
        return {p: t for p, t in self.texts.items() if first <= p <= last}


QUOTE = "The default optimizer is BOBYQA for every fit."


@pytest.mark.parametrize(
    ("passage", "cited_page", "texts", "verdict", "reads"),
    [
        pytest.param((3, 4), 3, {3: QUOTE}, (True, None), [(3, 4)], id="on-the-cited-page"),
        pytest.param((3, 4), 3, {4: QUOTE}, (False, 4), [(3, 4)], id="on-the-passages-other-page"),
        pytest.param(
            (30, 31),
            2,
            {2: "Intro.", 30: QUOTE},
            (False, 30),
            [(30, 31), (2, 2)],
            id="a-page-before-the-passage-is-read-alone",
        ),
        pytest.param(
            (3, 4),
            40,
            {3: QUOTE, 40: "Index."},
            (False, 3),
            [(3, 4), (40, 40)],
            id="a-page-after-the-passage-is-read-alone",
        ),
        pytest.param(
            (3, 4),
            9,
            {9: QUOTE},
            (True, None),
            [(3, 4), (9, 9)],
            id="the-quote-on-a-page-outside-the-passage",
        ),
        pytest.param(
            (3, 4),
            999,
            {3: "Other words."},
            (False, None),
            [(3, 4), (999, 999)],
            id="a-page-the-paper-lacks",
        ),
        pytest.param((3, 4), 3, {}, (None, None), [(3, 4)], id="unreadable-pages-are-unknown"),
    ],
)
async def test_verify(
    passage: tuple[int, int],
    cited_page: int,
    texts: dict[int, str],
    verdict: tuple[bool | None, int | None],
    reads: list[tuple[int, int]],
) -> None:
    numbered = [{"n": 1, "item_key": "K", "page": passage[0], "page_end": passage[1]}]
    citation: dict[str, Any] = {"n": 1, "item_key": "K", "title": "", "page": cited_page}
    pages = Pages(texts)
    (checked,) = await verify([{**citation, "quote": QUOTE}], numbered, pages)
    assert (checked["verified"], checked.get("found_on_page")) == verdict
    assert pages.reads == reads


async def test_verify_reads_each_span_once() -> None:
    numbered = [{"n": 1, "item_key": "K", "page": 3, "page_end": 4}]
    pages = Pages({3: QUOTE})
    cites = [{"n": 1, "item_key": "K", "title": "", "page": p, "quote": QUOTE} for p in (3, 4, 9)]
    checked = await verify(cites, numbered, pages)
    assert [c["verified"] for c in checked] == [True, False, False]
    assert pages.reads == [(3, 4), (9, 9)]
