"""What the researcher wrote in Zotero, read and indexed: annotations of every type, child and
standalone notes, in the trash or not, and a sync that writes only what changed."""

from __future__ import annotations

import pathlib

import pytest

from services.library import index_writes as writes
from services.library import own_reading
from services.library.index_store import IndexStore
from services.library.zotero import note_text, read_library
from tests.support import zotero_fixture as zf

PAPERS = ("lme4__lmer.pdf", "sandwich__sandwich-CL.pdf", zf.TRASHED_FILE)
LME4 = zf.paper_item_key("lme4__lmer.pdf")
LME4_PDF = zf.paper_attachment_key("lme4__lmer.pdf")
SANDWICH = zf.paper_item_key("sandwich__sandwich-CL.pdf")
SANDWICH_PDF = zf.paper_attachment_key("sandwich__sandwich-CL.pdf")


@pytest.fixture
def zotero(tmp_path: pathlib.Path) -> pathlib.Path:
    return zf.build_zotero_library(tmp_path / "zotero", files=PAPERS)


def test_every_annotation_type_is_read_with_its_page_comment_colour_and_tags(
    zotero: pathlib.Path,
) -> None:
    add = zf.add_annotation
    highlight = add(
        zotero, LME4_PDF, text="penalized least squares", comment="key idea", page=7,
        page_label="6", color="#ff6666", tags=("method",),
    )  # fmt: skip
    underline = add(zotero, LME4_PDF, text="REML criterion", page=3, annotation_type="underline")
    sticky = add(zotero, LME4_PDF, comment="Compare with nlme's defaults", annotation_type="note")
    typed = add(zotero, SANDWICH_PDF, comment="HC3 here", page=2, annotation_type="text")
    image = add(zotero, SANDWICH_PDF, comment="Table 2: the estimators", annotation_type="image")
    ink = add(zotero, SANDWICH_PDF, annotation_type="ink")
    epub_like = add(zotero, LME4_PDF, comment="no page", position='{"type":"CssSelector"}')

    snapshot = read_library(zotero)
    by_key = {a.key: a for a in snapshot.annotations}
    assert set(by_key) == {highlight, underline, sticky, typed, image, ink, epub_like}
    h = by_key[highlight]
    assert (h.annotation_type, h.text, h.comment, h.page, h.page_label, h.color, h.tags) == (
        "highlight", "penalized least squares", "key idea", 7, "6", "#ff6666", ("method",),
    )  # fmt: skip
    assert (h.attachment_key, h.item_key) == (LME4_PDF, LME4)
    assert h.rects == ((72.0, 700.0, 300.0, 712.0),)
    assert by_key[underline].annotation_type == "underline"
    assert by_key[typed].item_key == SANDWICH
    assert by_key[epub_like].page is None

    writings = {w.key: w for w in own_reading.writings(snapshot)}
    assert writings[ink].passages == ()  # an ink stroke without a comment: no words to search
    kinds = {k: w.kind for k, w in writings.items() if w.passages}
    assert kinds == {
        highlight: "highlight",
        underline: "highlight",
        sticky: "comment",
        typed: "comment",
        image: "comment",
        epub_like: "comment",
    }
    (passage,) = next(w for w in own_reading.writings(snapshot) if w.key == highlight).passages
    assert passage == own_reading.Passage("penalized least squares.\n\nMy comment: key idea", 7)


def test_annotations_of_trashed_items_and_attachments_are_out(zotero: pathlib.Path) -> None:
    kept = zf.add_annotation(zotero, LME4_PDF, text="kept")
    gone = zf.add_annotation(zotero, SANDWICH_PDF, text="gone with its item")
    trashed = zf.add_annotation(zotero, LME4_PDF, text="trashed itself")
    zf.trash_item(zotero, SANDWICH)
    zf.trash_item(zotero, trashed)
    keys = {a.key for a in read_library(zotero).annotations}
    assert kept in keys and gone not in keys and trashed not in keys


