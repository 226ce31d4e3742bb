"""Tables of contents of the 38 real test papers: from outlines, and recognised in text."""

from __future__ import annotations

import os
import pathlib

import pytest

from services.library import pdf_text, toc
from services.library.toc import TocEntry

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]

# Verified by listing each file's bookmarks with pypdfium2: these twelve have none.
WITHOUT_OUTLINE = {
    "AER__AER.pdf",
    "RcppArmadillo__RcppArmadillo-intro.pdf",
    "Rcpp__Rcpp-jss-2011.pdf",
    "bridgesampling__bridgesampling_tutorial.pdf",
    "fitdistrplus__paper2JSS.pdf",
    "mvtnorm__MVT_Rnews.pdf",
    "network__networkVignette.pdf",
    "sandwich__sandwich-CL.pdf",
    "sandwich__sandwich-OOP.pdf",
    "sandwich__sandwich.pdf",
    "strucchange__strucchange-intro.pdf",
    "zoo__zoo.pdf",
}


def papers_dir() -> pathlib.Path:
    folder = pathlib.Path(
        os.environ.get("ZOCRATES_TEST_PAPERS_DIR", REPO_ROOT.parent / "shared/data/papers")
    )
    if not sorted(folder.glob("*.pdf")):
        pytest.fail(f"No test papers in {folder}: set ZOCRATES_TEST_PAPERS_DIR to the folder")
    return folder


@pytest.fixture(scope="module")
def pages() -> dict[str, list[str]]:
    return {pdf.name: pdf_text.extract_pages(pdf) for pdf in sorted(papers_dir().glob("*.pdf"))}


@pytest.fixture(scope="module")
def tocs(pages: dict[str, list[str]]) -> dict[str, list[TocEntry]]:
    return {name: toc.build_toc(papers_dir() / name, texts) for name, texts in pages.items()}


def test_which_papers_have_an_outline(pages: dict[str, list[str]]) -> None:
    without = {name for name in pages if not toc.read_outline(papers_dir() / name)}
    assert without == WITHOUT_OUTLINE


def test_outline_gives_titles_levels_and_pages(tocs: dict[str, list[TocEntry]]) -> None:
    assert tocs["lme4__lmer.pdf"][:6] == [
        TocEntry("Introduction", 1, 1),
        TocEntry("Linear mixed models", 2, 2),
        TocEntry("Example", 2, 3),
        TocEntry("High-level modular structure", 2, 4),
        TocEntry("Formula module", 1, 5),
        TocEntry("Mixed-model formulas", 2, 6),
    ]
    assert len(tocs["lme4__lmer.pdf"]) == 47
    assert tocs["forecast__JSS2008.pdf"][4] == TocEntry("Additive error model: ETS(A,Ad,N)", 3, 5)


def test_headings_recognised_in_text_without_an_outline(
    tocs: dict[str, list[TocEntry]],
) -> None:
    # Checked against the printed headings: "1.1. Historical context" opens on p.2,
    # "7.2. R errors in C++" and "8. Performance comparison" share p.13.
    assert tocs["Rcpp__Rcpp-jss-2011.pdf"] == [
        TocEntry("Abstract", 1, 1),
        TocEntry("Introduction", 1, 1),
        TocEntry("Historical context", 2, 2),
        TocEntry("Related work", 2, 2),
        TocEntry("Rcpp use cases", 2, 2),
        TocEntry("The Rcpp API", 1, 3),
        TocEntry("A first example", 2, 3),
        TocEntry("Rcpp class hierarchy", 2, 4),
        TocEntry("Derived classes", 2, 5),
        TocEntry("Numeric vectors", 2, 5),
        TocEntry("Character vectors", 2, 5),
        TocEntry("R and C++ data interchange", 1, 6),
        TocEntry("C++ to R: wrap", 2, 6),
        TocEntry("R to C++: as", 2, 7),
        TocEntry("Implicit use of converters", 2, 7),
        TocEntry("Function calls", 1, 8),
        TocEntry("Using code \u2018inline\u2019", 1, 8),
        TocEntry("Using Standard Template Library algorithms", 1, 10),
        TocEntry("Error handling", 1, 11),
        TocEntry("C++ exceptions in R", 2, 11),
        TocEntry("R errors in C++", 2, 13),
        TocEntry("Performance comparison", 1, 13),
        TocEntry("On-going development", 1, 14),
        TocEntry("Summary", 1, 15),
        TocEntry("Acknowledgments", 1, 16),
        TocEntry("References", 1, 16),
    ]


