"""The research tools the search subagent gets: plain async functions whose docstrings are
written for a model. ``make_research_tools`` binds them to a library index.

Every tool returns a JSON-serialisable dict with ``status`` ("success" or "error") so the model
can read failures and recover instead of the run crashing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from services.agent.library import metrics
from services.agent.library.index_store import IndexStore
from services.agent.library.search import LibrarySearch
from services.common.errors import ZocratesError

SEARCH_CORPUS = "search_corpus"
GET_DOCUMENT_TOC = "get_document_toc"
READ_DOCUMENT = "read_document"

MAX_READ_PAGES = 12

Tool = Callable[..., Awaitable[dict[str, Any]]]


def _error(exc: ZocratesError) -> dict[str, Any]:
    return {"status": "error", "code": exc.code, "message": exc.message}


def _counted(tool: str, result: dict[str, Any]) -> dict[str, Any]:
    """``result``, once the call is counted by its status."""
    status = "success" if result.get("status") == "success" else "error"
    metrics.TOOL_CALLS.labels(tool, status).inc()
    return result


def _parse_scope(scope: str | list[str] | None) -> tuple[list[str] | None, str | None]:
    if scope is None or scope == "" or scope == "library":
        return None, None
    if isinstance(scope, str) and scope.startswith("collection:"):
        return None, scope.split(":", 1)[1]
    if isinstance(scope, str):
        return [k.strip() for k in scope.split(",") if k.strip()], None
    return list(scope), None


def make_research_tools(search: LibrarySearch, store: IndexStore) -> list[Tool]:
    """search_corpus, get_document_toc and read_document bound to ``search`` and ``store``."""

    async def search_corpus(
        query: str, scope: str | list[str] = "library", k: int = 10
    ) -> dict[str, Any]:
        """Search the user's Zotero library for passages relevant to a question.

        Call this first for any question about the user's papers, with a focused query in your
        own words (one aspect at a time works better than the whole question). Results come
        from keyword and semantic search combined, best first.

        Args:
            query: What to look for, in natural language.
            scope: "library" for every paper, "collection:<KEY>" for one Zotero collection, or a
                list of item keys (e.g. ["ABCD1234"]) to search only those papers.
            k: How many passages to return (1 to 50).

        Returns:
            {"status": "success", "results": [{"chunk_id", "item_key", "attachment_key",
            "title", "authors", "year", "page", "page_end", "section", "score", "word_count",
            "text"}]}. Cite a passage by its item_key and page; attachment_key names the PDF of
            the item it comes from (a paper may have several: pass it to read_document to read
            the same one). An empty list means nothing in scope matched.
        """
        item_keys, collection = _parse_scope(scope)
        try:
            hits = await search.search(
                query, k=max(1, min(int(k), 50)), item_keys=item_keys, collection_key=collection
            )
        except ZocratesError as exc:
            return _counted(SEARCH_CORPUS, _error(exc))
        result = {
            "status": "success",
            "results": [
                {
                    "chunk_id": h.chunk_id,
                    "item_key": h.item_key,
                    "attachment_key": h.attachment_key,
                    "title": h.title,
                    "authors": h.authors,
                    "year": h.year,
                    "page": h.page_start,
                    "page_end": h.page_end,
                    "section": h.section,
                    "score": h.score,
                    "word_count": h.word_count,
                    "text": h.text,
                }
                for h in hits
            ],
        }
        return _counted(SEARCH_CORPUS, result)

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
        return _counted(
            GET_DOCUMENT_TOC, await asyncio.to_thread(_toc, store, item_key, attachment_key)
        )

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
        return _counted(
            READ_DOCUMENT,
            await asyncio.to_thread(
                _read, store, item_key, section, start_page, end_page, attachment_key
            ),
        )

    search_corpus.__name__ = SEARCH_CORPUS
    get_document_toc.__name__ = GET_DOCUMENT_TOC
    read_document.__name__ = READ_DOCUMENT
    return [search_corpus, get_document_toc, read_document]


def _attachment(
    store: IndexStore, item_key: str, attachment_key: str | None
) -> tuple[dict[str, Any], str, list[str]] | dict[str, Any]:
    """(item, the attachment to read, all its attachments with text) or an error result."""
    item = store.item(item_key)
    if item is None:
        return {
            "status": "error",
            "code": "item_not_found",
            "message": f"No paper with item key {item_key!r} in the library index.",
        }
    attachments = store.attachments_of(item_key)
    if not attachments:
        return {
            "status": "error",
            "code": "no_text",
            "message": f"{item['title']!r} has no indexed full text (no readable PDF).",
        }
    if attachment_key and attachment_key not in attachments:
        return {
            "status": "error",
            "code": "attachment_not_found",
            "message": f"{item['title']!r} has no indexed PDF {attachment_key!r}; its PDFs: "
            + ", ".join(attachments),
        }
    return item, attachment_key or attachments[0], attachments


def _toc(store: IndexStore, item_key: str, attachment_key: str | None = None) -> dict[str, Any]:
    found = _attachment(store, item_key, attachment_key)
    if isinstance(found, dict):
        return found
    item, attachment, attachments = found
    return {
        "status": "success",
        "item_key": item_key,
        "attachment_key": attachment,
        "attachment_keys": attachments,
        "title": item["title"],
        "page_count": store.page_count(attachment),
        "sections": [{"title": t, "level": lvl, "page": p} for t, lvl, p in store.toc(attachment)],
    }


def _read(
    store: IndexStore,
    item_key: str,
    section: str | None,
    start_page: int | None,
    end_page: int | None,
    attachment_key: str | None = None,
) -> dict[str, Any]:
    found = _attachment(store, item_key, attachment_key)
    if isinstance(found, dict):
        return found
    item, attachment, _ = found
    page_count = store.page_count(attachment)
    chosen_section = None
    if start_page is None and section:
        entries = store.toc(attachment)
        wanted = section.strip().lower()
        match = next(
            (i for i, (title, _, _) in enumerate(entries) if title.lower() == wanted),
            next(
                (
                    i
                    for i, (title, _, _) in enumerate(entries)
                    if title.lower().startswith(wanted) or wanted in title.lower()
                ),
                None,
            ),
        )
        if match is None:
            return {
                "status": "error",
                "code": "section_not_found",
                "message": f"No section {section!r}; sections: "
                + "; ".join(t for t, _, _ in entries[:40]),
            }
        chosen_section, level, start_page = entries[match]
        following = [p for t, lvl, p in entries[match + 1 :] if lvl <= level]
        end_page = max(start_page, following[0]) if following else page_count
    if start_page is None:
        start_page = 1
    end_page = end_page or start_page
    if not 1 <= start_page <= page_count or end_page < start_page:
        return {
            "status": "error",
            "code": "invalid_pages",
            "message": f"Pages must be within 1-{page_count} and end_page >= start_page.",
        }
    end_page = min(end_page, page_count, start_page + MAX_READ_PAGES - 1)
    pages = store.page_texts(attachment, start_page, end_page)
    return {
        "status": "success",
        "item_key": item_key,
        "attachment_key": attachment,
        "title": item["title"],
        "section": chosen_section,
        "start_page": start_page,
        "end_page": end_page,
        "word_count": sum(len(t.split()) for _, t in pages),
        "pages": [{"page": p, "text": t} for p, t in pages],
    }
