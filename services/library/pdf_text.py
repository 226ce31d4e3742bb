"""Text per page from a PDF (PDFium through pypdfium2) or from Zotero's full-text cache.

Why PDFium: ``bench/bench_pdf_extract.py`` read all 38 test papers (1,045 pages) with both
extractors, best of 3 runs:

    extractor   pages  seconds  pages/s  >50 words  ligatures  words/page
    pypdf        1045    27.09     38.6      98.1%       5825       350.8
    pypdfium2    1045     1.53    682.5      98.1%          0       351.0

pypdfium2 is 16-18x faster (17.7x here, 16.3x on a rerun) with the same coverage (pages
with more than 50 words, words per page); it already decomposes ligatures, marks hyphenated
line breaks with U+FFFE and keeps reading order. pypdf stays a dev-only dependency.

Cleaning, applied to every page: characters set in TeX math fonts repaired by font
(``tex_glyphs``; PDFs only); NFKC, and TeX's negation slash before "=" read as "≠"; broken TeX
ligatures (OT1 ``\\x1b``..``\\x1f`` before a letter) mended; words split by a line-end hyphen
joined ("opti-\\nmizer" -> "optimizer" when the next line starts lowercase); whitespace
collapsed within each line; control, private-use and non-characters dropped. Then, over the
whole document (``page_furniture``): running headers, running footers and page numbers
removed, and a word hyphenated across a page break joined. Last, per page, lines are kept as
``\\n`` and a paragraph end (a short line closing a sentence, or a heading-like line) as
``\\n\\n``. ``TEXT_VERSION`` names this recipe: the indexer re-extracts every attachment
indexed under another.

What the document-level steps and the glyph repair cost: ``extract_pages`` over the same
1,045 pages (best of 3-5, five rounds on the shared 2-core machine while it was quiet) took
1.83-1.94 s (median 1.87 s, 559 pages/s) without them and 1.81-2.02 s (median 1.94 s, 539
pages/s) with them; raw PDFium text alone takes 1.41 s. ``tex_glyphs`` asks for the font of
about 2,400 characters in all, two a page; the character filter, which now looks up each
distinct character of a page once, pays for part of it (1.93-2.07 s with the old filter).

PDFium is not thread-safe, so every use of it (``open_document``) holds one module-level lock;
callers may use ``asyncio.to_thread`` freely. Pages, text pages and documents are closed explicitly.
"""

from __future__ import annotations

import contextlib
import itertools
import pathlib
import re
import threading
import unicodedata
from collections.abc import Iterator, Sequence

import pypdfium2 as pdfium

from services.common.errors import InvalidArgument, NotFound
from services.library import page_furniture, tex_glyphs

# The text-cleaning recipe. Change it whenever extracted text changes (new clean-up rules):
# an index built under another version re-extracts every attachment at the next sync.
TEXT_VERSION = 2

_PDFIUM_LOCK = threading.Lock()

# PDFium writes U+FFFE where a word was hyphenated across lines and drops the line break.
_PDFIUM_HYPHEN = "\ufffe"
# Type 1 fonts without a ToUnicode map leave TeX's OT1 ligature slots (ff, fi, fl, ffi, ffl).
_OT1_LIGATURES = {"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl"}
_OT1_LIGATURE_RE = re.compile(r"[\x1b-\x1f](?=[a-z])")
_DROPPED_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Cs"})
_LINE_END_HYPHEN_RE = re.compile(r"(?<=[^\W\d_])-\n(?=[a-z])")
# TeX draws a negated relation as a slash glyph before the relation.
_NEGATED_EQUALS = ("\u0338=", "\u2260")
_SENTENCE_END_RE = re.compile("[.!?:][\"')\\]\u201d\u2019]*$")
_HEADING_LIKE_RE = re.compile(
    r"^(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[A-Z]\.(?:\d{1,2}\.?)*)\s+[^\W\d_][^.]{0,80}$"
    r"|^(?:Abstract|Introduction|Conclusions?|Discussion|Summary|References|Bibliography"
    r"|Acknowledge?ments?|Appendix(?:\s+[A-Z0-9])?)$",
    re.IGNORECASE,
)
# A sentence-ending line shorter than this share of the page's wide lines ends a paragraph.
_SHORT_LINE_RATIO = 0.8
_MIN_LINES_FOR_PARAGRAPHS = 5


def extract_pages(path: pathlib.Path) -> list[str]:
    """One cleaned, NFKC-normalised string per page of the PDF at ``path``.

    Raises:
        NotFound: (code ``file_not_found``) there is no file at ``path``.
        InvalidArgument: (code ``unreadable_pdf``) the file is not a PDF, is corrupt, or is
            encrypted with a password.
    """
    with open_document(path) as doc:
        raw = [_page_text(doc, index) for index in range(len(doc))]
    return clean_pages(raw)


def pdf_page_count(path: pathlib.Path) -> int:
    """How many pages the PDF at ``path`` has; raises like ``extract_pages``."""
    with open_document(path) as doc:
        return len(doc)


def read_ft_cache(path: pathlib.Path) -> list[str]:
    """Pages of a Zotero ``.zotero-ft-cache`` file, cleaned like ``extract_pages``.

    The cache is the whole document's plain text; pages are split at form feeds when there
    are any (pdftotext, which wrote Zotero's caches, ends each page with one), otherwise the
    whole text is one page and the document-level steps find nothing to do. Without font
    information, TeX math characters stay as the cache has them.

    Raises:
        NotFound: (code ``file_not_found``) there is no file at ``path``.
    """
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError as exc:
        raise NotFound(f"No full-text cache at {path}", code="file_not_found") from exc
    parts = raw.split("\f")
    if len(parts) > 1 and not parts[-1].strip():
        parts.pop()
    return clean_pages(parts)


