"""The library index over what real Zotero libraries hold besides one journal article with one
PDF: an item with two PDFs (each indexed; a passage found names the PDF it came from, and
reading or citing it opens that one), a book section (its book as venue, its editors not
authors), notes, annotations and attachments that are not PDFs (left out, nothing breaks),
and items trashed or deleted for good (gone from the index at the next sync)."""

from __future__ import annotations

import pathlib
from collections.abc import AsyncIterator

import numpy as np
import pytest
import pytest_asyncio

from services.library.indexer import SyncProgress
from services.library.library import Library
from tests.support import zotero_fixture as zf
from tests.support.stack import research_tools_over_grpc

pytestmark = [pytest.mark.timeout(300)]

LME4 = zf.paper_item_key("lme4__lmer.pdf")
LME4_PDF = zf.paper_attachment_key("lme4__lmer.pdf")
SANDWICH = zf.paper_item_key("sandwich__sandwich-CL.pdf")
CHAPTER = "CHAPTER2"


class UnusedEmbedder:
    """Keyword search only: nothing here may need a vector."""

    async def embed(
        self, texts: list[str], *, is_query: bool = False, background: bool = False
    ) -> np.ndarray:
        raise AssertionError("no embedding in these tests")


async def _sync(library: Library) -> SyncProgress:
    return [SyncProgress(**vars(p)) async for p in library.sync()][-1]  # type: ignore[arg-type]


@pytest.fixture
def zotero_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    papers = zf.default_papers_dir()
    zotero = zf.build_zotero_library(
        tmp_path / "Zotero", files=["lme4__lmer.pdf", "sandwich__sandwich-CL.pdf"], renumbered=True
    )
    zf.add_pdf(zotero, LME4, papers / "zoo__zoo.pdf", title="Supplement")  # a second PDF
    zf.add_item(
        zotero,
        key=CHAPTER,
        item_type="bookSection",
        fields={
            "title": "Applied Econometrics with R, chapter 1",
            "bookTitle": "Applied Econometrics with R",
            "publisher": "Springer",
            "date": "2008",
        },
        creators=["Kleiber, Christian", ("Editor, Erin", "editor")],
        pdfs=[papers / "AER__AER.pdf"],
    )
    html = tmp_path / "snapshot.html"
    html.write_text("<html><body>lme4 snapshot</body></html>")
    zf.add_other_attachment(
        zotero, LME4, link_mode=zf.LINK_MODE_IMPORTED_URL, content_type="text/html", file=html
    )
    zf.add_other_attachment(
        zotero,
        SANDWICH,
        link_mode=zf.LINK_MODE_LINKED_URL,
        content_type="text/html",
        url="https://doi.org/10.18637/jss.v095.i01",
    )
    zf.add_note(zotero, LME4, "<p>bobyqa, then Nelder-Mead</p>")
    zf.add_annotation(zotero, LME4_PDF, text="penalized least squares", comment="PLS")
    return zotero


@pytest_asyncio.fixture
async def library(tmp_path: pathlib.Path, zotero_dir: pathlib.Path) -> AsyncIterator[Library]:
    library = Library(
        index_dir=tmp_path / "index",
        zotero_dir=zotero_dir,
        embedder=UnusedEmbedder(),
        reranker=None,
        embedding_model="none",
        embed_in_background=False,
    )
    await library.open()
    yield library
    await library.aclose()


async def test_both_pdfs_of_an_item_are_indexed_and_a_passage_names_its_own(
    library: Library,
) -> None:
    final = await _sync(library)
    assert (final.added, final.failed, final.no_text) == (4, 0, 0)  # 4 PDFs; no note, no HTML
    status = await library.status()
    assert status["items"] == 3 and status["attachment_states"]["indexed"] == 4
    supplement = zf.zotero_key(f"pdf:{LME4}:zoo__zoo.pdf")
    assert library.store.attachments_of(LME4) == [LME4_PDF, supplement]  # the best one first

    zoo_hits = await library.search("totally ordered observations", k=5, item_keys=[LME4])
    lme4_hits = await library.search("penalized least squares", k=5, item_keys=[LME4])
    assert zoo_hits and {h.attachment_key for h in zoo_hits} == {supplement}
    assert lme4_hits and {h.attachment_key for h in lme4_hits} == {LME4_PDF}
    assert {h.item_key for h in zoo_hits + lme4_hits} == {LME4}

    async with research_tools_over_grpc(library) as tools:
        search_corpus, get_document_toc, read_document = tools
        found = await search_corpus("totally ordered observations", scope=[LME4], k=3)
        hit = found["results"][0]
        assert (hit["item_key"], hit["attachment_key"]) == (LME4, supplement)
        # Reading the passage's page of the PDF it names gives back the passage ...
        page = await read_document(LME4, start_page=hit["page"], attachment_key=supplement)
        assert page["status"] == "success" and page["attachment_key"] == supplement
        opening = " ".join(hit["text"].split()[:8])
        assert opening in " ".join(page["pages"][0]["text"].split())
        # ... while the item alone reads the PDF Zotero opens for it.
        main = await read_document(LME4, start_page=hit["page"])
        assert main["attachment_key"] == LME4_PDF and main["pages"] != page["pages"]
        toc = await get_document_toc(LME4, attachment_key=supplement)
        assert toc["attachment_keys"] == [LME4_PDF, supplement]
        assert toc["page_count"] == library.store.page_count(supplement)
        wrong = await read_document(
            LME4, start_page=1, attachment_key=zf.paper_attachment_key(CHAPTER)
        )
        assert wrong["code"] == "attachment_not_found"


async def test_a_book_section_is_indexed_with_its_book_and_its_author(library: Library) -> None:
    await _sync(library)
    chapter = library.store.item(CHAPTER)
    assert chapter is not None
    assert chapter["item_type"] == "bookSection"
    assert chapter["publication"] == "Applied Econometrics with R"
    assert chapter["authors"] == ["Kleiber, Christian"]  # the editor is not an author
    hits = await library.search("applied econometrics", k=3, item_keys=[CHAPTER])
    assert hits and hits[0].authors == ["Kleiber, Christian"] and hits[0].year == 2008


async def test_trashed_and_deleted_items_leave_the_index(library: Library, zotero_dir) -> None:  # type: ignore[no-untyped-def]
    await _sync(library)
    zf.trash_item(zotero_dir, LME4)
    zf.erase_item(zotero_dir, CHAPTER)
    final = await _sync(library)
    assert (final.removed, final.added, final.updated) == (3, 0, 0)  # lme4's two, the chapter's
    assert library.store.item(LME4) is None and library.store.item(CHAPTER) is None
    hits = await library.search("totally ordered observations penalized least squares", k=20)
    assert {h.item_key for h in hits} <= {SANDWICH}
    status = await library.status()
    assert status["items"] == 1 and status["attachments"] == 1
    zf.restore_item(zotero_dir, LME4)
    back = await _sync(library)
    assert back.added == 2 and library.store.attachments_of(LME4) == [
        LME4_PDF,
        zf.zotero_key(f"pdf:{LME4}:zoo__zoo.pdf"),
    ]
