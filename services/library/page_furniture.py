"""A document's page furniture: running headers, running footers and page numbers, removed.

Extraction reads each page whole, so the line a journal repeats on every page ("Douglas Bates,
Martin Mächler, Ben Bolker, Steve Walker 3") lands in the text, and a passage spanning two
pages carries it into the middle of a sentence. ``strip_furniture`` works on the whole
document, after each page's lines are cleaned:

- only the first and last ``EDGE_LINES`` lines of a page are candidates; lines are compared
  with digits folded ("2 Linear Mixed Models with lme4" and "4 Linear Mixed Models with
  lme4" agree), case and spacing ignored;
- a line is running when it recurs in the same zone (top or bottom) on at least
  ``MIN_PAGES`` pages and on at least ``MIN_SHARE`` of the pages of its kind: of the even or
  the odd pages when (almost) all its pages are of one parity, since journals alternate
  the author line and the short title, else of all pages. Figure labels and code lines that
  happen to open a few pages fall short of that share;
- a line seen on only two pages still counts when it carries the page number: a number at
  its start or end that differs from the page's position by the same offset as the page
  numbers found elsewhere in the document (a six-page paper shows each of its two
  alternating headers two or three times);
- a line that is only a page number ("7", "Page 7", "7 of 12", "- 7 -") at the very top or
  bottom goes when that page-number offset is shared by enough pages, so a lone "1" that
  labels a tree node in a figure stays;
- a running line that PDFium glued to a figure label beside it ("38 Linear Mixed Models with
  lme4 density 0.00 0.02") is cut off that line when it carries the page number or has at
  least ``MIN_GLUED_WORDS`` words.

``join_page_hyphens`` then joins a word hyphenated across a page break ("(al-" | "though")
once the break's furniture is gone: the word is completed on the page where it starts.
"""

from __future__ import annotations

import collections
import dataclasses
import re

EDGE_LINES = 3
MIN_PAGES = 3
MIN_SHARE = 0.5
MIN_GLUED_WORDS = 3
# Pages whose parity a running line must share to be counted as an alternating header.
_SAME_PARITY_SHARE = 0.9
# Share of the pages a page-number offset needs (at least two pages).
_NUMBER_OFFSET_SHARE = 0.3

_DIGITS_RE = re.compile(r"\d+")
_PAGE_NUMBER_RE = re.compile(
    r"^(?:page\s+)?(\d{1,4})(?:\s*(?:/|of)\s*\d{1,4})?$"  # 7, Page 7, 7 of 12, 7/12
    r"|^[-\u2013\u2014]\s*(\d{1,4})\s*[-\u2013\u2014]$",  # - 7 -
    re.IGNORECASE,
)
_EDGE_NUMBER_RE = re.compile(r"^(\d{1,4})\b|\b(\d{1,4})$")
_PAGE_END_HYPHEN_RE = re.compile(r"(?<=[^\W\d_])-$")
_FIRST_WORD_RE = re.compile(r"^([a-z][^\s]*)\s*")


@dataclasses.dataclass(frozen=True)
class _Edge:
    page: int  # 0-based
    line: int  # index into the page's lines
    zone: str  # "top" or "bottom"
    key: str
    number: int | None  # a number at the line's start or end


def strip_furniture(pages: list[list[str]]) -> list[list[str]]:
    """``pages`` (each a list of non-empty lines) without running headers, running footers
    and page numbers; see the module docstring for what counts."""
    edges = [edge for index, lines in enumerate(pages) for edge in _edges(index, lines)]
    offsets = _page_number_offsets(pages)
    by_key: dict[tuple[str, str], list[_Edge]] = collections.defaultdict(list)
    for edge in edges:
        if _PAGE_NUMBER_RE.match(pages[edge.page][edge.line]) is None:
            by_key[(edge.zone, edge.key)].append(edge)
    running = {group: found for group, found in by_key.items() if _recurs(found, len(pages))}
    offsets |= {o for found in running.values() for o in _offsets_of(found)}
    for group, found in by_key.items():
        if group not in running and _carries_page_number(found, offsets):
            running[group] = found
    drop = {(e.page, e.line) for found in running.values() for e in found}
    for index, lines in enumerate(pages):
        for line_index in (0, len(lines) - 1):
            if 0 <= line_index < len(lines) and _page_number(lines[line_index], index) in offsets:
                drop.add((index, line_index))
    kept = [
        {i: line for i, line in enumerate(lines) if (index, i) not in drop}
        for index, lines in enumerate(pages)
    ]
    for edge in edges:  # a running line glued to the text beside it on one line
        line = kept[edge.page].get(edge.line)
        if line is not None:
            kept[edge.page][edge.line] = _unglued(line, edge, running, offsets)
    return [[line for line in lines.values() if line] for lines in kept]


