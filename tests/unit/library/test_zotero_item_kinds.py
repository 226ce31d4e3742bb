"""read_library beyond journal articles with one PDF: another installation's ids, the item
types whose venue lives in a type-specific field, notes and annotations, attachments that are
not PDFs, two PDFs under one item, and items in the trash or deleted for good."""

from __future__ import annotations

import dataclasses
import logging
import pathlib
import sqlite3
import zipfile

import pytest

from services.library.zotero import Creator, LibrarySnapshot, ZoteroItem, read_library
from tests.support import zotero_fixture as zf

PAPERS = ("lme4__lmer.pdf", "sandwich__sandwich-CL.pdf", "AER__AER.pdf", zf.TRASHED_FILE)
LME4 = zf.paper_item_key("lme4__lmer.pdf")


def _build(dest: pathlib.Path, *, renumbered: bool) -> pathlib.Path:
    zotero = zf.build_zotero_library(dest, files=PAPERS, renumbered=renumbered)
    papers = zf.default_papers_dir()
    zf.add_item(
        zotero,
        key="CHAPTER2",
        item_type="bookSection",
        fields={
            "title": "Mixed models in practice",
            "bookTitle": "Handbook of Applied Statistics",
            "publisher": "Springer",
            "date": "2019-05-00 May 2019",
            "DOI": "10.1007/978-3-030-00000-0_7",
        },
        creators=[
            "Bates, Douglas",
            ("Editor, Erin", "editor"),
            ("Author, Book", "bookAuthor"),
            ("Series, Sam", "seriesEditor"),
        ],
        pdfs=[papers / "lme4__lmer.pdf"],
    )
    zf.add_item(
        zotero,
        key="CONFPAP2",
        item_type="conferencePaper",
        fields={
            "title": "Robust standard errors at scale",
            "proceedingsTitle": "Proceedings of the 2020 Joint Statistical Meetings",
            "conferenceName": "JSM 2020",
            "publisher": "ASA",
            "date": "2020-08-03 August 3, 2020",
        },
        creators=["Zeileis, Achim", ("Chair, Session", "editor")],
    )
    zf.add_item(
        zotero,
        key="CONFNAME",
        item_type="conferencePaper",
        fields={"title": "A talk with no proceedings", "conferenceName": "useR! 2021"},
        creators=["Speaker, Sue"],
    )
    zf.add_item(
        zotero,
        key="THESIS23",
        item_type="thesis",
        fields={
            "title": "Ordinal regression models",
            "university": "Technical University of Denmark",
            "date": "2012-00-00 2012",
        },
        creators=["Christensen, Rune Haubo B.", ("Advisor, Anne", "contributor")],
    )
    zf.add_item(
        zotero,
        key="REPORT23",
        item_type="report",
        fields={"title": "Working paper", "institution": "WU Wien", "date": "2004"},
        creators=["Kleiber, Christian"],
    )
    zf.add_item(
        zotero,
        key="EDITED23",
        item_type="book",
        fields={"title": "An edited volume", "publisher": "CRC Press", "date": "2015"},
        creators=[
            ("Editor, One", "editor"),
            ("Editor, Two", "editor"),
            ("Helper, H", "contributor"),
        ],
    )
    zf.add_item(
        zotero,
        key="BOOKAUTH",
        item_type="bookSection",
        fields={"title": "A chapter by the book's author", "bookTitle": "Collected works"},
        creators=[("Author, Book", "bookAuthor")],
    )
    return zotero


