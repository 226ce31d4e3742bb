"""Chunking the 38 real test papers: sizes, pages, coverage and section boundaries."""

from __future__ import annotations

import itertools
import os
import pathlib
import statistics

import pytest

from services.library import chunking, pdf_text, toc
from services.library.chunking import Chunk
from services.library.toc import TocEntry

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
OVERLAP = 40


def papers_dir() -> pathlib.Path:
    folder = pathlib.Path(
        os.environ.get("ZOCRATES_TEST_PAPERS_DIR", REPO_ROOT.parent / "shared/data/papers")
    )
    if not sorted(folder.glob("*.pdf")):
        pytest.fail(f"No test papers in {folder}: set ZOCRATES_TEST_PAPERS_DIR to the folder")
    return folder


Paper = tuple[list[str], list[TocEntry], list[Chunk]]


@pytest.fixture(scope="module")
def papers() -> dict[str, Paper]:
    """Pages, table of contents and chunks of every paper (computed once for the module)."""
    found = {}
    for pdf in sorted(papers_dir().glob("*.pdf")):
        pages = pdf_text.extract_pages(pdf)
        entries = toc.build_toc(pdf, pages)
        found[pdf.name] = (pages, entries, chunking.chunk_document(pages, entries))
    return found


def word_spans(chunks: list[Chunk]) -> list[tuple[int, int]]:
    """Each chunk's [start, end) in the document's word sequence, its overlap recognised as
    the longest prefix (up to OVERLAP words) repeating the previous chunk's end."""
    spans: list[tuple[int, int]] = []
    cursor = 0
    for index, chunk in enumerate(chunks):
        words = chunk.text.split()
        repeated = 0
        if index and chunks[index - 1].section == chunk.section:
            before = chunks[index - 1].text.split()
            repeated = next(
                (k for k in range(min(OVERLAP, len(words)), 0, -1) if words[:k] == before[-k:]),
                0,
            )
        spans.append((cursor - repeated, cursor - repeated + len(words)))
        cursor += len(words) - repeated
    return spans


def word_sections(pages: list[str], entries: list[TocEntry]) -> list[int | None]:
    """The index of the section each word of the document is in, from the located headings."""
    cuts: dict[int, list[tuple[int, int]]] = {}
    for index, (page_index, offset) in enumerate(chunking.locate_sections(pages, entries)):
        cuts.setdefault(page_index, []).append((offset, index))
    labels: list[int | None] = []
    section: int | None = None
    for page_index, page in enumerate(pages):
        cursor = 0
        for offset, index in cuts.get(page_index, []):
            labels += [section] * len(page[cursor:offset].split())
            cursor, section = offset, index
        labels += [section] * len(page[cursor:].split())
    return labels


def test_every_chunk_is_within_max_words(papers: dict[str, Paper]) -> None:
    sizes = [c.word_count for _, _, chunks in papers.values() for c in chunks]
    assert all(0 < n <= 350 for n in sizes)
    assert 200 <= statistics.median(sizes) <= 260


def test_pages_are_in_range_and_ordered(papers: dict[str, Paper]) -> None:
    for name, (pages, _, chunks) in papers.items():
        assert chunks, name
        assert [c.ordinal for c in chunks] == list(range(len(chunks)))
        assert all(1 <= c.page_start <= c.page_end <= len(pages) for c in chunks), name
        starts = [c.page_start for c in chunks]
        assert starts == sorted(starts), name
        assert chunks[-1].page_end == max(i + 1 for i, p in enumerate(pages) if p.split())


def test_chunks_cover_every_word_in_order(papers: dict[str, Paper]) -> None:
    for name, (pages, _, chunks) in papers.items():
        document = [word for page in pages for word in page.split()]
        rebuilt: list[str] = []
        for chunk, (start, end) in zip(chunks, word_spans(chunks), strict=True):
            rebuilt += chunk.text.split()[len(rebuilt) - start :]
            assert len(rebuilt) == end, name
        assert rebuilt == document, name


