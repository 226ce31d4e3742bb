"""Citations checked against the page they cite.

Each citation of an answer carries the sentence it supports (``quote``: the quoted sentence
before the marker, or the answer's sentence that holds it) and ``verified``: whether that
sentence is on the cited page of the paper, after the same normalisation of both (case,
punctuation, spacing, hyphenation). A paraphrase counts as verified when the page holds
:data:`PARAPHRASE_SHARE` of its content words. When the quote is on another page of the cited
passage, ``found_on_page`` says which. The offline model's quotes are verbatim, so its
citations verify exactly; real models get the same check. What the user wrote in Zotero is checked
against itself: a note or a comment against its text, a highlight against its page (the
highlighted words are the paper's) or else its comment.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from services.agent.research.markers import find_markers, strip_markers
from services.common.stopwords import stopwords

logger = logging.getLogger(__name__)

PARAPHRASE_SHARE = 0.8


class PageReader(Protocol):
    """(item key, first page, last page[, attachment key: which of the item's PDFs; empty:
    the one Zotero opens]) -> {page: text}."""

    def __call__(
        self, item_key: str, first: int, last: int, /, attachment_key: str = ""
    ) -> Awaitable[dict[int, str]]: ...


# ** and __, backticks, and a * or _ that opens or closes a word (not snake_case's).
_EMPHASIS = re.compile(r"\*\*|__|`+|(?<![\w*])[*_](?=\S)|(?<=\S)[*_](?![\w*])")
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201d]{12,}?)[\"\u201d]\s*$")
# What a paraphrase may drop and still say the same (words under three letters never count).
_STOP = stopwords(
    """were those than also has have had not but may been such each both other all any one more
    most some only over under between did used"""
)


def normalise(text: str) -> str:
    """Lowercase words and numbers joined by single spaces: what two renderings of a sentence
    share (line-end hyphens joined, quotes and punctuation dropped)."""
    text = re.sub(r"(?<=[a-z])-\s*\n\s*(?=[a-z])", "", text)
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def _content_words(text: str) -> set[str]:
    return {w for w in normalise(text).split() if len(w) >= 3 and w not in _STOP}


def quote_before(answer: str, marker_start: int) -> str:
    """The sentence a citation marker supports: the quotation right before it, or else the
    sentence of the answer that ends at it, without its Markdown emphasis and code ticks (a
    bold lead-in like ``**lme4.**`` ends a sentence; the quote goes to the reader's find
    bar, which looks for the page's words)."""
    # Markers before this one end a sentence; markup goes once they are known (code may
    # hold brackets that are not markers).
    head = _EMPHASIS.sub("", strip_markers(answer[:marker_start], "\n")).rstrip()
    quoted = _QUOTED.search(head)
    if quoted:
        return quoted.group(1).strip()
    # The sentence that ends at the marker: back to the previous sentence end or line start.
    start = max(head.rfind("\n"), *(head.rfind(p) for p in (". ", "! ", "? ")))
    return head[start + 1 :].strip(" -*>\t")


def on_page(quote: str, page_text: str) -> bool:
    quoted = normalise(quote)
    if not quoted:
        return False
    page = normalise(page_text)
    if quoted in page:
        return True
    words = _content_words(quote)
    return bool(words) and len(words & set(page.split())) >= PARAPHRASE_SHARE * len(words)


def with_quotes(answer: str, citations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``citations`` (from ``extract_citations``) with the quote each supports, the first
    sentence cited with it when a citation is used more than once."""
    quotes: dict[tuple[int, int], str] = {}
    body = answer.split("# Cited Sources", 1)[0]  # the list of sources quotes nothing
    for marker in find_markers(body):
        for c in citations:
            if c["n"] == marker.n and marker.page in (None, c["page"]):
                quotes.setdefault((marker.n, c["page"]), quote_before(body, marker.start))
    return [{**c, "quote": quotes.get((c["n"], c["page"]), "")} for c in citations]


async def verify(
    citations: list[dict[str, Any]],
    numbered: list[dict[str, Any]],
    read_pages: PageReader | None,
) -> list[dict[str, Any]]:
    """Each citation with ``verified`` (and ``found_on_page`` when the quote is elsewhere in
    the cited passage). Without a page reader, or when the pages cannot be read, ``verified``
    is None: unknown, not false."""
    if read_pages is None:
        return [{**c, "verified": None} for c in citations]
    by_n = {p["n"]: p for p in numbered}
    cache: dict[tuple[str, int, int, str], dict[int, str]] = {}

    async def read(item_key: str, first: int, last: int, attachment: str) -> dict[int, str]:
        key = (item_key, first, last, attachment)
        if key not in cache:
            try:
                # The PDF the evidence came from, when it names one (an item may have several).
                extra = {"attachment_key": attachment} if attachment else {}
                cache[key] = await read_pages(item_key, first, last, **extra)
            except Exception as exc:  # the check is advisory: never fail the answer for it
                logger.warning(
                    "citation check: cannot read %s pp. %d-%d (%s)", item_key, first, last, exc
                )
                cache[key] = {}
        return cache[key]

    out: list[dict[str, Any]] = []
    for c in citations:
        piece = by_n.get(c["n"], {})
        own = piece.get("origin")
        quote = str(c.get("quote") or "")
        if own in ("comment", "note") or (own and not c.get("page")):
            # The user's own words are not on the paper's page: the quote is checked against
            # the comment or note it cites (its text as the index holds it).
            checked = on_page(quote, str(piece.get("text") or "")) if quote else None
            out.append({**c, "verified": checked})
            continue
        first = int(piece.get("page") or c["page"])
        last = max(int(piece.get("page_end") or first), first)
        attachment = str(c.get("attachment_key") or piece.get("attachment_key") or "")
        pages = dict(await read(c["item_key"], first, last, attachment))
        if not first <= c["page"] <= last:
            # A page the passage does not span is read alone, never the run between them: that
            # run could be the whole paper, and read_document stops after MAX_READ_PAGES,
            # maybe before the passage's own pages (where ``found_on_page`` looks).
            pages.update(await read(c["item_key"], c["page"], c["page"], attachment))
        if not pages or not quote:  # unreadable, or nothing quoted to check (a sources line)
            out.append({**c, "verified": None})
            continue
        verified = on_page(quote, pages.get(c["page"], ""))
        if own and not verified:  # a highlight's comment: the annotation's own words
            verified = on_page(quote, str(piece.get("text") or ""))
        entry = {**c, "verified": verified}
        if not verified:
            elsewhere = next((p for p, text in sorted(pages.items()) if on_page(quote, text)), None)
            if elsewhere is not None:
                entry["found_on_page"] = elsewhere
        out.append(entry)
    return out


def page_reader(read_document: Callable[..., Awaitable[dict[str, Any]]]) -> PageReader:
    """A :data:`PageReader` over the library's ``read_document`` tool."""

    async def read(
        item_key: str, first: int, last: int, /, attachment_key: str = ""
    ) -> dict[int, str]:
        result = await read_document(
            item_key=item_key,
            start_page=first,
            end_page=last,
            **({"attachment_key": attachment_key} if attachment_key else {}),
        )
        if result.get("status") != "success":
            return {}
        return {int(p["page"]): str(p["text"]) for p in result.get("pages") or []}

    return read


def library_page_reader(
    library_tools: list[Callable[..., Awaitable[dict[str, Any]]]],
) -> PageReader | None:
    """The page reader over the library tools' ``read_document``, if they have one."""
    for tool in library_tools:
        if getattr(tool, "__name__", "") == "read_document":
            return page_reader(tool)
    return None
