"""read_library on a Zotero-shaped data directory built from the 38 real test PDFs."""

from __future__ import annotations

import pathlib
import re
import shutil
import sqlite3
from collections.abc import Iterator

import pypdfium2
import pytest

from services.common.errors import InvalidArgument, NotFound
from services.library import zotero as zotero_module
from services.library.zotero import (
    Creator,
    LibrarySnapshot,
    ZoteroItem,
    parse_year,
    read_library,
)
from tests.support.zotero_fixture import (
    TRASHED_FILE,
    Paper,
    add_group_library,
    add_journal_article,
    add_linked_pdf,
    add_standalone_pdf,
    build_zotero_library,
    collection_key,
    default_papers_dir,
    every_paper_library,
    paper_attachment_key,
    paper_item_key,
    read_manifest,
    remove_attachment_file,
    restore_item,
    set_item_field,
    touch_attachment,
    trash_collection,
    trash_item,
    write_ft_cache,
)

ZOTERO_KEY = re.compile(r"^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$")


@pytest.fixture(scope="module")
def papers() -> list[Paper]:
    return read_manifest()


@pytest.fixture(scope="module")
def zotero_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """The whole test library, built once: 38 papers, the zoo paper in the trash."""
    return build_zotero_library(tmp_path_factory.mktemp("zotero"))


@pytest.fixture(scope="module")
def snapshot(zotero_dir: pathlib.Path) -> LibrarySnapshot:
    return read_library(zotero_dir)


@pytest.fixture
def small_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    """A three-paper library a test may change."""
    return build_zotero_library(tmp_path / "zotero", limit=3)


def item_for(snapshot: LibrarySnapshot, file: str) -> ZoteroItem:
    return snapshot.items_by_key()[paper_item_key(file)]


def test_every_paper_but_the_trashed_one_is_an_item(
    snapshot: LibrarySnapshot, papers: list[Paper]
) -> None:
    assert len(papers) == 38
    assert len(snapshot.items) == 37
    expected = {paper_item_key(p.file) for p in papers if p.file != TRASHED_FILE}
    assert {item.key for item in snapshot.items} == expected
    assert paper_item_key(TRASHED_FILE) not in snapshot.items_by_key()
    assert all(ZOTERO_KEY.match(item.key) for item in snapshot.items)