def _unglued(
    line: str, edge: _Edge, running: dict[tuple[str, str], list[_Edge]], offsets: set[int]
) -> str:
    """``line`` without a running line it starts (top) or ends (bottom) with: one that
    carries this page's number, or has at least ``MIN_GLUED_WORDS`` words."""
    words = line.split()
    for zone, key in running:
        size = len(key.split())
        if zone != edge.zone or size >= len(words):
            continue
        part, rest = (
            (words[:size], words[size:]) if zone == "top" else (words[-size:], words[:-size])
        )
        if _key(" ".join(part)) != key:
            continue
        number = _edge_number(" ".join(part))
        if (number is not None and number - (edge.page + 1) in offsets) or (
            "#" not in key and size >= MIN_GLUED_WORDS
        ):
            return " ".join(rest)
    return line


def join_page_hyphens(pages: list[list[str]]) -> list[list[str]]:
    """Join a word split by a hyphen at the end of a page with its rest on the next page
    that has text, when that rest starts lowercase (as within a page: "Springer-" + "Verlag"
    stays)."""
    pages = [list(lines) for lines in pages]
    for index, lines in enumerate(pages):
        if not lines or _PAGE_END_HYPHEN_RE.search(lines[-1]) is None:
            continue
        following = next((p for p in pages[index + 1 :] if p), None)
        if following is None:
            continue
        match = _FIRST_WORD_RE.match(following[0])
        if match is None:
            continue
        lines[-1] = lines[-1][:-1] + match.group(1)
        rest = following[0][match.end() :]
        if rest:
            following[0] = rest
        else:
            following.pop(0)
    return pages


def _edges(page: int, lines: list[str]) -> list[_Edge]:
    top = range(min(EDGE_LINES, len(lines)))
    bottom = range(max(len(lines) - EDGE_LINES, len(top)), len(lines))
    return [
        _Edge(page, i, zone, _key(lines[i]), _edge_number(lines[i]))
        for zone, span in (("top", top), ("bottom", bottom))
        for i in span
    ]


def _key(line: str) -> str:
    return " ".join(_DIGITS_RE.sub("#", line).casefold().split())


def _edge_number(line: str) -> int | None:
    match = _EDGE_NUMBER_RE.search(line)
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


def _recurs(found: list[_Edge], page_count: int) -> bool:
    """On enough pages, and on a good share of the pages of its kind (parity)."""
    pages = {e.page for e in found}
    if len(pages) < MIN_PAGES:
        return False
    odd = sum(p % 2 for p in pages)
    kind = page_count
    if max(odd, len(pages) - odd) >= _SAME_PARITY_SHARE * len(pages):
        parity = 1 if odd * 2 > len(pages) else 0
        kind = sum(1 for p in range(page_count) if p % 2 == parity)
    return len(pages) >= MIN_SHARE * kind


def _offsets_of(found: list[_Edge]) -> set[int]:
    """The page-number offset a running line's numbers keep, if they keep one."""
    offsets = {e.number - (e.page + 1) for e in found if e.number is not None}
    return offsets if len(offsets) == 1 and all(e.number is not None for e in found) else set()


def _carries_page_number(found: list[_Edge], offsets: set[int]) -> bool:
    pages = {e.page for e in found}
    return len(pages) >= 2 and len(pages) == len(found) and bool(_offsets_of(found) & offsets)


def _page_number(line: str, page: int) -> int | None:
    """The offset of a line that is only a page number, else None."""
    match = _PAGE_NUMBER_RE.match(line)
    if match is None:
        return None
    return int(match.group(1) or match.group(2)) - (page + 1)


def _page_number_offsets(pages: list[list[str]]) -> set[int]:
    """Offsets (printed number minus page position) shared by enough lone page numbers."""
    counts: collections.Counter[int] = collections.Counter()
    for index, lines in enumerate(pages):
        found = {_page_number(lines[i], index) for i in {0, len(lines) - 1} if 0 <= i < len(lines)}
        counts.update(o for o in found if o is not None)
    needed = max(2, _NUMBER_OFFSET_SHARE * len(pages))
    return {offset for offset, n in counts.items() if n >= needed}
