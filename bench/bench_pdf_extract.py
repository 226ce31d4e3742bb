"""Benchmark PDF text extraction: pypdf against pypdfium2 on the real test library.

Both extractors read every PDF in the papers folder in the same run, raw (no clean-up, no
NFKC), so their speed and their output can be compared side by side. For each extractor it
prints pages per second, total seconds (the best of ``--repeat`` runs) and a text-quality
proxy: the fraction of pages with more than 50 words, the number of ligature characters
(U+FB00..U+FB06) left before NFKC, and the mean words per page.

    .venv/bin/python bench/bench_pdf_extract.py --repeat 3 [--check]

``--check``: the goals that made pypdfium2 the index's extractor (docs/benchmarks.md): faster
than pypdf, with at least as many pages of text (more than 50 words).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import pathlib
import sys
import time
from collections.abc import Callable

import pypdf
import pypdfium2 as pdfium
from goals import Goal, add_check_flag, report
from goals import Result as GoalResult

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_PAPERS = REPO_ROOT.parent / "shared" / "data" / "papers"
LIGATURES = frozenset(chr(c) for c in range(0xFB00, 0xFB07))


def extract_pypdf(path: pathlib.Path) -> list[str]:
    """Every page's text with pypdf's default (non-layout) extraction."""
    reader = pypdf.PdfReader(path)
    return [page.extract_text() or "" for page in reader.pages]


def extract_pypdfium2(path: pathlib.Path) -> list[str]:
    """Every page's text with PDFium, closing each page and the document explicitly."""
    doc = pdfium.PdfDocument(path)
    try:
        texts = []
        for index in range(len(doc)):
            page = doc[index]
            textpage = page.get_textpage()
            try:
                texts.append(textpage.get_text_range())
            finally:
                textpage.close()
                page.close()
        return texts
    finally:
        doc.close()


EXTRACTORS: dict[str, Callable[[pathlib.Path], list[str]]] = {
    "pypdf": extract_pypdf,
    "pypdfium2": extract_pypdfium2,
}


@dataclasses.dataclass
class Result:
    """One extractor's measurements over the whole folder."""

    name: str
    pages: int
    seconds: float
    pages_over_50_words: int
    ligatures: int
    words: int

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds else float("inf")


def run(name: str, pdfs: list[pathlib.Path], repeat: int) -> Result:
    """Extract every PDF ``repeat`` times; keep the fastest run's time and its texts."""
    extract = EXTRACTORS[name]
    best = float("inf")
    pages: list[str] = []
    for _ in range(repeat):
        start = time.perf_counter()
        texts = [text for pdf in pdfs for text in extract(pdf)]
        best = min(best, time.perf_counter() - start)
        pages = texts
    word_counts = [len(text.split()) for text in pages]
    return Result(
        name=name,
        pages=len(pages),
        seconds=best,
        pages_over_50_words=sum(1 for n in word_counts if n > 50),
        ligatures=sum(1 for text in pages for ch in text if ch in LIGATURES),
        words=sum(word_counts),
    )


def goals(results: list[Result]) -> list[GoalResult]:
    """pypdfium2 against pypdf: how many times faster, and its pages of text minus pypdf's."""
    by = {r.name: r for r in results}
    chosen, other = by["pypdfium2"], by["pypdf"]
    return [
        (Goal("pypdfium2's speed-up over pypdf", 1.0, "x", at_least=True),
         other.seconds / chosen.seconds if chosen.seconds else float("inf")),
        (Goal("pages with > 50 words, pypdfium2 minus pypdf", 0.0, at_least=True),
         float(chosen.pages_over_50_words - other.pages_over_50_words)),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--papers",
        type=pathlib.Path,
        default=DEFAULT_PAPERS,
        help="folder of PDFs (default: <repo>/../shared/data/papers)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per extractor; the fastest counts"
    )
    add_check_flag(parser)
    args = parser.parse_args(argv)
    logging.getLogger("pypdf").setLevel(logging.ERROR)

    pdfs = sorted(args.papers.glob("*.pdf"))
    if not pdfs:
        parser.error(f"no PDFs in {args.papers}")
    print(f"{len(pdfs)} PDFs in {args.papers}, best of {args.repeat} run(s)\n")
    header = (
        f"{'extractor':<10} {'pages':>6} {'seconds':>8} {'pages/s':>8} "
        f"{'>50 words':>10} {'ligatures':>10} {'words/page':>11}"
    )
    print(header)
    print("-" * len(header))
    results = [run(name, pdfs, args.repeat) for name in EXTRACTORS]
    for r in results:
        print(
            f"{r.name:<10} {r.pages:>6} {r.seconds:>8.2f} {r.pages_per_second:>8.1f} "
            f"{r.pages_over_50_words / r.pages:>10.1%} {r.ligatures:>10} "
            f"{r.words / r.pages:>11.1f}"
        )
    fastest = min(results, key=lambda r: r.seconds)
    slowest = max(results, key=lambda r: r.seconds)
    print(f"\nfastest: {fastest.name}, {slowest.seconds / fastest.seconds:.1f}x {slowest.name}")
    return report(goals(results), check=args.check)


if __name__ == "__main__":
    sys.exit(main())