def test_chunks_never_straddle_a_heading(papers: dict[str, Paper]) -> None:
    for name, (pages, entries, chunks) in papers.items():
        labels = word_sections(pages, entries)
        for chunk, (start, end) in zip(chunks, word_spans(chunks), strict=True):
            inside = set(labels[start:end])
            assert len(inside) == 1, (name, chunk.ordinal, inside)
            section = inside.pop()
            assert chunk.section == (entries[section].title if section is not None else None)


def test_each_located_heading_opens_a_chunk(papers: dict[str, Paper]) -> None:
    _, _, chunks = papers["lme4__lmer.pdf"]
    openings = {c.text.split("\n")[0] for c in chunks}
    for heading in (
        "1.1. Linear mixed models",
        "2. Formula module",
        "The REML criterion",  # unnumbered in print, in the outline
        "Specifying uncorrelated random effects",
    ):
        assert heading in openings
    first = next(c for c in chunks if c.section == "Linear mixed models")
    assert first.text.startswith("1.1. Linear mixed models\n\nJust as a linear model")
    assert first.page_start == 2


def test_sections_are_assigned(papers: dict[str, Paper]) -> None:
    for name, (_, entries, chunks) in papers.items():
        titles = {e.title for e in entries}
        assert all(c.section is None or c.section in titles for c in chunks), name
        first_page = entries[0].page
        assert all(c.section is not None for c in chunks if c.page_start > first_page), name
    _, _, chunks = papers["lme4__lmer.pdf"]
    assert chunks[0].section is None  # title page and abstract come before "1. Introduction"
    assert chunks[1].section == "Introduction"


def test_consecutive_chunks_of_a_section_overlap(papers: dict[str, Paper]) -> None:
    _, _, chunks = papers["lme4__lmer.pdf"]
    spans = word_spans(chunks)
    same_section = [
        (a, b)
        for (a, b), (first, second) in zip(
            itertools.pairwise(spans), itertools.pairwise(chunks), strict=True
        )
        if first.section == second.section
    ]
    assert len(same_section) > len(chunks) / 3
    # Every chunk overlaps the one before it in its section, by at most the overlap.
    assert all(0 < a[1] - b[0] <= OVERLAP for a, b in same_section)


def test_chunking_is_deterministic(papers: dict[str, Paper]) -> None:
    pages, entries, chunks = papers["metafor__metafor.pdf"]
    assert chunking.chunk_document(pages, entries) == chunks


def test_smaller_targets_and_no_toc() -> None:
    text = " ".join(f"Sentence number {i} ends here." for i in range(200))
    chunks = chunking.chunk_document(
        [text, text], [], target_words=50, overlap_words=10, max_words=60
    )
    assert all(c.section is None and c.word_count <= 60 for c in chunks)
    assert [c.page_start for c in chunks] == sorted(c.page_start for c in chunks)
    with pytest.raises(ValueError):
        chunking.chunk_document([text], [], target_words=50, overlap_words=50)
    assert chunking.chunk_document([], []) == []
    assert chunking.chunk_document(["", "  "], []) == []


def test_section_spans(papers: dict[str, Paper]) -> None:
    pages, entries, _ = papers["lme4__lmer.pdf"]
    spans = {
        entry.title: (first, last) for entry, first, last in chunking.section_spans(pages, entries)
    }
    assert spans["Introduction"] == (1, 5)  # "2. Formula module" opens mid p.5
    assert spans["Formula module"] == (5, 13)
    assert spans["Linear mixed models"] == (2, 3)
    assert spans["Modularization examples"] == (44, 51)
    rcpp_pages, rcpp_entries, _ = papers["Rcpp__Rcpp-jss-2011.pdf"]
    rcpp = chunking.section_spans(rcpp_pages, rcpp_entries)
    assert all(1 <= first <= last <= len(rcpp_pages) for _, first, last in rcpp)
    assert rcpp[0][0].title == "Abstract"