def clean_pages(raw: list[str]) -> list[str]:
    """A document's pages cleaned: each page, then the document's page furniture and the
    words hyphenated across pages (see the module docstring for the steps)."""
    pages = page_furniture.strip_furniture([_clean_lines(text) for text in raw])
    return [_mark_paragraphs(lines) for lines in page_furniture.join_page_hyphens(pages)]


def clean_text(raw: str) -> str:
    """Normalise one page of extracted text on its own (no document-level steps)."""
    return _mark_paragraphs(_clean_lines(raw))


def _clean_lines(raw: str) -> list[str]:
    """One page's non-empty lines, normalised (the per-page steps of the module docstring)."""
    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub(_PDFIUM_HYPHEN + r"(?=[a-z])", "", text).replace(_PDFIUM_HYPHEN, "-")
    text = _OT1_LIGATURE_RE.sub(lambda m: _OT1_LIGATURES[m.group(0)], text)
    text = unicodedata.normalize("NFKC", text).replace(*_NEGATED_EQUALS)
    # Each distinct character is looked up once (a page has a few hundred), not each one.
    table: dict[int, str | None] = {
        ord(ch): None
        for ch in set(text)
        if ch not in "\n\t" and unicodedata.category(ch) in _DROPPED_CATEGORIES
    }
    text = text.translate(table | {ord("\t"): " "})
    lines = [" ".join(line.split()) for line in text.split("\n")]
    text = _LINE_END_HYPHEN_RE.sub("", "\n".join(line for line in lines if line))
    return text.split("\n") if text else []


def _mark_paragraphs(lines: list[str]) -> str:
    """Join lines with ``\\n``, and with ``\\n\\n`` where a paragraph evidently ends."""
    if not lines:
        return ""
    if len(lines) < _MIN_LINES_FOR_PARAGRAPHS:
        return "\n".join(lines)
    widths = sorted(len(line) for line in lines)
    wide = widths[int(len(widths) * 0.9) - 1]
    parts = [lines[0]]
    for prev, line in itertools.pairwise(lines):
        ends_paragraph = (
            _SENTENCE_END_RE.search(prev) is not None
            and len(prev) < _SHORT_LINE_RATIO * wide
            and (line[:1].isupper() or line[:1].isdigit())
        )
        heading = _HEADING_LIKE_RE.match(prev) or _HEADING_LIKE_RE.match(line)
        parts.append("\n\n" if ends_paragraph or heading else "\n")
        parts.append(line)
    return "".join(parts)


@contextlib.contextmanager
def open_document(path: pathlib.Path) -> Iterator[pdfium.PdfDocument]:
    """The PDF at ``path``, holding the PDFium lock until the block ends, then closed.

    Raises:
        NotFound: (code ``file_not_found``) there is no file at ``path``.
        InvalidArgument: (code ``unreadable_pdf``) PDFium cannot open or read it.
    """
    if not path.is_file():
        raise NotFound(f"No PDF at {path}", code="file_not_found")
    with _PDFIUM_LOCK:
        try:
            doc = pdfium.PdfDocument(path)
        except pdfium.PdfiumError as exc:
            reason = "it is encrypted" if "password" in str(exc).lower() else "not a valid PDF"
            raise InvalidArgument(
                f"Cannot read {path.name}: {reason} ({exc})", code="unreadable_pdf"
            ) from exc
        try:
            yield doc
        except pdfium.PdfiumError as exc:
            raise InvalidArgument(
                f"Cannot read {path.name}: a page is unreadable ({exc})", code="unreadable_pdf"
            ) from exc
        finally:
            doc.close()


def _page_text(doc: pdfium.PdfDocument, index: int) -> str:
    """The raw text of one page, TeX math characters repaired, closing the page and its
    text page explicitly."""
    page = doc[index]
    try:
        textpage = page.get_textpage()
        try:
            return tex_glyphs.repair(textpage, str(textpage.get_text_range()))
        finally:
            textpage.close()
    finally:
        page.close()


def text_in_regions(
    path: pathlib.Path, regions: Sequence[tuple[int, Sequence[Sequence[float]]]]
) -> list[str]:
    """The text inside each region of the PDF at ``path``: (1-based page, rectangles in PDF
    points, x1 y1 x2 y2, as Zotero keeps an image annotation's ``position.rects``), cleaned like
    a page; "" for a region without text (a scan) or a page the PDF does not have."""
    out: list[str] = []
    with open_document(path) as doc:
        for page_number, rects in regions:
            if not 1 <= page_number <= len(doc):
                out.append("")
                continue
            page = doc[page_number - 1]
            try:
                textpage = page.get_textpage()
                try:
                    found = [
                        textpage.get_text_bounded(
                            left=min(r[0], r[2]),
                            bottom=min(r[1], r[3]),
                            right=max(r[0], r[2]),
                            top=max(r[1], r[3]),
                        )
                        for r in rects
                        if len(r) == 4
                    ]
                finally:
                    textpage.close()
            finally:
                page.close()
            out.append(clean_text("\n".join(t for t in found if t.strip())))
    return out
