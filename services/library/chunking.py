"""Split a document's pages into overlapping passages for retrieval, one section at a time.

Each table-of-contents heading is first located in its page's text (``locate_sections``);
when it cannot be found (an outline title worded unlike the printed heading) its section is
taken to start at the top of its page. The text is then cut at those positions, so a chunk
never holds words of two sections. Within a section the text is split into sentences (never
across paragraphs) and sentences are packed into chunks of about ``target_words``; a sentence
longer than a chunk allows is cut into word runs. Each chunk after the first in a section
repeats up to ``overlap_words`` trailing words of the previous one (whole sentences when they
fit). A short tail is folded into the chunk before it when the result stays within
``max_words``. Every word of every page ends up in some chunk, and the same input always gives
the same chunks.
"""

from __future__ import annotations

import dataclasses
import itertools
import re

from services.library.toc import (
    TocEntry,
    heading_key,
    running_line_key,
    running_line_keys,
    strip_number,
)

_ABBREVIATIONS = frozenset(
    {"al.", "e.g.", "i.e.", "cf.", "vs.", "etc.", "fig.", "figs.", "eq.", "eqs.", "sec.", "no."}
    | {"resp.", "approx.", "ca.", "p.", "pp.", "vol.", "ed.", "eds.", "viz.", "dr.", "prof."}
)
_SENTENCE_END_RE = re.compile("[.!?][\"')\\]\u201d\u2019]*$")
_SENTENCE_START_RE = re.compile("^[\"'(\\[\u201c\u2018]*[A-Z0-9]")
_INITIAL_RE = re.compile(r"^[A-Z]\.$")
# How far to look for a heading: its page, then the top lines of the next page (outline
# destinations sometimes point at the page before a heading that opens a page).
_NEXT_PAGE_LINES = 5
_HEADING_MAX_LINES = 3
# Words above a heading on its page beyond which the previous section is taken to continue
# onto that page (a running header alone has fewer).
_WORDS_BEFORE_HEADING = 15
_SHORT_TAIL_SHARE = 0.25


@dataclasses.dataclass(frozen=True)
class Chunk:
    """A passage: its text, the 1-based pages its words come from, the section its first
    words are in (None before the first heading), and its position in the document."""

    text: str
    page_start: int
    page_end: int
    section: str | None
    ordinal: int

    @property
    def word_count(self) -> int:
        return len(self.text.split())


@dataclasses.dataclass(frozen=True)
class _Unit:
    """A sentence (or part of one): its words, page, section index and paragraph."""

    words: tuple[str, ...]
    page: int
    section: int | None
    paragraph: int


def chunk_document(
    pages: list[str],
    toc: list[TocEntry],
    *,
    target_words: int = 220,
    overlap_words: int = 40,
    max_words: int = 350,
) -> list[Chunk]:
    """Chunks of about ``target_words`` (never more than ``max_words``) over ``pages``.

    Raises:
        ValueError: unless 0 <= overlap_words < target_words <= max_words.
    """
    if not 0 <= overlap_words < target_words <= max_words:
        raise ValueError("need 0 <= overlap_words < target_words <= max_words")
    unit_words = min(target_words, max_words - overlap_words)
    units = _units(pages, toc, unit_words)
    chunks: list[Chunk] = []
    start = 0
    while start < len(units):
        end = start
        while end < len(units) and units[end].section == units[start].section:
            end += 1
        for group in _pack(units[start:end], target_words, overlap_words, max_words):
            section = units[start].section
            chunks.append(
                Chunk(
                    text=_join(group),
                    page_start=group[0].page,
                    page_end=group[-1].page,
                    section=toc[section].title if section is not None else None,
                    ordinal=len(chunks),
                )
            )
        start = end
    return chunks


def section_spans(pages: list[str], toc: list[TocEntry]) -> list[tuple[TocEntry, int, int]]:
    """Each entry with the first and last page of its section, subsections included.

    A section ends where the next entry of the same or a higher level starts: on that
    entry's page when text of this section precedes the heading there, else the page before.
    """
    located = locate_sections(pages, toc)
    spans = []
    for index, entry in enumerate(toc):
        first = located[index][0] + 1
        last = len(pages)
        following = next(
            (j for j in range(index + 1, len(toc)) if toc[j].level <= entry.level), None
        )
        if following is not None:
            page_index, offset = located[following]
            shared = len(pages[page_index][:offset].split()) > _WORDS_BEFORE_HEADING
            last = page_index + 1 if shared else page_index
        spans.append((entry, first, max(first, min(last, len(pages)))))
    return spans


def locate_sections(pages: list[str], toc: list[TocEntry]) -> list[tuple[int, int]]:
    """Where each entry's section starts: (0-based page index, character offset in the page).

    Positions never go backwards; an entry whose heading is not found starts at the top of
    its page. Running headers are never taken for headings.
    """
    running = running_line_keys(pages)
    located: list[tuple[int, int]] = []
    for entry in toc:
        page_index = min(max(entry.page, 1), max(len(pages), 1)) - 1
        floor = located[-1] if located else (0, 0)
        start = floor[1] + 1 if located and floor[0] == page_index else 0
        offset = _find_heading(pages[page_index], entry.title, running, start) if pages else None
        position = (page_index, 0 if offset is None else offset)
        if offset is None and page_index + 1 < len(pages):
            found = _find_heading(pages[page_index + 1], entry.title, running, 0, _NEXT_PAGE_LINES)
            if found is not None:
                position = (page_index + 1, found)
        located.append(max(position, floor))
    return located