@pytest.fixture(scope="module", params=[False, True], ids=["classic-ids", "renumbered-ids"])
def library(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> LibrarySnapshot:
    return read_library(_build(tmp_path_factory.mktemp("zotero"), renumbered=request.param))


def _portable(item: ZoteroItem) -> ZoteroItem:
    """The item without what depends on where and when the library was built."""
    return dataclasses.replace(
        item,
        attachments=tuple(
            dataclasses.replace(
                a, path=pathlib.Path(a.path.name) if a.path else None, date_added=""
            )
            for a in item.attachments
        ),
        date_modified="",
    )


def _ids(zotero: pathlib.Path, table: str, id_column: str, name_column: str) -> dict[str, int]:
    with sqlite3.connect(zotero / "zotero.sqlite") as conn:
        rows = conn.execute(f"SELECT {name_column}, {id_column} FROM {table}").fetchall()
    conn.close()
    return dict(rows)


def test_another_installations_ids_read_as_the_same_library(tmp_path: pathlib.Path) -> None:
    classic = _build(tmp_path / "classic", renumbered=False)
    renumbered = _build(tmp_path / "renumbered", renumbered=True)
    for table, id_column, name_column in (
        ("itemTypesCombined", "itemTypeID", "typeName"),
        ("fieldsCombined", "fieldID", "fieldName"),
        ("creatorTypes", "creatorTypeID", "creatorType"),
    ):
        before = _ids(classic, table, id_column, name_column)
        after = _ids(renumbered, table, id_column, name_column)
        assert set(before) == set(after)
        assert all(before[name] != after[name] for name in before), table  # every id moved
        assert set(before.values()) == set(after.values())  # to another name's classic id
    first, second = read_library(classic), read_library(renumbered)
    assert len(first.items) == len(PAPERS) - 1 + 7
    assert [_portable(i) for i in first.items] == [_portable(i) for i in second.items]
    assert first.collections == second.collections


def test_a_book_section_has_its_book_as_venue_and_its_own_authors(library: LibrarySnapshot) -> None:
    chapter = library.items_by_key()["CHAPTER2"]
    assert chapter.item_type == "bookSection"
    assert chapter.title == "Mixed models in practice"
    assert chapter.publication == "Handbook of Applied Statistics"  # bookTitle, not publisher
    assert (chapter.date, chapter.year) == ("May 2019", 2019)
    assert chapter.doi == "10.1007/978-3-030-00000-0_7"
    assert [c.creator_type for c in chapter.creators] == [
        "author",
        "editor",
        "bookAuthor",
        "seriesEditor",
    ]
    assert chapter.authors == (Creator("Douglas", "Bates", "author"),)
    (pdf,) = chapter.attachments
    assert pdf.parent_key == "CHAPTER2" and pdf.path is not None and pdf.path.is_file()


def test_conference_papers_theses_and_reports(library: LibrarySnapshot) -> None:
    items = library.items_by_key()
    paper = items["CONFPAP2"]
    assert paper.publication == "Proceedings of the 2020 Joint Statistical Meetings"
    assert (paper.date, paper.year) == ("August 3, 2020", 2020)
    assert [c.display for c in paper.authors] == ["Zeileis, Achim"]
    assert items["CONFNAME"].publication == "useR! 2021"  # no proceedings: the conference
    thesis = items["THESIS23"]
    assert thesis.publication == "Technical University of Denmark"  # university -> publisher
    assert thesis.year == 2012
    assert [c.display for c in thesis.authors] == ["Christensen, Rune Haubo B."]  # not the advisor
    assert len(thesis.creators) == 2
    assert items["REPORT23"].publication == "WU Wien"  # institution -> publisher
    assert items["REPORT23"].year == 2004


def test_authors_follow_zoteros_first_creator_rule(library: LibrarySnapshot) -> None:
    items = library.items_by_key()
    assert [c.display for c in items["EDITED23"].authors] == ["Editor, One", "Editor, Two"]
    assert items["BOOKAUTH"].authors == ()  # Zotero shows no creator for it either
    journal = items[LME4]
    assert journal.authors == journal.creators and len(journal.authors) == 4


@pytest.fixture
def small(tmp_path: pathlib.Path) -> pathlib.Path:
    return zf.build_zotero_library(tmp_path / "zotero", files=PAPERS, renumbered=True)


def test_child_notes_and_annotations_are_not_items_a_standalone_note_is(
    small: pathlib.Path,
) -> None:
    before = read_library(small)
    attachment = zf.paper_attachment_key("lme4__lmer.pdf")
    zf.add_note(small, LME4, "<h1>Reading notes</h1><p>bobyqa is the default optimizer</p>")
    standalone = zf.add_note(small, None, "<p>A standalone note about mixed models</p>")
    trashed = zf.add_note(small, LME4, "<p>An old note</p>")
    zf.trash_item(small, trashed)
    zf.add_annotation(small, attachment, text="penalized least squares", comment="key idea")
    zf.add_annotation(small, attachment, text="REML criterion", page=3)
    after = read_library(small)
    papers = [i for i in after.items if i.key != standalone]
    assert [_portable(i) for i in papers] == [_portable(i) for i in before.items]
    assert {i.item_type for i in papers} == {"journalArticle"}
    note = after.items_by_key()[standalone]
    assert (note.item_type, note.title, note.attachments) == (
        "note",
        "A standalone note about mixed models",
        (),
    )
    (pdf,) = after.items_by_key()[LME4].attachments
    assert pdf.key == attachment
    assert len(after.notes) == 2 and len(after.annotations) == 2


def _epub(path: pathlib.Path) -> pathlib.Path:
    with zipfile.ZipFile(path, "w") as epub:
        epub.writestr("mimetype", "application/epub+zip")
        epub.writestr("OEBPS/chapter1.xhtml", "<html><body><p>An EPUB chapter</p></body></html>")
    return path


def test_attachments_that_are_not_pdfs_are_left_out_with_one_log_line(
    small: pathlib.Path, tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    html = tmp_path / "snapshot.html"
    html.write_text("<html><body>A snapshot of the article page</body></html>")
    epub = _epub(tmp_path / "book.epub")
    png = tmp_path / "figure.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    add = zf.add_other_attachment
    add(small, LME4, link_mode=zf.LINK_MODE_IMPORTED_URL, content_type="text/html", file=html)
    add(
        small,
        LME4,
        link_mode=zf.LINK_MODE_IMPORTED_FILE,
        content_type="application/epub+zip",
        file=epub,
        title="EPUB",
    )
    add(
        small,
        LME4,
        link_mode=zf.LINK_MODE_LINKED_URL,
        content_type="text/html",
        url="https://doi.org/10.18637/jss.v067.i01",
        title="DOI link",
    )
    add(
        small,
        None,
        link_mode=zf.LINK_MODE_IMPORTED_FILE,
        content_type="application/epub+zip",
        file=epub,
        title="book.epub",
    )  # a standalone EPUB
    note = zf.add_note(small, LME4, '<p><img data-attachment-key="IMG23456"/></p>')
    add(
        small,
        note,
        link_mode=zf.LINK_MODE_EMBEDDED_IMAGE,
        content_type="image/png",
        file=png,
        title="image",
    )
    # A linked URL to a PDF is no file either.
    add(
        small,
        LME4,
        link_mode=zf.LINK_MODE_LINKED_URL,
        content_type="application/pdf",
        url="https://example.org/lmer.pdf",
        title="PDF link",
    )

    with caplog.at_level(logging.INFO, logger="services.library.zotero"):
        snapshot = read_library(small)
    items = snapshot.items_by_key()
    assert len(items) == len(PAPERS) - 1  # the standalone EPUB is not an item
    (pdf,) = items[LME4].attachments
    assert pdf.key == zf.paper_attachment_key("lme4__lmer.pdf")
    (line,) = [r.getMessage() for r in caplog.records if "not PDF files" in r.getMessage()]
    assert line == (
        "not indexing 6 attachments that are not PDF files (only PDFs are indexed): "
        "2 EPUB, 1 HTML snapshot, 1 image embedded in a note, 2 linked URL"
    )


def test_two_pdfs_under_one_item_come_in_zoteros_best_attachment_order(
    small: pathlib.Path,
) -> None:
    first = zf.paper_attachment_key("lme4__lmer.pdf")
    appendix = zf.add_pdf(small, LME4, zf.default_papers_dir() / "zoo__zoo.pdf", title="Appendix")
    older = zf.add_pdf(
        small,
        LME4,
        zf.default_papers_dir() / "AER__AER.pdf",
        date_added="2001-01-01 00:00:00",  # older than the item's first PDF
    )
    keys = [a.key for a in read_library(small).items_by_key()[LME4].attachments]
    assert keys == [older, first, appendix]  # the oldest first
    # A PDF saved from the item's own URL comes before any other (getBestAttachments).
    zf.set_item_field(small, LME4, "url", "https://www.jstatsoft.org/v67/i01")
    zf.set_item_field(small, appendix, "url", "https://www.jstatsoft.org/v67/i01")
    snapshot = read_library(small)
    attachments = snapshot.items_by_key()[LME4].attachments
    assert [a.key for a in attachments] == [appendix, older, first]
    assert {a.parent_key for a in attachments} == {LME4}
    assert all(a.path is not None and a.path.is_file() for a in attachments)
    assert len({a.path for a in attachments}) == 3


def test_items_in_the_trash_or_deleted_for_good_are_gone(small: pathlib.Path) -> None:
    sandwich = zf.paper_item_key("sandwich__sandwich-CL.pdf")
    aer = zf.paper_item_key("AER__AER.pdf")
    standalone = zf.add_standalone_pdf(small, zf.default_papers_dir() / "zoo__zoo.pdf")
    zf.trash_item(small, standalone)
    zf.trash_item(small, sandwich)  # its PDF is not trashed itself, and not an item either
    zf.add_note(small, aer, "<p>goes with the item</p>")
    zf.erase_item(small, aer)  # the trash emptied: the rows are gone
    snapshot = read_library(small)
    keys = set(snapshot.items_by_key())
    assert keys == {LME4}  # the zoo paper was trashed by the build
    attachment_keys = {a.key for i in snapshot.items for a in i.attachments}
    assert zf.paper_attachment_key("sandwich__sandwich-CL.pdf") not in attachment_keys
    assert standalone not in keys
    with sqlite3.connect(small / "zotero.sqlite") as conn:
        assert conn.execute("SELECT count(*) FROM items WHERE key = ?", (aer,)).fetchone()[0] == 0
        left = conn.execute("SELECT count(*) FROM itemAttachments").fetchone()[0]
    conn.close()
    assert left == 4  # lme4's, sandwich's, zoo's and the standalone PDF
