"""A document's table of contents: the PDF outline when it has one, else headings in the text.

Recognising headings in text (``recognise_headings``) keeps only short standalone lines that
read like titles, and trusts numbering over looks:

- numbered headings ("1. Introduction", "2.3 Model fitting", "3 Methods") must form one
  chain in which every number follows from the one before (2 -> 2.1 -> 2.2 -> 3; one missed
  heading is tolerated), all written in one style (with or without a trailing dot), with no
  number above 20. The longest such chain wins, which rejects code line numbers, table rows,
  equation numbers, affiliations and list items that happen to look like headings;
- lettered appendices ("A. R code", "B.1 Proofs") form a chain of their own after the last
  numbered heading;
- the usual unnumbered headings (Abstract, Introduction, ..., References, Appendix A) count
  when they stand alone on a line; each is taken once;
- between the abstract and the references, an unnumbered subheading is a short title-like
  line between a line that ends a sentence and a full-width line that starts one; it sits
  one level below the heading before it;
- running headers and footers (the same line, digits aside, at the top or bottom of many
  pages) and contents listings (dot leaders) are never headings.
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
import pathlib
import re
import unicodedata
from collections.abc import Sequence

import pypdfium2 as pdfium

from services.common.errors import InvalidArgument
from services.library import pdf_text

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class TocEntry:
    """One heading: its title (no number), nesting level (1 = top) and 1-based page."""

    title: str
    level: int
    page: int


_MAX_SECTION_NUMBER = 20
_MAX_TITLE_WORDS = 16
_MAX_TITLE_CHARS = 120
_WRAP_MIN_CHARS = 50
_MAX_CONTINUATION_WORDS = 8
_MAX_TITLE_COMMAS = 2
_MIN_NUMBERED_CHAIN = 2
_NUMBERED_RE = re.compile(r"^(?P<num>\d{1,2}(?:\.\d{1,2}){0,3})(?P<dot>\.?)\s+(?P<title>.+)$")
_LETTERED_RE = re.compile(
    r"^(?:Appendix\s+(?P<named>[A-Z])|(?P<letter>[A-Z])(?=[.:]))"
    r"(?P<sub>(?:\.\d{1,2}){0,2})(?P<dot>[.:]?)\s+(?P<title>.+)$"
)
_UNNUMBERED_TITLES = (
    {"Abstract", "Summary", "Introduction", "Background", "Related work", "Method", "Methods"}
    | {"Materials and methods", "Results", "Discussion", "Conclusion", "Conclusions"}
    | {"Concluding remarks", "Future work", "Acknowledgement", "Acknowledgements"}
    | {"Acknowledgment", "Acknowledgments", "References", "Bibliography", "Appendix"}
    | {"Appendices"}
)
_UNNUMBERED = {name.lower(): name for name in _UNNUMBERED_TITLES}
_APPENDIX_RE = re.compile(r"^Appendix\s+(?P<id>[A-Z]|\d{1,2})(?:[.:]\s+(?P<title>.+))?$")
_CODE_CHARS_RE = re.compile(r"[=<>{}\[\];%$#@~^|\\*_]")
_OPENING_QUOTES = "\"'\u201c\u2018"
_TITLE_END_PUNCTUATION = frozenset(")?!+\"'\u201d\u2019")
_NUMERIC_TOKEN_RE = re.compile(r"[-+]?[\d.,]+%?")
# A title never ends on these; a line that does is a wrapped sentence or list item.
_DANGLING_WORDS = frozenset(
    {"a", "an", "and", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the"}
    | {"to", "via", "with"}
)
_DOT_LEADER_RE = re.compile(r"(?:\.\s*){4,}|\s\d{1,3}$")
_BACK_MATTER = frozenset({"References", "Bibliography"})
_MAX_SUBHEADING_WORDS = 9
_FULL_LINE_CHARS = 60
_SENTENCE_END_RE = re.compile('[.!?:)]["\u201d\u2019]?$')
# Captions, R output ("Data: kidney (Number of observations: 76)"), table header rows.
_SUBHEADING_EXCLUDED_RE = re.compile(
    r"^(?:Figure|Fig|Table|Listing|Algorithm)\b|:\s*(?:\S*\d|[a-z])|(?:\b[A-Z]{2,}\b.*){3}"
)
_EDGE_LINES = 2
_RUNNING_MIN_PAGES = 3
_RUNNING_MIN_SHARE = 0.2


@dataclasses.dataclass(frozen=True)
class _Candidate:
    """A line that may be a heading: where it is, its number (if any) and its title.

    ``dotted`` is the numbering style ("2.1." rather than "2.1"); ``sub`` marks an unnumbered
    subheading found by layout rather than by name.
    """

    page: int
    line: int
    number: tuple[int, ...]
    dotted: bool
    title: str
    sub: bool = False


def build_toc(path: pathlib.Path | None, pages: list[str]) -> list[TocEntry]:
    """The table of contents: the PDF outline at ``path`` if any, else headings in ``pages``.

    Entries are sorted by page (document order within a page) without duplicates.
    ``path`` may be None for text that did not come from a PDF (Zotero's full-text cache).
    """
    entries = read_outline(path) if path is not None else []
    if not entries:
        entries = recognise_headings(pages)
    return _sorted_unique(entries)


def section_for_page(toc: Sequence[TocEntry], page: int) -> str | None:
    """The title of the last entry starting at or before ``page``, or None before the first."""
    starts = [entry.page for entry in toc]
    index = bisect.bisect_right(starts, page) - 1
    return toc[index].title if index >= 0 else None


def read_outline(path: pathlib.Path) -> list[TocEntry]:
    """The PDF's bookmarks with resolved pages; empty when it has none or cannot be read."""
    try:
        with pdf_text.open_document(path) as doc:
            page_count = len(doc)
            entries = []
            for bookmark in doc.get_toc():
                title = _clean_title(bookmark.get_title())
                index = _bookmark_page_index(doc, bookmark)
                if title and index is not None and 0 <= index < page_count:
                    entries.append(TocEntry(title, bookmark.level + 1, index + 1))
            return entries
    except InvalidArgument as exc:  # a broken outline is no reason to fail indexing
        logger.warning("Ignoring the unreadable outline of %s: %s", path.name, exc)
        return []


def recognise_headings(pages: list[str]) -> list[TocEntry]:
    """Headings found in the text of ``pages`` (see the module docstring for the rules)."""
    lines = _content_lines(pages)
    body = _front_matter_end(lines)
    numbered = _best_chain([c for c in _numbered_candidates(lines) if (c.page, c.line) > body])
    if len(numbered) < _MIN_NUMBERED_CHAIN:  # a lone "1. ..." is a list item, not a structure
        numbered = []
    after = (numbered[-1].page, numbered[-1].line) if numbered else body
    lettered = _best_chain(
        [c for c in _lettered_candidates(lines) if (c.page, c.line) > after], first_max=1
    )
    unnumbered = _unnumbered_candidates(lines)
    references = [(c.page, c.line) for c in unnumbered if c.title in _BACK_MATTER]
    end = min(references, default=(len(lines) + 1, 0))
    chosen: dict[tuple[int, int], _Candidate] = {}
    for cand in [*numbered, *lettered, *unnumbered, *_subheading_candidates(lines, body, end)]:
        chosen.setdefault((cand.page, cand.line), cand)
    entries, depth = [], 0
    for _, cand in sorted(chosen.items(), key=lambda item: item[0]):
        if cand.number:
            level = depth = len(cand.number)
        elif cand.sub:  # one level below the heading above it
            level = depth + 1
        else:
            level, depth = 1, 0 if cand.title == "Abstract" else 1
        entries.append(TocEntry(cand.title, level, cand.page))
    return entries


def heading_key(text: str) -> str:
    """Lowercase letters and digits only, a multiplication sign read as "x" ("2 x 2" table):
    how titles and page lines are compared."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("\u00d7", "x")
    return "".join(ch for ch in folded if ch.isalnum())


def strip_number(line: str) -> str:
    """``line`` without a leading section number or appendix letter ("2.3. ", "A.1 ")."""
    match = _NUMBERED_RE.match(line) or _LETTERED_RE.match(line)
    return match.group("title") if match else line


def _bookmark_page_index(doc: pdfium.PdfDocument, bookmark: pdfium.PdfBookmark) -> int | None:
    dest = bookmark.get_dest()
    if dest is None:  # a GoTo action instead of a direct destination
        action = pdfium.raw.FPDFBookmark_GetAction(bookmark.raw)
        raw_dest = pdfium.raw.FPDFAction_GetDest(doc.raw, action) if action else None
        if not raw_dest:
            return None
        dest = pdfium.PdfDest(raw_dest, pdf=doc)
    index = dest.get_index()
    return int(index) if index is not None else None


def _clean_title(title: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", title).split())


def _sorted_unique(entries: list[TocEntry]) -> list[TocEntry]:
    seen: set[tuple[str, int, int]] = set()
    unique = []
    for entry in sorted(entries, key=lambda e: e.page):  # stable: document order within a page
        key = (entry.title.casefold(), entry.level, entry.page)
        if key not in seen:
            seen.add(key)
            unique.append(entry)
    return unique


def _content_lines(pages: list[str]) -> list[list[str]]:
    """Each page's non-empty lines, with running headers and footers blanked out.

    Only lines at a page's edge are blanked: the same words elsewhere on a page (a section
    titled like the paper's short title) are left alone.
    """
    lines = [[line.strip() for line in page.split("\n") if line.strip()] for page in pages]
    running = running_line_keys(pages)
    cleaned = []
    for page_lines in lines:
        edge = {*range(_EDGE_LINES), *range(len(page_lines) - _EDGE_LINES, len(page_lines))}
        cleaned.append(
            [
                "" if i in edge and running_line_key(line) in running else line
                for i, line in enumerate(page_lines)
            ]
        )
    return cleaned


def running_line_keys(pages: list[str]) -> frozenset[str]:
    """Keys (``running_line_key``) of running headers and footers: lines that recur, digits
    aside, among the first or last two lines of many pages."""
    counts: dict[str, int] = {}
    for page in pages:
        page_lines = [line for line in page.split("\n") if line.strip()]
        edges = page_lines[:_EDGE_LINES] + page_lines[-_EDGE_LINES:]
        for key in {running_line_key(line) for line in edges}:
            counts[key] = counts.get(key, 0) + 1
    threshold = max(_RUNNING_MIN_PAGES, _RUNNING_MIN_SHARE * len(pages))
    return frozenset(key for key, n in counts.items() if key and n >= threshold)


def running_line_key(line: str) -> str:
    """The letters of ``line``, case kept: "2 Rcpp: Seamless R" and "4 Rcpp: Seamless R" agree."""
    return "".join(ch for ch in line if ch.isalpha())


def _front_matter_end(lines: list[list[str]]) -> tuple[int, int]:
    """(page, line) of a first-page "Abstract" line: numbered lines above it are affiliations."""
    for index, line in enumerate(lines[0] if lines else []):
        if line.rstrip(":").lower() == "abstract":
            return (1, index)
    return (0, -1)


def _looks_like_title(title: str) -> bool:
    """Short, mostly letters, no code or maths, not a sentence, not a contents line."""
    words = title.split()
    letters = sum(ch.isalpha() for ch in title)
    return (
        0 < len(words) <= _MAX_TITLE_WORDS
        and len(title) <= _MAX_TITLE_CHARS
        and (title[0].isupper() or title[0] in _OPENING_QUOTES or _is_lowercase_title(title))
        and not (title[0].isdigit() and words[0].isdigit())
        and sum(_NUMERIC_TOKEN_RE.fullmatch(word) is not None for word in words) < 2
        and words[-1].lower() not in _DANGLING_WORDS
        and (title[-1] in _TITLE_END_PUNCTUATION or _is_word_char(title[-1]))
        and title.count(",") <= _MAX_TITLE_COMMAS
        and letters >= 0.5 * len(title.replace(" ", ""))
        and _CODE_CHARS_RE.search(title) is None
        and not any(unicodedata.category(ch) == "Sm" and ch != "+" for ch in title)
        and _DOT_LEADER_RE.search(title) is None
    )


def _is_word_char(ch: str) -> bool:
    """A letter or digit, but not a modifier letter (the circumflex of an estimate "F^")."""
    return ch.isalnum() and unicodedata.category(ch) != "Lm"


def _is_lowercase_title(title: str) -> bool:
    """A short title may start lowercase or with a digit: "strucchange: Empirical ...",
    "2-Sum Problem"."""
    short = len(title.split()) <= _MAX_CONTINUATION_WORDS
    return (title[0].islower() or title[0].isdigit()) and short and "," not in title


def _heading_title(first: str, page_lines: list[str], index: int) -> str | None:
    """The title starting with ``first`` (joined with its wrapped second line), if it is one.

    A title wraps ("... in the presence of" / "heteroskedasticity and autocorrelation") when
    its first line ends on a dangling word or is long, and the next line is a short
    lowercase fragment.
    """
    title = first
    following = page_lines[index + 1] if index + 1 < len(page_lines) else ""
    wraps = first.split()[-1].lower() in _DANGLING_WORDS or len(first) >= _WRAP_MIN_CHARS
    if (
        wraps
        and following[:1].islower()
        and len(following.split()) <= _MAX_CONTINUATION_WORDS
        and _looks_like_title(following)
    ):
        title = f"{first} {following}"
    return title if _looks_like_title(title) else None


def _numbered_candidates(lines: list[list[str]]) -> list[_Candidate]:
    found = []
    for page_index, page_lines in enumerate(lines):
        for index, line in enumerate(page_lines):
            match = _NUMBERED_RE.match(line)
            title = _heading_title(match["title"], page_lines, index) if match else None
            if not match or title is None:
                continue
            number = tuple(int(part) for part in match["num"].split("."))
            if all(1 <= n <= _MAX_SECTION_NUMBER for n in number):
                found.append(_Candidate(page_index + 1, index, number, bool(match["dot"]), title))
    return found


def _lettered_candidates(lines: list[list[str]]) -> list[_Candidate]:
    found = []
    for page_index, page_lines in enumerate(lines):
        for index, line in enumerate(page_lines):
            match = _LETTERED_RE.match(line)
            if not match or "." in match["title"]:  # "A. Genz and F. Bretz. Numerical ..."
                continue
            title = _heading_title(match["title"], page_lines, index)
            if title is None:
                continue
            sub = tuple(int(part) for part in match["sub"].split(".")[1:])
            number = (ord(match["named"] or match["letter"]) - ord("A") + 1, *sub)
            found.append(_Candidate(page_index + 1, index, number, bool(match["dot"]), title))
    return found


def _unnumbered_candidates(lines: list[list[str]]) -> list[_Candidate]:
    """Standalone "Abstract", "References", "Appendix B: Proofs"...; the first of each."""
    found = []
    seen: set[str] = set()
    for page_index, page_lines in enumerate(lines):
        for index, line in enumerate(page_lines):
            bare = line.rstrip(":")
            if not bare[:1].isupper():
                continue
            title = _UNNUMBERED.get(bare.lower())
            appendix = _APPENDIX_RE.match(bare)
            if title is None and appendix and _looks_like_title(appendix["title"] or "Appendix"):
                title = bare
            if title is not None and title.lower() not in seen:
                seen.add(title.lower())
                found.append(_Candidate(page_index + 1, index, (), False, title))
    return found


def _subheading_candidates(
    lines: list[list[str]], start: tuple[int, int], end: tuple[int, int]
) -> list[_Candidate]:
    """Unnumbered subheadings between ``start`` and ``end``: a short title-like line of two
    words or more, after a line that ends a sentence, before a full-width line that starts
    one ("Specifying uncorrelated random effects", "Experiment I")."""
    found = []
    for page_index, page_lines in enumerate(lines):
        for index in range(1, len(page_lines) - 1):
            line, before, after = page_lines[index], page_lines[index - 1], page_lines[index + 1]
            if (
                start < (page_index + 1, index) < end
                and 2 <= len(line.split()) <= _MAX_SUBHEADING_WORDS
                and line[:1].isupper()
                and "." not in line
                and _SUBHEADING_EXCLUDED_RE.search(line) is None
                and _SENTENCE_END_RE.search(before) is not None
                and after[:1].isupper()
                and len(after) >= _FULL_LINE_CHARS
                and not _NUMBERED_RE.match(line)
                and _looks_like_title(line)
            ):
                found.append(_Candidate(page_index + 1, index, (), False, line, sub=True))
    return found


def _follows(prev: tuple[int, ...], number: tuple[int, ...]) -> bool:
    """Whether ``number`` can be the next heading after ``prev`` (one skipped one allowed).

    2 -> 2.1 (deeper), 2.1 -> 2.2 or 3 or 3.1 (next at some depth), 2.1 -> 2.3 (2.2 missed).
    """
    deeper = number[: len(prev)] == prev and len(number) > len(prev)
    if deeper and all(n == 1 for n in number[len(prev) :]):
        return True
    return any(
        number[:depth] == prev[:depth]
        and prev[depth] < number[depth] <= prev[depth] + 2
        and all(n == 1 for n in number[depth + 1 :])
        for depth in range(min(len(number), len(prev)))
    )


def _best_chain(candidates: list[_Candidate], *, first_max: int = 2) -> list[_Candidate]:
    """The longest run of candidates, in one numbering style, where each follows the last.

    Between runs of equal length the one with fewer words wins: "3. ARIMA models" over the
    list item "3. Produce point forecasts using the best model ... for as many".
    """
    best: list[_Candidate] = []
    best_score = (0, 0)
    for dotted in (True, False):
        styled = [c for c in candidates if c.dotted == dotted]
        score: list[tuple[int, int] | None] = [None] * len(styled)
        previous: list[int | None] = [None] * len(styled)
        for i, cand in enumerate(styled):
            own = (1, -len(cand.title.split()))
            if cand.number[0] <= first_max and all(n == 1 for n in cand.number[1:]):
                score[i] = own
            for j in range(i):
                before = score[j]
                if before is None or not _follows(styled[j].number, cand.number):
                    continue
                linked = (before[0] + own[0], before[1] + own[1])
                if score[i] is None or linked > score[i]:  # type: ignore[operator]
                    score[i], previous[i] = linked, j
        for i, value in enumerate(score):
            if value is not None and value > best_score:
                best_score = value
                chain = []
                end: int | None = i
                while end is not None:
                    chain.append(styled[end])
                    end = previous[end]
                best = chain[::-1]
    return best