def _find_heading(
    page: str, title: str, running: frozenset[str], start: int, max_lines: int | None = None
) -> int | None:
    """Offset of the line at or after ``start`` where ``title`` stands as a heading."""
    wanted = heading_key(title)
    if not wanted:
        return None
    lines = page.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for index, line in enumerate(lines[:max_lines]):
        if offsets[index] < start or not line.strip() or running_line_key(line) in running:
            continue
        bare = strip_number(line.strip())
        key = heading_key(bare)
        if not key:
            continue
        if key == wanted:
            return offsets[index]
        wrapped = heading_key(bare + "".join(lines[index + 1 : index + _HEADING_MAX_LINES]))
        if wanted.startswith(key) and wrapped.startswith(wanted):
            return offsets[index]
        numbered = bare != line.strip()  # "4.1. Labels in the borders: labeling_text()"
        if numbered and key.startswith(wanted):
            return offsets[index]
    return None


def _units(pages: list[str], toc: list[TocEntry], unit_words: int) -> list[_Unit]:
    """Every word of ``pages`` as sentences, each tagged with its page and section."""
    cuts: dict[int, list[tuple[int, int]]] = {}
    for index, (page_index, offset) in enumerate(locate_sections(pages, toc)):
        cuts.setdefault(page_index, []).append((offset, index))
    units: list[_Unit] = []
    section: int | None = None
    paragraph = 0
    for page_index, page in enumerate(pages):
        pieces: list[tuple[str, int | None]] = []
        cursor = 0
        for offset, index in cuts.get(page_index, []):
            pieces.append((page[cursor:offset], section))
            cursor, section = offset, index
        pieces.append((page[cursor:], section))
        for number, (text, piece_section) in enumerate(pieces):
            heading, rest = text.split("\n", 1) if number and "\n" in text else ("", text)
            for block in [heading, *rest.split("\n\n")]:  # a heading is its own paragraph
                words = block.split()
                if not words:
                    continue
                paragraph += 1
                for sentence in _sentences(words):
                    for at in range(0, len(sentence), unit_words):
                        part = tuple(sentence[at : at + unit_words])
                        units.append(_Unit(part, page_index + 1, piece_section, paragraph))
    return units


def _sentences(words: list[str]) -> list[list[str]]:
    """``words`` cut after each token that ends a sentence (not "e.g.", "al.", "J.")."""
    sentences: list[list[str]] = [[]]
    for index, word in enumerate(words):
        sentences[-1].append(word)
        following = words[index + 1] if index + 1 < len(words) else ""
        if (
            following
            and _SENTENCE_END_RE.search(word)
            and _SENTENCE_START_RE.match(following)
            and word.lower() not in _ABBREVIATIONS
            and not _INITIAL_RE.match(word)
        ):
            sentences.append([])
    return [s for s in sentences if s]


def _pack(units: list[_Unit], target: int, overlap: int, max_words: int) -> list[list[_Unit]]:
    """Group one section's units into chunks, each opening with the previous one's tail."""
    groups: list[list[_Unit]] = []
    current: list[_Unit] = []
    fresh = 0  # units in ``current`` that are not overlap
    count = 0
    for unit in units:
        if fresh and (count >= target or count + len(unit.words) > max_words):
            groups.append(current)
            current = _tail(current, overlap)
            fresh, count = 0, sum(len(u.words) for u in current)
        current.append(unit)
        fresh += 1
        count += len(unit.words)
    if current and fresh:
        new = current[len(current) - fresh :]
        new_words = sum(len(u.words) for u in new)
        merged = groups[-1] + new if groups else []
        if groups and new_words < _SHORT_TAIL_SHARE * target and _size(merged) <= max_words:
            groups[-1] = merged
        else:
            groups.append(current)
    return groups


def _tail(group: list[_Unit], overlap: int) -> list[_Unit]:
    """The last whole units of ``group`` within ``overlap`` words, else the last words."""
    tail: list[_Unit] = []
    count = 0
    for unit in reversed(group):
        if count + len(unit.words) > overlap:
            break
        tail.insert(0, unit)
        count += len(unit.words)
    if not tail and overlap:
        last = group[-1]
        tail = [dataclasses.replace(last, words=last.words[-overlap:])]
    return tail


def _size(group: list[_Unit]) -> int:
    return sum(len(unit.words) for unit in group)


def _join(group: list[_Unit]) -> str:
    """Units joined by spaces within a paragraph and blank lines between paragraphs."""
    parts = [" ".join(group[0].words)]
    for before, unit in itertools.pairwise(group):
        parts.append(" " if unit.paragraph == before.paragraph else "\n\n")
        parts.append(" ".join(unit.words))
    return "".join(parts)