@pytest.mark.parametrize(
    ("paper", "entry"),
    [
        ("strucchange__strucchange-intro.pdf", TocEntry("Generalized fluctuation tests", 1, 3)),
        (
            "strucchange__strucchange-intro.pdf",
            TocEntry("Significance testing with F statistics", 2, 11),
        ),
        ("fitdistrplus__paper2JSS.pdf", TocEntry("Choice of candidate distributions", 2, 2)),
        ("zoo__zoo.pdf", TocEntry("strucchange: Empirical fluctuation processes", 2, 20)),
        ("zoo__zoo.pdf", TocEntry("Reference card", 1, 29)),
        ("sandwich__sandwich-CL.pdf", TocEntry("Petersen (2009)", 2, 17)),
        ("sandwich__sandwich-OOP.pdf", TocEntry("Estimating functions", 3, 5)),
        ("mvtnorm__MVT_Rnews.pdf", TocEntry("A Simple Example", 1, 1)),
        ("bridgesampling__bridgesampling_tutorial.pdf", TocEntry("Appendix C", 1, 48)),
        (
            "sandwich__sandwich.pdf",
            TocEntry(
                "Testing and dating structural changes in the presence of heteroskedasticity "
                "and autocorrelation",
                2,
                12,
            ),
        ),
    ],
)
def test_known_headings_in_text(
    tocs: dict[str, list[TocEntry]], paper: str, entry: TocEntry
) -> None:
    assert entry in tocs[paper]


def test_look_alikes_are_not_headings(tocs: dict[str, list[TocEntry]]) -> None:
    titles = {name: [e.title for e in tocs[name]] for name in WITHOUT_OUTLINE}
    # running headers, affiliations, numbered list items, code and table rows
    assert "Rcpp: Seamless R and C++ Integration" not in titles["Rcpp__Rcpp-jss-2011.pdf"]
    assert not [t for t in titles["bridgesampling__bridgesampling_tutorial.pdf"] if "Univ" in t]
    assert not [t for t in titles["RcppArmadillo__RcppArmadillo-intro.pdf"] if "R >" in t]
    assert not [t for t in titles["zoo__zoo.pdf"] if t[0].isdigit()]
    for name in WITHOUT_OUTLINE:
        for title in titles[name]:
            assert not title.endswith("."), (name, title)
            assert "=" not in title and "<-" not in title, (name, title)


def test_text_recognition_agrees_with_outlines(pages: dict[str, list[str]]) -> None:
    """Where an outline exists it is the truth for the text recogniser."""
    found = expected = agreed = 0
    for name, texts in pages.items():
        outline = toc.read_outline(papers_dir() / name)
        if not outline:
            continue
        truth = {(toc.heading_key(e.title), e.page) for e in outline}
        guessed = {(toc.heading_key(e.title), e.page) for e in toc.recognise_headings(texts)}
        found, expected, agreed = (
            found + len(guessed),
            expected + len(truth),
            agreed + len(truth & guessed),
        )
    assert agreed / expected > 0.88  # recall; measured 0.92
    assert agreed / found > 0.85  # precision, counting Abstract/References as wrong; 0.87


def test_every_paper_has_a_sorted_unique_toc(
    pages: dict[str, list[str]], tocs: dict[str, list[TocEntry]]
) -> None:
    for name, entries in tocs.items():
        assert entries, name
        assert [e.page for e in entries] == sorted(e.page for e in entries), name
        assert len(set(entries)) == len(entries), name
        assert all(1 <= e.page <= len(pages[name]) and e.level >= 1 for e in entries), name


def test_build_toc_without_a_path_reads_the_text(pages: dict[str, list[str]]) -> None:
    entries = toc.build_toc(None, pages["lme4__lmer.pdf"])
    assert TocEntry("Introduction", 1, 1) in entries
    assert TocEntry("Formula module", 1, 5) in entries


def test_section_for_page(tocs: dict[str, list[TocEntry]]) -> None:
    entries = tocs["lme4__lmer.pdf"]
    assert toc.section_for_page(entries, 1) == "Introduction"
    assert toc.section_for_page(entries, 5) == "Formula module"
    assert toc.section_for_page(entries, 6) == "Understanding mixed-model formulas"
    assert toc.section_for_page(entries, 0) is None
    assert toc.section_for_page([], 3) is None