def test_metadata_matches_the_manifest(snapshot: LibrarySnapshot, papers: list[Paper]) -> None:
    for paper in papers:
        if paper.file == TRASHED_FILE:
            continue
        item = item_for(snapshot, paper.file)
        assert item.item_type == "journalArticle"
        assert item.library_id == 1
        assert item.library_name == "My Library"
        assert item.title == paper.title
        assert tuple(c.display for c in item.creators) == paper.creators  # in Zotero's order
        assert {c.creator_type for c in item.creators} == {"author"}
        assert item.year == paper.year
        assert item.date == str(paper.year)
        assert item.publication == paper.publication
        assert item.doi is None and item.abstract is None
        assert re.match(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$", item.date_modified)


def test_names_with_accents_and_many_authors(snapshot: LibrarySnapshot) -> None:
    brms = item_for(snapshot, "brms__brms_overview.pdf")
    assert brms.creators == (Creator("Paul-Christian", "Bürkner", "author"),)
    tutorial = item_for(snapshot, "bridgesampling__bridgesampling_tutorial.pdf")
    assert len(tutorial.creators) == 10
    assert tutorial.creators[0].display == "Gronau, Quentin F."
    assert tutorial.creators[-1].display == "Steingroever, Helen"


def test_each_item_has_its_stored_pdf(snapshot: LibrarySnapshot, zotero_dir: pathlib.Path) -> None:
    papers_dir = default_papers_dir()
    for item in snapshot.items:
        (attachment,) = item.attachments
        assert attachment.parent_key == item.key
        assert attachment.link_mode == 0
        assert attachment.content_type == "application/pdf"
        assert attachment.ft_cache is None
        assert attachment.path is not None and attachment.path.is_file()
        assert attachment.path.parent == zotero_dir / "storage" / attachment.key
        original = papers_dir / attachment.path.name
        assert attachment.path.read_bytes() == original.read_bytes()


def test_collections_and_recursive_membership(snapshot: LibrarySnapshot) -> None:
    by_name = {c.name: c for c in snapshot.collections}
    assert set(by_name) == {"Mixed models", "Bayesian", "Econometrics"}
    mixed, bayesian = by_name["Mixed models"], by_name["Bayesian"]
    assert mixed.parent_key is None and by_name["Econometrics"].parent_key is None
    assert bayesian.parent_key == mixed.key == collection_key("Mixed models")

    brms = {paper_item_key(f) for f in ("brms__brms_multilevel.pdf", "brms__brms_overview.pdf")}
    direct = {paper_item_key(f) for f in ("lme4__lmer.pdf", "ordinal__clm_article.pdf")}
    assert snapshot.collection_item_keys(bayesian.key) == brms
    assert snapshot.collection_item_keys(mixed.key, recursive=False) == direct
    assert snapshot.collection_item_keys(mixed.key) == direct | brms

    econometrics = snapshot.collection_item_keys(by_name["Econometrics"].key)
    assert len(econometrics) == 6  # three sandwich papers, lmtest, AER, strucchange
    assert paper_item_key("AER__AER.pdf") in econometrics
    assert item_for(snapshot, "lme4__lmer.pdf").collection_keys == (mixed.key,)
    assert item_for(snapshot, "dbscan__dbscan.pdf").collection_keys == ()


def test_tags(snapshot: LibrarySnapshot) -> None:
    assert item_for(snapshot, "lme4__lmer.pdf").tags == ("lme4", "R", "r-cran-lme4")


def test_keys_are_stable_across_builds(tmp_path: pathlib.Path) -> None:
    first = read_library(build_zotero_library(tmp_path / "a", limit=2))
    second = read_library(build_zotero_library(tmp_path / "b", limit=2))
    assert [i.key for i in first.items] == [i.key for i in second.items]
    assert [i.attachments[0].key for i in first.items] == [
        paper_attachment_key("AER__AER.pdf"),
        paper_attachment_key("RcppArmadillo__RcppArmadillo-intro.pdf"),
    ]


def test_trashed_attachments_and_collections_are_left_out(small_dir: pathlib.Path) -> None:
    file = "AER__AER.pdf"
    trash_item(small_dir, paper_attachment_key(file))
    trash_collection(small_dir, collection_key("Econometrics"))
    snapshot = read_library(small_dir)
    item = item_for(snapshot, file)
    assert item.attachments == ()
    assert item.collection_keys == ()
    assert "Econometrics" not in {c.name for c in snapshot.collections}


def test_a_restored_item_is_back_with_its_attachment(small_dir: pathlib.Path) -> None:
    file = "AER__AER.pdf"
    trash_item(small_dir, paper_item_key(file))
    assert paper_item_key(file) not in read_library(small_dir).items_by_key()
    restore_item(small_dir, paper_item_key(file))
    assert item_for(read_library(small_dir), file).attachments


def test_the_benchmark_library_has_every_paper(tmp_path: pathlib.Path) -> None:
    trashed = build_zotero_library(tmp_path / "a", files=[TRASHED_FILE, "AER__AER.pdf"])
    assert paper_item_key(TRASHED_FILE) not in read_library(trashed).items_by_key()
    restored = read_library(every_paper_library(trashed)).items_by_key()  # built earlier
    fresh = read_library(every_paper_library(tmp_path / "b")).items_by_key()
    assert paper_item_key(TRASHED_FILE) in restored
    assert len(fresh) == 38 and paper_item_key(TRASHED_FILE) in fresh


def test_trashing_a_parent_collection_hides_its_subcollection(small_dir: pathlib.Path) -> None:
    trash_collection(small_dir, collection_key("Mixed models"))
    assert {c.name for c in read_library(small_dir).collections} == {"Econometrics"}


def test_standalone_pdf_is_an_item_of_its_own(small_dir: pathlib.Path) -> None:
    pdf = default_papers_dir() / "zoo__zoo.pdf"
    key = add_standalone_pdf(small_dir, pdf)
    item = read_library(small_dir).items_by_key()[key]
    assert item.item_type == "attachment"
    assert item.title == "zoo__zoo.pdf"
    assert item.creators == () and item.year is None
    (attachment,) = item.attachments
    assert attachment.key == key and attachment.parent_key is None
    assert attachment.path == small_dir / "storage" / key / "zoo__zoo.pdf"
    assert attachment.path.is_file()


def test_linked_file_with_absolute_path(small_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    linked = tmp_path / "elsewhere" / "linked.pdf"
    linked.parent.mkdir()
    shutil.copyfile(default_papers_dir() / "zoo__zoo.pdf", linked)
    parent = paper_item_key("AER__AER.pdf")
    key = add_linked_pdf(small_dir, parent, str(linked))
    attachments = read_library(small_dir).items_by_key()[parent].attachments
    linked_attachment = next(a for a in attachments if a.key == key)
    assert linked_attachment.link_mode == 2
    assert linked_attachment.parent_key == parent
    assert linked_attachment.path == linked


def test_base_directory_relative_path_needs_the_base_directory(
    small_dir: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    parent = paper_item_key("AER__AER.pdf")
    key = add_linked_pdf(small_dir, parent, "attachments:Papers/2008/aer.pdf")
    escaping = add_linked_pdf(small_dir, parent, "attachments:../outside.pdf")

    def linked(snapshot: LibrarySnapshot, wanted: str) -> pathlib.Path | None:
        return next(a.path for a in snapshot.items_by_key()[parent].attachments if a.key == wanted)

    without = read_library(small_dir)
    assert linked(without, key) is None
    base = tmp_path / "Zotero base"
    with_base = read_library(small_dir, base_attachment_dir=base)
    assert linked(with_base, key) == base / "Papers" / "2008" / "aer.pdf"
    assert linked(with_base, escaping) is None


def test_full_text_cache_and_missing_file(small_dir: pathlib.Path) -> None:
    item_key = paper_item_key("AER__AER.pdf")
    cache = write_ft_cache(small_dir, item_key, "Applied Econometrics with R")
    removed = remove_attachment_file(small_dir, item_key)
    (attachment,) = read_library(small_dir).items_by_key()[item_key].attachments
    assert (
        attachment.ft_cache == cache == small_dir / "storage" / attachment.key / ".zotero-ft-cache"
    )
    assert attachment.path == removed[0]
    assert not attachment.path.exists()  # the reader reports where the file should be


def test_touch_changes_the_bytes_but_not_the_pdf(small_dir: pathlib.Path) -> None:
    item_key = paper_item_key("AER__AER.pdf")
    before = read_library(small_dir).items_by_key()[item_key]
    path = before.attachments[0].path
    assert path is not None
    old_bytes = path.read_bytes()
    touch_attachment(small_dir, item_key)
    touch_attachment(small_dir, item_key)
    after = read_library(small_dir).items_by_key()[item_key]
    new_bytes = path.read_bytes()
    assert new_bytes != old_bytes and new_bytes.startswith(old_bytes)
    assert after.date_modified > before.date_modified
    assert len(pypdfium2.PdfDocument(new_bytes)) == len(pypdfium2.PdfDocument(old_bytes))


def test_doi_and_abstract_fields(small_dir: pathlib.Path) -> None:
    aer = paper_item_key("AER__AER.pdf")
    eigen = paper_item_key("RcppEigen__RcppEigen-Introduction.pdf")
    set_item_field(small_dir, aer, "DOI", "10.1007/978-0-387-77318-6")
    set_item_field(small_dir, aer, "abstractNote", "Errata and a vignette.")
    set_item_field(small_dir, eigen, "extra", "tex.ids: eigen\nDOI: 10.18637/jss.v052.i05")
    items = read_library(small_dir).items_by_key()
    assert items[aer].doi == "10.1007/978-0-387-77318-6"
    assert items[aer].abstract == "Errata and a vignette."
    assert items[eigen].doi == "10.18637/jss.v052.i05"  # the Extra-field convention


def test_group_library_items(small_dir: pathlib.Path) -> None:
    library_id = add_group_library(small_dir, group_id=4242, name="Stats reading group")
    key = add_journal_article(
        small_dir,
        key="GRP2ITEM",
        title="zoo: An S3 Class and Methods for Indexed Totally Ordered Observations",
        creators=["Zeileis, Achim", "Grothendieck, Gabor", "R Core Team"],
        year=2005,
        publication="Journal of Statistical Software",
        library_id=library_id,
        pdf=default_papers_dir() / "zoo__zoo.pdf",
    )
    item = read_library(small_dir).items_by_key()[key]
    assert item.library_id == library_id != 1
    assert item.library_name == "Stats reading group"
    assert item.creators[-1] == Creator("", "R Core Team", "author")
    assert [c.display for c in item.creators][-1] == "R Core Team"
    assert item.attachments[0].path is not None and item.attachments[0].path.is_file()


def _file_state(db: pathlib.Path) -> tuple[bytes, int, list[str]]:
    return db.read_bytes(), db.stat().st_mtime_ns, sorted(p.name for p in db.parent.iterdir())


@pytest.fixture
def writer(small_dir: pathlib.Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(small_dir / "zotero.sqlite", isolation_level=None)
    yield conn
    conn.close()


def test_reads_while_another_connection_holds_a_write_transaction(
    small_dir: pathlib.Path, writer: sqlite3.Connection
) -> None:
    db = small_dir / "zotero.sqlite"
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE itemDataValues SET value = 'uncommitted' WHERE value LIKE 'Applied%'")
    before = _file_state(db)
    snapshot = read_library(small_dir)
    assert _file_state(db) == before
    item = snapshot.items_by_key()[paper_item_key("AER__AER.pdf")]
    assert item.title.startswith("Applied Econometrics")  # the last committed state
    writer.execute("ROLLBACK")


def test_reads_while_zotero_holds_its_exclusive_lock(
    small_dir: pathlib.Path, writer: sqlite3.Connection
) -> None:
    """Zotero 7 runs with locking_mode=EXCLUSIVE: after a write nobody else can open the file
    through SQLite, not even read-only. Copying the bytes still works."""
    db = small_dir / "zotero.sqlite"
    writer.execute("PRAGMA locking_mode=EXCLUSIVE")
    writer.execute(
        "UPDATE itemDataValues SET value = 'Committed title' WHERE value LIKE 'Applied%'"
    )
    reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        reader.execute("SELECT count(*) FROM items").fetchone()
    reader.close()
    before = _file_state(db)
    snapshot = read_library(small_dir)
    assert _file_state(db) == before
    assert snapshot.items_by_key()[paper_item_key("AER__AER.pdf")].title == "Committed title"


def test_reads_commits_still_in_the_write_ahead_log(
    small_dir: pathlib.Path, writer: sqlite3.Connection
) -> None:
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("UPDATE itemDataValues SET value = 'From the WAL' WHERE value LIKE 'Applied%'")
    wal = small_dir / "zotero.sqlite-wal"
    assert wal.stat().st_size > 0
    wal_before = wal.read_bytes()
    snapshot = read_library(small_dir)
    assert snapshot.items_by_key()[paper_item_key("AER__AER.pdf")].title == "From the WAL"
    assert wal.read_bytes() == wal_before


def test_missing_database_is_not_found(tmp_path: pathlib.Path) -> None:
    with pytest.raises(NotFound) as caught:
        read_library(tmp_path)
    assert caught.value.code == "zotero_db_not_found"
    assert str(tmp_path / "zotero.sqlite") in caught.value.message


@pytest.mark.parametrize("kind", ["text", "other-sqlite", "empty"])
def test_a_file_that_is_not_a_zotero_database(tmp_path: pathlib.Path, kind: str) -> None:
    db = tmp_path / "zotero.sqlite"
    if kind == "text":
        db.write_text("this is not a database, it is a note\n" * 200)
    elif kind == "other-sqlite":
        with sqlite3.connect(db) as conn:
            conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)")
        conn.close()
    else:
        db.touch()
    with pytest.raises(InvalidArgument) as caught:
        read_library(tmp_path)
    assert caught.value.code == "not_a_zotero_db"
    assert str(db) in caught.value.message


@pytest.mark.parametrize(
    ("stored", "year"),
    [
        ("2008-00-00 2008", 2008),
        ("1999-03-00 March 1999", 1999),
        ("0000-00-00 Spring 2001", 2001),
        ("0000-00-00 Spring", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_year(stored: str | None, year: int | None) -> None:
    assert parse_year(stored) == year


def test_a_copy_taken_during_a_write_is_taken_again(
    small_dir: pathlib.Path, writer: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Zotero commits while the file is being copied: the reader notices and copies again."""
    copies: list[str] = []
    real_copyfile = shutil.copyfile

    def copy_while_zotero_writes(src: str, dst: str) -> str:
        copies.append(str(src))
        result = real_copyfile(src, dst)
        if len(copies) == 1:
            writer.execute("UPDATE itemDataValues SET value = 'Late' WHERE value LIKE 'Applied%'")
        return result

    monkeypatch.setattr(zotero_module.shutil, "copyfile", copy_while_zotero_writes)
    snapshot = read_library(small_dir)
    assert copies.count(str(small_dir / "zotero.sqlite")) == 2
    assert snapshot.items_by_key()[paper_item_key("AER__AER.pdf")].title == "Late"
