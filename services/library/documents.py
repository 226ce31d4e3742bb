"""What the research tools read from the index besides search: a paper's table of contents
and the text of a section or page range. Errors are typed (``item_not_found``, ``no_text``,
``attachment_not_found``, ``section_not_found``, ``invalid_pages``) so the agent's tools can
hand them to the model as results it can recover from.
"""

from __future__ import annotations

from typing import Any

from services.common.errors import InvalidArgument, NotFound
from services.library.index_store import IndexStore

MAX_READ_PAGES = 12


def _attachment(
    store: IndexStore, item_key: str, attachment_key: str | None
) -> tuple[dict[str, Any], str, list[str]]:
    """(item, the attachment to read, all its attachments with text)."""
    item = store.item(item_key)
    if item is None:
        raise NotFound(
            f"No paper with item key {item_key!r} in the library index.", code="item_not_found"
        )
    attachments = store.attachments_of(item_key)
    if not attachments:
        raise NotFound(
            f"{item['title']!r} has no indexed full text (no readable PDF).", code="no_text"
        )
    if attachment_key and attachment_key not in attachments:
        raise NotFound(
            f"{item['title']!r} has no indexed PDF {attachment_key!r}; its PDFs: "
            + ", ".join(attachments),
            code="attachment_not_found",
        )
    return item, attachment_key or attachments[0], attachments


def table_of_contents(
    store: IndexStore, item_key: str, attachment_key: str | None = None
) -> dict[str, Any]:
    """A paper's sections and the page each starts on, in one of its PDFs (its main one when
    ``attachment_key`` is empty)."""
    item, attachment, attachments = _attachment(store, item_key, attachment_key)
    return {
        "item_key": item_key,
        "attachment_key": attachment,
        "attachment_keys": attachments,
        "title": item["title"],
        "page_count": store.page_count(attachment),
        "sections": [{"title": t, "level": lvl, "page": p} for t, lvl, p in store.toc(attachment)],
    }


def read_document(
    store: IndexStore,
    item_key: str,
    section: str | None,
    start_page: int | None,
    end_page: int | None,
    attachment_key: str | None = None,
) -> dict[str, Any]:
    """The text of one section (by its title from the table of contents: exact, else a
    prefix or a part of it) or a page range, at most :data:`MAX_READ_PAGES` pages."""
    item, attachment, _ = _attachment(store, item_key, attachment_key)
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
            raise NotFound(
                f"No section {section!r}; sections: " + "; ".join(t for t, _, _ in entries[:40]),
                code="section_not_found",
            )
        chosen_section, level, start_page = entries[match]
        following = [p for t, lvl, p in entries[match + 1 :] if lvl <= level]
        end_page = max(start_page, following[0]) if following else page_count
    if start_page is None:
        start_page = 1
    end_page = end_page or start_page
    if not 1 <= start_page <= page_count or end_page < start_page:
        raise InvalidArgument(
            f"Pages must be within 1-{page_count} and end_page >= start_page.",
            code="invalid_pages",
        )
    end_page = min(end_page, page_count, start_page + MAX_READ_PAGES - 1)
    pages = store.page_texts(attachment, start_page, end_page)
    return {
        "item_key": item_key,
        "attachment_key": attachment,
        "title": item["title"],
        "section": chosen_section,
        "start_page": start_page,
        "end_page": end_page,
        "word_count": sum(len(t.split()) for _, t in pages),
        "pages": [{"page": p, "text": t} for p, t in pages],
    }