def test_child_and_standalone_notes_their_text_title_and_scope(zotero: pathlib.Path) -> None:
    child = zf.add_note(
        zotero, LME4, "<h1>Reading notes</h1><p>bobyqa is the <b>default</b> optimizer</p>"
        "<ul><li>check nloptwrap</li><li>REML &amp; ML</li></ul>",
    )  # fmt: skip
    standalone = zf.add_note(
        zotero, None, "<p>Ideas for the mixed models chapter</p>", collections=("Mixed models",)
    )
    trashed = zf.add_note(zotero, LME4, "<p>An old note</p>")
    zf.trash_item(zotero, trashed)
    orphaned = zf.add_note(zotero, SANDWICH, "<p>goes with its item</p>")
    zf.trash_item(zotero, SANDWICH)

    snapshot = read_library(zotero)
    notes = {n.key: n for n in snapshot.notes}
    assert set(notes) == {child, standalone}
    assert notes[child].text == (
        "Reading notes\n\nbobyqa is the default optimizer\n\n- check nloptwrap\n\n- REML & ML"
    )
    assert notes[child].parent_key == LME4 and notes[child].title.startswith("Reading notes")
    assert orphaned not in notes
    # A standalone note is an item of its own, filed in its collection.
    item = snapshot.items_by_key()[standalone]
    assert item.item_type == "note" and item.title.startswith("Ideas for the mixed models")
    assert item.collection_keys == (zf.collection_key("Mixed models"),)
    assert item.attachments == ()
    writings = {w.key: w for w in own_reading.writings(snapshot)}
    assert writings[child].item_key == LME4  # in its item's scope
    assert writings[standalone].item_key == standalone
    assert all(p.page == 0 for p in writings[child].passages)


def test_note_text_keeps_paragraphs_and_drops_markup() -> None:
    html = (
        '<div data-schema-version="9"><h2>Summary</h2><p>First&nbsp;line<br>second line</p>'
        "<script>alert(1)</script><style>p{}</style>"
        '<p><span class="highlight" data-annotation="%7B%7D">"quoted text"</span> '
        '<span class="citation">(Bates, 2015, p. 3)</span></p></div>'
    )
    assert note_text(html) == (
        'Summary\n\nFirst line\n\nsecond line\n\n"quoted text" (Bates, 2015, p. 3)'
    )
    assert note_text("") == ""


def test_a_sync_writes_only_what_changed(zotero: pathlib.Path, tmp_path: pathlib.Path) -> None:
    store = IndexStore(tmp_path / "index.sqlite3")
    first = zf.add_annotation(zotero, LME4_PDF, text="penalized least squares", comment="idea")
    zf.add_note(zotero, LME4, "<p>bobyqa is the default optimizer of glmer</p>")

    def sync() -> own_reading.Changes:
        snapshot = read_library(zotero)
        with store.writer() as conn:  # the items, as a sync writes them first
            writes.replace_metadata(conn, snapshot, removed_attachments=(), missing_attachments=())
        return own_reading.sync(store, own_reading.writings(snapshot))

    assert sync() == own_reading.Changes(added=2, chunks_written=2)
    assert sync() == own_reading.Changes()  # nothing changed: nothing written
    zf.set_annotation_comment(zotero, first, "the key idea of the paper")
    second = zf.add_annotation(zotero, LME4_PDF, text="sparse Cholesky factor", page=4)
    assert sync() == own_reading.Changes(added=1, changed=1, chunks_written=2)
    assert store.kind_counts() == {"text": 0, "highlight": 2, "comment": 0, "note": 1}

    ids = [cid for cid, _ in store.keyword_search('"cholesky"', limit=5, item_keys=None)]
    (row,) = store.chunks_by_id(ids).values()
    assert row["kind"] == "highlight" and row["attachment_key"] == second
    assert row["details"]["attachment_key"] == LME4_PDF and row["page_start"] == 4
    assert store.term_df(["choleski", "cholesky"])  # counted for the keyword pruning

    zf.erase_item(zotero, first)
    assert sync() == own_reading.Changes(removed=1)
    assert store.keyword_search('"key" AND "idea"', limit=5, item_keys=None) == []
    assert store.keyword_search('"optimizer"', limit=5, item_keys=None, kinds=["note"])
    assert not store.keyword_search('"optimizer"', limit=5, item_keys=None, kinds=["text"])
