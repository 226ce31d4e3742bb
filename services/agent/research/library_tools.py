"""The research tools the search subagent gets: plain async functions whose docstrings are
written for a model, over the library service's client (``make_library_tools``).

Every tool returns a JSON-serialisable dict with ``status`` ("success" or "error") so the model
can read failures and recover instead of the run crashing: a library error (an unknown item, a
section that is not there, the library service unreachable) comes back as a result with its
stable ``code`` and message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from prometheus_client import Counter

from services.common.errors import ZocratesError
from services.common.metrics import REGISTRY

SEARCH_CORPUS = "search_corpus"
GET_DOCUMENT_TOC = "get_document_toc"
READ_DOCUMENT = "read_document"

MAX_READ_PAGES = 12  # the library service's limit (services/library/documents.py)

Tool = Callable[..., Awaitable[dict[str, Any]]]

TOOL_CALLS = Counter(
    "zocrates_library_tool_calls_total",
    "Retrieval tool calls of research turns, by tool (search_corpus, get_document_toc, "
    "read_document) and status ('success', 'error').",
    ["tool", "status"],
    registry=REGISTRY,
)


class Library(Protocol):
    """What the tools ask of the library service (``LibraryClient``)."""

    async def search(
        self,
        query: str,
        *,
        k: int = 10,
        item_keys: list[str] | None = None,
        collection_key: str | None = None,
        chunk_ids: bool = False,
        kinds: list[str] | None = None,
    ) -> tuple[list[dict[str, Any]], float]: ...

    async def table_of_contents(
        self, item_key: str, attachment_key: str = ""
    ) -> dict[str, Any]: ...

    async def read_document(
        self,
        item_key: str,
        *,
        section: str = "",
        start_page: int = 0,
        end_page: int = 0,
        attachment_key: str = "",
    ) -> dict[str, Any]: ...


def _error(exc: ZocratesError) -> dict[str, Any]:
    return {"status": "error", "code": exc.code, "message": exc.message}


def _counted(tool: str, result: dict[str, Any]) -> dict[str, Any]:
    """``result``, once the call is counted by its status."""
    status = "success" if result.get("status") == "success" else "error"
    TOOL_CALLS.labels(tool, status).inc()
    return result


def _parse_scope(scope: str | list[str] | None) -> tuple[list[str] | None, str | None]:
    if scope is None or scope == "" or scope == "library":
        return None, None
    if isinstance(scope, str) and scope.startswith("collection:"):
        return None, scope.split(":", 1)[1]
    if isinstance(scope, str):
        return [k.strip() for k in scope.split(",") if k.strip()], None
    return list(scope), None


# search_corpus's ``of``: which passages (the library service's kinds).
SEARCH_OF = {
    "all": None,
    "papers": ["text"],
    "mine": ["highlight", "comment", "note"],
}


def _page(value: int | None) -> int:
    return int(value) if value else 0


def make_library_tools(library: Library) -> list[Tool]:
    """search_corpus, get_document_toc and read_document over ``library``."""

    async def search_corpus(
        query: str, scope: str | list[str] = "library", k: int = 10, of: str = "all"
    ) -> dict[str, Any]:
        """Search the user's Zotero library for passages relevant to a question.

        Call this first for any question about the user's papers, with a focused query in your
        own words (one aspect at a time works better than the whole question). Results come
        from keyword and semantic search combined, best first. Besides the papers' text, the
        library holds what the user wrote in Zotero: their highlights (with comments), their
        comments on pages, and their notes.

        Args:
            query: What to look for, in natural language.
            scope: "library" for every paper, "collection:<KEY>" for one Zotero collection, or a
                list of item keys (e.g. ["ABCD1234"]) to search only those papers.
            k: How many passages to return (1 to 50).
            of: "all" (default), "papers" (only the papers' text) or "mine" (only the user's
                highlights, comments and notes: for "what did I note / highlight / write").

        Returns:
            {"status": "success", "results": [{"chunk_id", "item_key", "attachment_key",
            "title", "authors", "year", "page", "page_end", "section", "score", "word_count",
            "text", "kind"}]}. kind is "text" (the paper), "highlight", "comment" or "note"
            (the user's own; with "source_key", the annotation or note, and "note_title").
            Cite a passage by its item_key and page (a note has no page); attachment_key names
            the PDF of the item it comes from (a paper may have several: pass it to
            read_document to read the same one). An empty list means nothing in scope matched.
        """
        item_keys, collection = _parse_scope(scope)
        try:
            hits, _ = await library.search(
                query,
                k=max(1, min(int(k), 50)),
                item_keys=item_keys,
                collection_key=collection,
                chunk_ids=True,
                kinds=SEARCH_OF.get(of),
            )
        except ZocratesError as exc:
            return _counted(SEARCH_CORPUS, _error(exc))
        return _counted(SEARCH_CORPUS, {"status": "success", "results": hits})

    async def get_document_toc(item_key: str, attachment_key: str | None = None) -> dict[str, Any]:
        """Show a paper's table of contents: its sections and the page each starts on.

        Call this before read_document when you need a specific part of a paper (methods,
        results, a numbered section) and do not know where it is.

        Args:
            item_key: The paper's Zotero item key, as returned by search_corpus.
            attachment_key: Which of the paper's PDFs, as returned by search_corpus; leave it
                out for the paper's main PDF.

        Returns:
            {"status": "success", "item_key", "attachment_key", "attachment_keys", "title",
            "page_count", "sections": [{"title", "level", "page"}]}; attachment_keys lists
            every PDF of the paper, main one first.
        """
        try:
            toc = await library.table_of_contents(item_key, attachment_key or "")
        except ZocratesError as exc:
            return _counted(GET_DOCUMENT_TOC, _error(exc))
        return _counted(GET_DOCUMENT_TOC, {"status": "success", **toc})

    async def read_document(
        item_key: str,
        section: str | None = None,
        start_page: int | None = None,
        end_page: int | None = None,
        attachment_key: str | None = None,
    ) -> dict[str, Any]:
        """Read the full text of part of a paper: one section, or a page range.

        Use it when a search result is promising but cut short, or to read a section found
        with get_document_toc. Reads at most 12 pages at a time.

        Args:
            item_key: The paper's Zotero item key.
            section: A section title from get_document_toc (matched case-insensitively, a
                prefix is enough), e.g. "3 Model fitting". Ignored when pages are given.
            start_page: First page to read (1-based), if reading by pages.
            end_page: Last page to read (inclusive); defaults to start_page.
            attachment_key: Which of the paper's PDFs to read, as returned by search_corpus
                (page numbers are that PDF's); leave it out for the paper's main PDF.

        Returns:
            {"status": "success", "item_key", "attachment_key", "title", "section",
            "start_page", "end_page", "word_count", "pages": [{"page", "text"}]}.
        """
        try:
            text = await library.read_document(
                item_key,
                section=section or "",
                start_page=_page(start_page),
                end_page=_page(end_page),
                attachment_key=attachment_key or "",
            )
        except ZocratesError as exc:
            return _counted(READ_DOCUMENT, _error(exc))
        return _counted(READ_DOCUMENT, {"status": "success", **text})

    search_corpus.__name__ = SEARCH_CORPUS
    get_document_toc.__name__ = GET_DOCUMENT_TOC
    read_document.__name__ = READ_DOCUMENT
    return [search_corpus, get_document_toc, read_document]
