"""A Zotero-shaped data directory built from real PDFs, and helpers that change it like Zotero.

``build_zotero_library`` writes ``<dest>/zotero.sqlite`` and ``<dest>/storage/<key>/<file>``:
one ``journalArticle`` per row of the papers' ``manifest.tsv`` with its creators, date,
publicationTitle and tags, each with a child PDF attachment stored the way Zotero stores an
imported file; two collections with a sub-collection; and the zoo paper in the trash.

The schema is a verbatim subset of Zotero 7.0's ``resource/schema/userdata.sql`` (userdata
schema 123, tag 7.0.32): the tables ``services.library.zotero`` reads, plus
``itemNotes`` and ``itemAnnotations`` for the notes and annotations a library holds. Item
types, fields and creator types carry the ids of Zotero's classic ``system.sql``
(``resource/schema/system-107.sql``: databases created before Zotero 5.0.78 keep them; newer
installs assign ids at first start, in the order of the global schema). ``renumbered=True``
gives every name another name's id, so a reader that used an id instead of a name reads the
wrong type or field. The base-field mappings and primary creator types of the fixture's item
types are Zotero's (``baseFieldMappings`` and ``itemTypeCreatorTypes`` there). Keys are 8
characters of Zotero's key alphabet, derived from the file name, so every build has the same
keys.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime
import hashlib
import os
import pathlib
import random
import re
import shutil
import sqlite3
from collections.abc import Iterable, Iterator, Sequence

import pytest

PAPERS_DIR_ENV = "ZOCRATES_TEST_PAPERS_DIR"
REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
USER_LIBRARY_ID = 1
TRASHED_FILE = "zoo__zoo.pdf"
KEY_ALPHABET = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"  # Zotero.Utilities.generateObjectKey
ATTACHMENT_TITLE = "Full Text PDF"
_EPOCH = datetime.datetime(2024, 5, 1, 9, 0, 0)
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"

# name -> (parent name or None, Debian packages whose papers it holds directly)
COLLECTIONS: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "Mixed models": (None, ("r-cran-lme4", "r-cran-ordinal")),
    "Bayesian": ("Mixed models", ("r-cran-brms",)),
    "Econometrics": (
        None,
        ("r-cran-sandwich", "r-cran-lmtest", "r-cran-aer", "r-cran-strucchange"),
    ),
}

# Classic ids from Zotero's system.sql (schema 32, before the global schema moved to JSON);
# "annotation" came later with the global schema, which gives a new type the next free id.
ITEM_TYPES = {"note": 1, "book": 2, "bookSection": 3, "journalArticle": 4, "thesis": 7}
ITEM_TYPES |= {"webpage": 13, "attachment": 14, "report": 15, "conferencePaper": 33}
ITEM_TYPES |= {"annotation": 37}
FIELDS = {"url": 1, "volume": 4, "issue": 5, "publisher": 8, "pages": 10, "publicationTitle": 12}
FIELDS |= {"ISSN": 13, "date": 14, "extra": 22, "journalAbbreviation": 25, "DOI": 26}
FIELDS |= {"accessDate": 27, "institution": 31, "conferenceName": 84, "language": 87}
FIELDS |= {"university": 89, "abstractNote": 90, "websiteTitle": 91, "title": 110}
FIELDS |= {"proceedingsTitle": 114, "bookTitle": 115, "shortTitle": 116}
CREATOR_TYPES = {"author": 1, "contributor": 2, "editor": 3, "translator": 4, "seriesEditor": 5}
CREATOR_TYPES |= {"bookAuthor": 29}
# (item type, base field, type-specific field), as in Zotero's baseFieldMappings.
BASE_FIELD_MAPPINGS = (
    ("bookSection", "publicationTitle", "bookTitle"),
    ("conferencePaper", "publicationTitle", "proceedingsTitle"),
    ("webpage", "publicationTitle", "websiteTitle"),
    ("thesis", "publisher", "university"),
    ("report", "publisher", "institution"),
)
# item type -> its creator types, the primary one (itemTypeCreatorTypes.primaryField) first.
ITEM_TYPE_CREATOR_TYPES = {
    "book": ("author", "contributor", "editor", "translator", "seriesEditor"),
    "bookSection": ("author", "contributor", "editor", "bookAuthor", "translator", "seriesEditor"),
    "journalArticle": ("author", "contributor", "editor", "translator"),
    "thesis": ("author", "contributor"),
    "webpage": ("author", "contributor", "translator"),
    "report": ("author", "contributor", "translator", "seriesEditor"),
    "conferencePaper": ("author", "contributor", "editor", "translator", "seriesEditor"),
}
# Zotero.Attachments.LINK_MODE_*
LINK_MODE_IMPORTED_FILE, LINK_MODE_IMPORTED_URL, LINK_MODE_LINKED_FILE = 0, 1, 2
LINK_MODE_LINKED_URL, LINK_MODE_EMBEDDED_IMAGE = 3, 4

SCHEMA = """
CREATE TABLE itemTypes (
    itemTypeID INTEGER PRIMARY KEY,
    typeName TEXT,
    templateItemTypeID INT,
    display INT DEFAULT 1 -- 0 == hide, 1 == display, 2 == primary
);
CREATE TABLE itemTypesCombined (
    itemTypeID INT NOT NULL,
    typeName TEXT NOT NULL,
    display INT DEFAULT 1 NOT NULL,
    custom INT NOT NULL,
    PRIMARY KEY (itemTypeID)
);
CREATE TABLE fields (
    fieldID INTEGER PRIMARY KEY,
    fieldName TEXT,
    fieldFormatID INT,
    FOREIGN KEY (fieldFormatID) REFERENCES fieldFormats(fieldFormatID)
);
CREATE TABLE fieldsCombined (
    fieldID INT NOT NULL,
    fieldName TEXT NOT NULL,
    label TEXT,
    fieldFormatID INT,
    custom INT NOT NULL,
    PRIMARY KEY (fieldID)
);
CREATE TABLE baseFieldMappings (
    itemTypeID INT,
    baseFieldID INT,
    fieldID INT,
    PRIMARY KEY (itemTypeID, baseFieldID, fieldID),
    FOREIGN KEY (itemTypeID) REFERENCES itemTypes(itemTypeID),
    FOREIGN KEY (baseFieldID) REFERENCES fields(fieldID),
    FOREIGN KEY (fieldID) REFERENCES fields(fieldID)
);
CREATE INDEX baseFieldMappings_baseFieldID ON baseFieldMappings(baseFieldID);
CREATE INDEX baseFieldMappings_fieldID ON baseFieldMappings(fieldID);
CREATE TABLE baseFieldMappingsCombined (
    itemTypeID INT,
    baseFieldID INT,
    fieldID INT,
    PRIMARY KEY (itemTypeID, baseFieldID, fieldID)
);
CREATE INDEX baseFieldMappingsCombined_baseFieldID ON baseFieldMappingsCombined(baseFieldID);
CREATE INDEX baseFieldMappingsCombined_fieldID ON baseFieldMappingsCombined(fieldID);
CREATE TABLE creatorTypes (
    creatorTypeID INTEGER PRIMARY KEY,
    creatorType TEXT
);
CREATE TABLE itemTypeCreatorTypes (
    itemTypeID INT,
    creatorTypeID INT,
    primaryField INT,
    PRIMARY KEY (itemTypeID, creatorTypeID),
    FOREIGN KEY (itemTypeID) REFERENCES itemTypes(itemTypeID),
    FOREIGN KEY (creatorTypeID) REFERENCES creatorTypes(creatorTypeID)
);
CREATE INDEX itemTypeCreatorTypes_creatorTypeID ON itemTypeCreatorTypes(creatorTypeID);
CREATE TABLE version (
    schema TEXT PRIMARY KEY,
    version INT NOT NULL
);
CREATE INDEX schema ON version(schema);
CREATE TABLE items (
    itemID INTEGER PRIMARY KEY,
    itemTypeID INT NOT NULL,
    dateAdded TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    dateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    libraryID INT NOT NULL,
    key TEXT NOT NULL,
    version INT NOT NULL DEFAULT 0,
    synced INT NOT NULL DEFAULT 0,
    UNIQUE (libraryID, key),
    FOREIGN KEY (libraryID) REFERENCES libraries(libraryID) ON DELETE CASCADE
);
CREATE INDEX items_synced ON items(synced);
CREATE TABLE itemDataValues (
    valueID INTEGER PRIMARY KEY,
    value UNIQUE
);
CREATE TABLE itemData (
    itemID INT,
    fieldID INT,
    valueID,
    PRIMARY KEY (itemID, fieldID),
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (fieldID) REFERENCES fieldsCombined(fieldID),
    FOREIGN KEY (valueID) REFERENCES itemDataValues(valueID)
);
CREATE INDEX itemData_fieldID ON itemData(fieldID);
CREATE INDEX itemData_valueID ON itemData(valueID);
CREATE TABLE itemNotes (
    itemID INTEGER PRIMARY KEY,
    parentItemID INT,
    note TEXT,
    title TEXT,
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (parentItemID) REFERENCES items(itemID) ON DELETE CASCADE
);
CREATE INDEX itemNotes_parentItemID ON itemNotes(parentItemID);
CREATE TABLE itemAttachments (
    itemID INTEGER PRIMARY KEY,
    parentItemID INT,
    linkMode INT,
    contentType TEXT,
    charsetID INT,
    path TEXT,
    syncState INT DEFAULT 0,
    storageModTime INT,
    storageHash TEXT,
    lastProcessedModificationTime INT,
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (parentItemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (charsetID) REFERENCES charsets(charsetID) ON DELETE SET NULL
);
CREATE INDEX itemAttachments_parentItemID ON itemAttachments(parentItemID);
CREATE INDEX itemAttachments_charsetID ON itemAttachments(charsetID);
CREATE INDEX itemAttachments_contentType ON itemAttachments(contentType);
CREATE INDEX itemAttachments_syncState ON itemAttachments(syncState);
CREATE INDEX itemAttachments_lastProcessedModificationTime
    ON itemAttachments(lastProcessedModificationTime);
CREATE TABLE itemAnnotations (
    itemID INTEGER PRIMARY KEY,
    parentItemID INT NOT NULL,
    type INTEGER NOT NULL,
    authorName TEXT,
    text TEXT,
    comment TEXT,
    color TEXT,
    pageLabel TEXT,
    sortIndex TEXT NOT NULL,
    position TEXT NOT NULL,
    isExternal INT NOT NULL,
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (parentItemID) REFERENCES itemAttachments(itemID)
);
CREATE INDEX itemAnnotations_parentItemID ON itemAnnotations(parentItemID);
CREATE TABLE tags (
    tagID INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
CREATE TABLE itemTags (
    itemID INT NOT NULL,
    tagID INT NOT NULL,
    type INT NOT NULL,
    PRIMARY KEY (itemID, tagID),
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (tagID) REFERENCES tags(tagID) ON DELETE CASCADE
);
CREATE INDEX itemTags_tagID ON itemTags(tagID);
CREATE TABLE creators (
    creatorID INTEGER PRIMARY KEY,
    firstName TEXT,
    lastName TEXT,
    fieldMode INT,
    UNIQUE (lastName, firstName, fieldMode)
);
CREATE TABLE itemCreators (
    itemID INT NOT NULL,
    creatorID INT NOT NULL,
    creatorTypeID INT NOT NULL DEFAULT 1,
    orderIndex INT NOT NULL DEFAULT 0,
    PRIMARY KEY (itemID, creatorID, creatorTypeID, orderIndex),
    UNIQUE (itemID, orderIndex),
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (creatorID) REFERENCES creators(creatorID) ON DELETE CASCADE,
    FOREIGN KEY (creatorTypeID) REFERENCES creatorTypes(creatorTypeID)
);
CREATE INDEX itemCreators_creatorTypeID ON itemCreators(creatorTypeID);
CREATE TABLE collections (
    collectionID INTEGER PRIMARY KEY,
    collectionName TEXT NOT NULL,
    parentCollectionID INT DEFAULT NULL,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    libraryID INT NOT NULL,
    key TEXT NOT NULL,
    version INT NOT NULL DEFAULT 0,
    synced INT NOT NULL DEFAULT 0,
    UNIQUE (libraryID, key),
    FOREIGN KEY (libraryID) REFERENCES libraries(libraryID) ON DELETE CASCADE,
    FOREIGN KEY (parentCollectionID) REFERENCES collections(collectionID) ON DELETE CASCADE
);
CREATE INDEX collections_synced ON collections(synced);
CREATE TABLE collectionItems (
    collectionID INT NOT NULL,
    itemID INT NOT NULL,
    orderIndex INT NOT NULL DEFAULT 0,
    PRIMARY KEY (collectionID, itemID),
    FOREIGN KEY (collectionID) REFERENCES collections(collectionID) ON DELETE CASCADE,
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE
);
CREATE INDEX collectionItems_itemID ON collectionItems(itemID);
CREATE TABLE deletedCollections (
    collectionID INTEGER PRIMARY KEY,
    dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL,
    FOREIGN KEY (collectionID) REFERENCES collections(collectionID) ON DELETE CASCADE
);
CREATE INDEX deletedCollections_dateDeleted ON deletedCollections(dateDeleted);
CREATE TABLE deletedItems (
    itemID INTEGER PRIMARY KEY,
    dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL,
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE
);
CREATE INDEX deletedItems_dateDeleted ON deletedItems(dateDeleted);
CREATE TABLE libraries (
    libraryID INTEGER PRIMARY KEY,
    type TEXT NOT NULL,
    editable INT NOT NULL,
    filesEditable INT NOT NULL,
    version INT NOT NULL DEFAULT 0,
    storageVersion INT NOT NULL DEFAULT 0,
    lastSync INT NOT NULL DEFAULT 0,
    archived INT NOT NULL DEFAULT 0
);
CREATE TABLE groups (
    groupID INTEGER PRIMARY KEY,
    libraryID INT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    version INT NOT NULL,
    FOREIGN KEY (libraryID) REFERENCES libraries(libraryID) ON DELETE CASCADE
);
"""


@dataclasses.dataclass(frozen=True)
class Paper:
    """One row of ``manifest.tsv``; ``creators`` are "Last, First" strings in order."""

    file: str
    debian_package: str
    title: str
    creators: tuple[str, ...]
    year: int
    publication: str

    @property
    def r_package(self) -> str:
        return self.file.split("__", 1)[0]


def zotero_key(seed: str) -> str:
    """A Zotero-shaped key (8 characters of Zotero's alphabet), the same for the same seed."""
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    return "".join(rng.choice(KEY_ALPHABET) for _ in range(8))


def paper_item_key(file: str) -> str:
    return zotero_key(f"item:{file}")


def paper_attachment_key(file: str) -> str:
    return zotero_key(f"attachment:{file}")


def collection_key(name: str) -> str:
    return zotero_key(f"collection:{name}")


def default_papers_dir() -> pathlib.Path:
    """``$ZOCRATES_TEST_PAPERS_DIR``, else ``<repo>/../shared/data/papers``; fails if missing."""
    papers_dir = pathlib.Path(
        os.environ.get(PAPERS_DIR_ENV) or REPO_ROOT.parent / "shared" / "data" / "papers"
    )
    if not (papers_dir / "manifest.tsv").is_file():
        pytest.fail(
            f"The test papers are missing: no manifest.tsv in {papers_dir}. Set "
            f"{PAPERS_DIR_ENV} to the folder of the 38 PDFs and their manifest.tsv."
        )
    return papers_dir


def read_manifest(papers_dir: pathlib.Path | None = None) -> list[Paper]:
    papers_dir = papers_dir or default_papers_dir()
    with (papers_dir / "manifest.tsv").open(encoding="utf-8", newline="") as handle:
        return [
            Paper(
                file=row["file"],
                debian_package=row["debian_package"],
                title=row["title"],
                creators=tuple(c.strip() for c in row["creators"].split(";") if c.strip()),
                year=int(row["year"]),
                publication=row["publication"],
            )
            for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        ]


def build_zotero_library(
    dest: pathlib.Path,
    *,
    papers_dir: pathlib.Path | None = None,
    limit: int | None = None,
    files: Sequence[str] | None = None,
    trashed: Sequence[str] = (TRASHED_FILE,),
    renumbered: bool = False,
) -> pathlib.Path:
    """Create a Zotero data directory at ``dest`` from the first ``limit`` papers (or the
    papers named in ``files``); returns it. The papers named in ``trashed`` go to the trash
    (benchmarks that ask about every paper pass none). ``renumbered`` gives item types,
    fields and creator types ids other than the classic ones (see the module docstring)."""
    papers_dir = papers_dir or default_papers_dir()
    papers = read_manifest(papers_dir)
    if files is not None:
        papers = [p for p in papers if p.file in set(files)]
    papers = papers[:limit]
    (dest / "storage").mkdir(parents=True, exist_ok=True)
    if (dest / "zotero.sqlite").exists():
        raise FileExistsError(f"{dest / 'zotero.sqlite'} already exists")
    with _connect(dest) as conn:
        conn.executescript(SCHEMA)
        _insert_lookups(conn, renumbered=renumbered)
        item_ids: dict[str, int] = {}
        for index, paper in enumerate(papers):
            when = (_EPOCH + datetime.timedelta(minutes=index)).strftime(_TIME_FORMAT)
            item_ids[paper.file] = _insert_item(
                conn,
                key=paper_item_key(paper.file),
                item_type="journalArticle",
                fields={
                    "title": paper.title,
                    "date": f"{paper.year}-00-00 {paper.year}",  # Zotero's multipart date
                    "publicationTitle": paper.publication,
                },
                creators=paper.creators,
                tags=[(paper.debian_package, 0), (paper.r_package, 0), ("R", 1)],
                when=when,
            )
            _insert_attachment(
                conn,
                dest,
                key=paper_attachment_key(paper.file),
                parent_id=item_ids[paper.file],
                source=papers_dir / paper.file,
                when=when,
            )
        collection_ids: dict[str, int] = {}
        for name, (parent, packages) in COLLECTIONS.items():
            collection_ids[name] = (
                conn.execute(
                    "INSERT INTO collections (collectionName, parentCollectionID, libraryID, key) "
                    "VALUES (?, ?, ?, ?)",
                    (name, collection_ids.get(parent or ""), USER_LIBRARY_ID, collection_key(name)),
                ).lastrowid
                or 0
            )
            members = [item_ids[p.file] for p in papers if p.debian_package in packages]
            conn.executemany(
                "INSERT INTO collectionItems (collectionID, itemID, orderIndex) VALUES (?, ?, ?)",
                [(collection_ids[name], item_id, i) for i, item_id in enumerate(members)],
            )
    for file in trashed:
        if file in item_ids:
            trash_item(dest, paper_item_key(file))
    return dest


def add_journal_article(
    zotero_dir: pathlib.Path,
    *,
    key: str,
    title: str,
    creators: Sequence[str] = (),
    year: int | None = None,
    publication: str | None = None,
    library_id: int = USER_LIBRARY_ID,
    pdf: pathlib.Path | None = None,
) -> str:
    """Add a journal article (and a stored copy of ``pdf``, if given); returns its key."""
    when = _now()
    with _connect(zotero_dir) as conn:
        fields = {"title": title, "publicationTitle": publication}
        if year is not None:
            fields["date"] = f"{year}-00-00 {year}"
        item_id = _insert_item(
            conn,
            key=key,
            item_type="journalArticle",
            fields=fields,
            creators=creators,
            tags=[],
            when=when,
            library_id=library_id,
        )
        if pdf is not None:
            _insert_attachment(
                conn,
                zotero_dir,
                key=zotero_key(f"attachment:{key}"),
                parent_id=item_id,
                source=pdf,
                when=when,
                library_id=library_id,
            )
    return key


def add_standalone_pdf(
    zotero_dir: pathlib.Path, pdf: pathlib.Path, *, library_id: int = USER_LIBRARY_ID
) -> str:
    """Add ``pdf`` as a stored file with no parent item (Zotero's title: the file name)."""
    key = zotero_key(f"standalone:{pdf.name}:{library_id}")
    with _connect(zotero_dir) as conn:
        _insert_attachment(
            conn,
            zotero_dir,
            key=key,
            parent_id=None,
            source=pdf,
            when=_now(),
            library_id=library_id,
            title=pdf.name,
        )
    return key


def add_linked_pdf(zotero_dir: pathlib.Path, parent_key: str | None, stored_path: str) -> str:
    """Add a linked-file attachment (linkMode 2) whose ``itemAttachments.path`` is
    ``stored_path`` verbatim: an absolute path or ``attachments:<relative path>``."""
    key = zotero_key(f"linked:{parent_key}:{stored_path}")
    with _connect(zotero_dir) as conn:
        parent_id = _item_id(conn, parent_key) if parent_key else None
        item_id = _insert_item(
            conn,
            key=key,
            item_type="attachment",
            fields={"title": pathlib.PurePath(stored_path).name},
            creators=(),
            tags=[],
            when=_now(),
        )
        conn.execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) "
            "VALUES (?, ?, 2, 'application/pdf', ?)",
            (item_id, parent_id, stored_path),
        )
    return key


def add_item(
    zotero_dir: pathlib.Path,
    *,
    key: str,
    item_type: str,
    fields: dict[str, str | None],
    creators: Sequence[str | tuple[str, str]] = (),
    pdfs: Sequence[pathlib.Path] = (),
    library_id: int = USER_LIBRARY_ID,
) -> list[str]:
    """Add an item of any type in the fixture's schema (``bookSection``, ``thesis`` ...) with
    its type-specific fields as Zotero names them (``bookTitle``, ``university``), creators as
    "Last, First" (an author) or ("Last, First", creator type), and a stored copy of each of
    ``pdfs``, the first added first. Returns the attachments' keys."""
    when = _now()
    with _connect(zotero_dir) as conn:
        item_id = _insert_item(
            conn,
            key=key,
            item_type=item_type,
            fields=fields,
            creators=creators,
            tags=[],
            when=when,
            library_id=library_id,
        )
        keys = []
        for index, pdf in enumerate(pdfs):
            keys.append(zotero_key(f"attachment:{key}:{index}"))
            stamp = datetime.datetime.strptime(when, _TIME_FORMAT) + datetime.timedelta(
                seconds=index
            )
            _insert_attachment(
                conn,
                zotero_dir,
                key=keys[-1],
                parent_id=item_id,
                source=pdf,
                when=stamp.strftime(_TIME_FORMAT),
                library_id=library_id,
            )
    return keys


def add_pdf(
    zotero_dir: pathlib.Path,
    parent_key: str,
    pdf: pathlib.Path,
    *,
    date_added: str | None = None,
    title: str = ATTACHMENT_TITLE,
) -> str:
    """Add one more stored PDF under an item (``date_added`` as Zotero's UTC
    "YYYY-MM-DD HH:MM:SS", default now); returns the attachment's key."""
    key = zotero_key(f"pdf:{parent_key}:{pdf.name}")
    with _connect(zotero_dir) as conn:
        parent_id = _item_id(conn, parent_key)
        (library_id,) = conn.execute(
            "SELECT libraryID FROM items WHERE itemID = ?", (parent_id,)
        ).fetchone()
        _insert_attachment(
            conn,
            zotero_dir,
            key=key,
            parent_id=parent_id,
            source=pdf,
            when=date_added or _now(),
            library_id=library_id,
            title=title,
        )
    return key


def add_other_attachment(
    zotero_dir: pathlib.Path,
    parent_key: str | None,
    *,
    link_mode: int,
    content_type: str,
    file: pathlib.Path | None = None,
    url: str | None = None,
    title: str = "Snapshot",
) -> str:
    """An attachment that is not a stored PDF, as Zotero saves one: an EPUB or an HTML
    snapshot (``file`` copied to storage, link mode 0 or 1), a linked URL (link mode 3,
    ``url``, no file) or an image embedded in a note (link mode 4). Returns its key."""
    key = zotero_key(f"other:{parent_key}:{link_mode}:{content_type}:{title}")
    with _connect(zotero_dir) as conn:
        parent_id = _item_id(conn, parent_key) if parent_key else None
        item_id = _insert_item(
            conn,
            key=key,
            item_type="attachment",
            fields={"title": title, "url": url},
            creators=(),
            tags=[],
            when=_now(),
        )
        stored = None
        if file is not None:
            target = zotero_dir / "storage" / key / file.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, target)
            stored = f"storage:{file.name}"
        conn.execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) "
            "VALUES (?, ?, ?, ?, ?)",
            (item_id, parent_id, link_mode, content_type, stored),
        )
    return key


def add_note(
    zotero_dir: pathlib.Path,
    parent_key: str | None,
    html: str,
    *,
    collections: Sequence[str] = (),
    tags: Sequence[str] = (),
) -> str:
    """A child note of ``parent_key`` (or a standalone note, filed in ``collections`` by name),
    stored as Zotero does: an item of type note and its HTML in ``itemNotes``. Returns its
    key."""
    key = zotero_key(f"note:{parent_key}:{html}")
    with _connect(zotero_dir) as conn:
        parent_id = _item_id(conn, parent_key) if parent_key else None
        item_id = _insert_item(
            conn, key=key, item_type="note", fields={}, creators=(),
            tags=[(t, 0) for t in tags], when=_now(),
        )  # fmt: skip
        # Zotero.Utilities.Item.noteToTitle: the first line of its text, at most 120 characters.
        lines = re.sub(r"<[^>]*>", "", re.sub(r"</(?:p|h\d|li|div)>|<br\s*/?>", "\n", html))
        title = next((" ".join(t.split()) for t in lines.splitlines() if t.strip()), "")[:120]
        conn.execute(
            "INSERT INTO itemNotes (itemID, parentItemID, note, title) VALUES (?, ?, ?, ?)",
            (item_id, parent_id, f'<div data-schema-version="9">{html}</div>', title),
        )
        for name in collections:
            conn.execute(
                "INSERT INTO collectionItems (collectionID, itemID, orderIndex) "
                "SELECT collectionID, ?, 0 FROM collections WHERE key = ?",
                (item_id, collection_key(name)),
            )
    return key


# Zotero.Annotations.ANNOTATION_TYPE_*
ANNOTATION_TYPE_IDS = {"highlight": 1, "note": 2, "image": 3, "ink": 4, "underline": 5, "text": 6}


def add_annotation(
    zotero_dir: pathlib.Path,
    attachment_key: str,
    *,
    text: str = "",
    comment: str = "",
    page: int = 1,
    annotation_type: str = "highlight",
    color: str = "#ffd400",
    page_label: str | None = None,
    tags: Sequence[str] = (),
    position: str | None = None,
    rect: tuple[float, float, float, float] = (72.0, 700.0, 300.0, 712.0),
) -> str:
    """An annotation on a PDF attachment, as Zotero's reader saves one (an item of type
    annotation whose parent is the attachment, and its ``itemAnnotations`` row): a highlight
    by default; ``text`` is what a highlight or underline covers, ``comment`` the user's words,
    ``page`` 1-based (``position`` replaces the PDF position written from it and ``rect``).
    Returns its key."""
    key = zotero_key(f"annotation:{attachment_key}:{annotation_type}:{text}:{comment}:{page}")
    with _connect(zotero_dir) as conn:
        parent_id = _item_id(conn, attachment_key)
        item_id = _insert_item(
            conn, key=key, item_type="annotation", fields={}, creators=(),
            tags=[(t, 0) for t in tags], when=_now(),
        )  # fmt: skip
        if position is None:
            position = f'{{"pageIndex":{page - 1},"rects":[[{",".join(map(str, rect))}]]}}'
        conn.execute(
            "INSERT INTO itemAnnotations (itemID, parentItemID, type, authorName, text, comment, "
            "color, pageLabel, sortIndex, position, isExternal) "
            "VALUES (?, ?, ?, '', ?, ?, ?, ?, ?, ?, 0)",
            (
                item_id,
                parent_id,
                ANNOTATION_TYPE_IDS[annotation_type],
                text or None,
                comment or None,
                color,
                str(page) if page_label is None else page_label,
                f"{page - 1:05d}|000000|00000",
                position,
            ),
        )
    return key


def set_annotation_comment(zotero_dir: pathlib.Path, annotation_key: str, comment: str) -> None:
    """Edit an annotation's comment, as the reader's sidebar does (dateModified moves on)."""
    with _connect(zotero_dir) as conn:
        item_id = _item_id(conn, annotation_key)
        conn.execute("UPDATE itemAnnotations SET comment = ? WHERE itemID = ?", (comment, item_id))
        conn.execute("UPDATE items SET dateModified = ? WHERE itemID = ?", (_now(), item_id))


def erase_item(zotero_dir: pathlib.Path, item_key: str) -> None:
    """Delete an item for good, with its child attachments, notes and annotations, as
    emptying Zotero's trash does (the rows; their files are left in place here)."""
    with _connect(zotero_dir) as conn:
        stack, doomed = [_item_id(conn, item_key)], []
        while stack:
            item_id = stack.pop()
            doomed.append(item_id)
            for table in ("itemAttachments", "itemNotes", "itemAnnotations"):
                stack += [
                    r[0]
                    for r in conn.execute(
                        f"SELECT itemID FROM {table} WHERE parentItemID = ?", (item_id,)
                    )
                ]
        for item_id in doomed:
            for table in (
                "itemData",
                "itemCreators",
                "itemTags",
                "collectionItems",
                "itemAttachments",
                "itemNotes",
                "itemAnnotations",
                "deletedItems",
                "items",
            ):
                conn.execute(f"DELETE FROM {table} WHERE itemID = ?", (item_id,))


def add_group_library(zotero_dir: pathlib.Path, *, group_id: int, name: str) -> int:
    """Add a group library the way sync creates one; returns its libraryID."""
    with _connect(zotero_dir) as conn:
        library_id = conn.execute(
            "INSERT INTO libraries (type, editable, filesEditable) VALUES ('group', 1, 1)"
        ).lastrowid
        conn.execute(
            "INSERT INTO groups (groupID, libraryID, name, description, version) "
            "VALUES (?, ?, ?, '', 0)",
            (group_id, library_id, name),
        )
    return int(library_id or 0)


def set_item_field(zotero_dir: pathlib.Path, item_key: str, field: str, value: str) -> None:
    """Set one field (``DOI``, ``abstractNote``, ``extra`` ...) of an item."""
    with _connect(zotero_dir) as conn:
        item_id = _item_id(conn, item_key)
        conn.execute(
            "DELETE FROM itemData WHERE itemID = ? AND fieldID = ?",
            (item_id, _lookup(conn, "field", field)),
        )
        _insert_fields(conn, item_id, {field: value})


def touch_attachment(zotero_dir: pathlib.Path, item_key: str) -> None:
    """Rewrite the item's PDFs with different bytes (same content plus a PDF comment after
    ``%%EOF``) and bump ``dateModified`` of the attachments and the item.

    Real Zotero leaves ``dateModified`` alone when another program edits a PDF; the bump is
    here so tests can exercise both signals. The file's size and mtime change either way."""
    with _connect(zotero_dir) as conn:
        for _, path in _pdf_files(conn, zotero_dir, item_key):
            data = path.read_bytes()
            path.write_bytes(data + b"\n%% zocrates-touch %d\n" % data.count(b"zocrates-touch"))
        ids = [_item_id(conn, item_key)]
        ids += [row[0] for row in conn.execute(_CHILDREN_SQL, (ids[0],))]
        for item_id in ids:
            (old,) = conn.execute(
                "SELECT dateModified FROM items WHERE itemID = ?", (item_id,)
            ).fetchone()
            later = datetime.datetime.strptime(old, _TIME_FORMAT) + datetime.timedelta(seconds=1)
            stamp = max(later.strftime(_TIME_FORMAT), _now())
            conn.execute(
                "UPDATE items SET dateModified = ?, clientDateModified = ?, synced = 0 "
                "WHERE itemID = ?",
                (stamp, stamp, item_id),
            )


def _set_trashed(zotero_dir: pathlib.Path, item_key: str, trashed: bool) -> None:
    with _connect(zotero_dir) as conn:
        item_id = _item_id(conn, item_key)
        conn.execute(
            "UPDATE items SET synced = 0, clientDateModified = CURRENT_TIMESTAMP WHERE itemID = ?",
            (item_id,),
        )
        if trashed:
            conn.execute("INSERT OR IGNORE INTO deletedItems (itemID) VALUES (?)", (item_id,))
        else:
            conn.execute("DELETE FROM deletedItems WHERE itemID = ?", (item_id,))


def trash_item(zotero_dir: pathlib.Path, item_key: str) -> None:
    """Move an item (regular or attachment) to the trash, as ``Zotero.Items.trash`` does:
    only the item itself goes into ``deletedItems``."""
    _set_trashed(zotero_dir, item_key, True)


def restore_item(zotero_dir: pathlib.Path, item_key: str) -> None:
    """Take an item out of the trash, as Zotero's "Restore to Library" does."""
    _set_trashed(zotero_dir, item_key, False)


def every_paper_library(dest: pathlib.Path) -> pathlib.Path:
    """The library of all the papers, none in the trash (what benchmarks ask about): built
    at ``dest`` once, or a copy built earlier with its trashed paper restored."""
    if not (dest / "zotero.sqlite").exists():
        return build_zotero_library(dest, trashed=())
    restore_item(dest, paper_item_key(TRASHED_FILE))
    return dest


def trash_collection(zotero_dir: pathlib.Path, key: str) -> None:
    with _connect(zotero_dir) as conn:
        conn.execute(
            "INSERT OR IGNORE INTO deletedCollections (collectionID) "
            "SELECT collectionID FROM collections WHERE key = ?",
            (key,),
        )


def remove_attachment_file(zotero_dir: pathlib.Path, item_key: str) -> list[pathlib.Path]:
    """Delete the PDF files of an item (or of one attachment) but keep the database rows."""
    with _connect(zotero_dir) as conn:
        paths = [path for _, path in _pdf_files(conn, zotero_dir, item_key)]
    for path in paths:
        path.unlink()
    return paths


def write_ft_cache(zotero_dir: pathlib.Path, item_key: str, text: str) -> pathlib.Path:
    """Write Zotero's full-text cache of the item's first PDF attachment; returns its path."""
    with _connect(zotero_dir) as conn:
        attachment_key = next(key for key, _ in _pdf_files(conn, zotero_dir, item_key))
    path = zotero_dir / "storage" / attachment_key / ".zotero-ft-cache"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


_CHILDREN_SQL = "SELECT itemID FROM itemAttachments WHERE parentItemID = ? ORDER BY itemID"


@contextlib.contextmanager
def _connect(zotero_dir: pathlib.Path) -> Iterator[sqlite3.Connection]:
    """One transaction on ``zotero.sqlite``, committed on success, then closed."""
    conn = sqlite3.connect(zotero_dir / "zotero.sqlite")
    try:
        with conn:
            yield conn
    finally:
        conn.close()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime(_TIME_FORMAT)


def _item_id(conn: sqlite3.Connection, key: str) -> int:
    row = conn.execute("SELECT itemID FROM items WHERE key = ?", (key,)).fetchone()
    if row is None:
        raise KeyError(f"no Zotero item with key {key}")
    return int(row[0])


def _pdf_files(
    conn: sqlite3.Connection, zotero_dir: pathlib.Path, item_key: str
) -> list[tuple[str, pathlib.Path]]:
    """(attachment key, file path) of the item's stored or absolute-linked PDFs, or of the
    attachment itself when ``item_key`` names one."""
    item_id = _item_id(conn, item_key)
    rows = conn.execute(
        "SELECT items.key, itemAttachments.path FROM itemAttachments "
        "JOIN items ON items.itemID = itemAttachments.itemID "
        "WHERE (itemAttachments.itemID = ? OR itemAttachments.parentItemID = ?) "
        "AND itemAttachments.contentType = 'application/pdf' ORDER BY itemAttachments.itemID",
        (item_id, item_id),
    ).fetchall()
    files = []
    for key, stored in rows:
        if stored.startswith("storage:"):
            files.append((key, zotero_dir / "storage" / key / stored.removeprefix("storage:")))
        elif os.path.isabs(stored):
            files.append((key, pathlib.Path(stored)))
    return files


def _renumber(ids: dict[str, int]) -> dict[str, int]:
    """Each name gets the id of the name after it (the last the first's): no name keeps its id."""
    names = list(ids)
    return {name: ids[names[(i + 1) % len(names)]] for i, name in enumerate(names)}


def _insert_lookups(conn: sqlite3.Connection, *, renumbered: bool = False) -> None:
    conn.executemany("INSERT INTO version VALUES (?, ?)", [("system", 32), ("userdata", 123)])
    display = {"note": 0, "attachment": 0, "webpage": 0, "book": 2, "journalArticle": 2}
    display |= {"annotation": 0}
    item_types, fields, creator_types = ITEM_TYPES, FIELDS, CREATOR_TYPES
    if renumbered:
        item_types, fields = _renumber(ITEM_TYPES), _renumber(FIELDS)
        creator_types = _renumber(CREATOR_TYPES)
    conn.executemany(
        "INSERT INTO itemTypes VALUES (?, ?, NULL, ?)",
        [(i, name, display.get(name, 1)) for name, i in item_types.items()],
    )
    conn.executemany("INSERT INTO fields VALUES (?, ?, NULL)", [(i, n) for n, i in fields.items()])
    conn.executemany(
        "INSERT INTO creatorTypes VALUES (?, ?)", [(i, n) for n, i in creator_types.items()]
    )
    conn.executemany(
        "INSERT INTO baseFieldMappings VALUES (?, ?, ?)",
        [(item_types[t], fields[base], fields[f]) for t, base, f in BASE_FIELD_MAPPINGS],
    )
    conn.executemany(
        "INSERT INTO itemTypeCreatorTypes VALUES (?, ?, ?)",
        [
            (item_types[t], creator_types[c], int(i == 0))
            for t, types in ITEM_TYPE_CREATOR_TYPES.items()
            for i, c in enumerate(types)
        ],
    )
    # What Zotero's _updateCustomTables() does at every start (no custom types here).
    conn.execute(
        "INSERT INTO itemTypesCombined SELECT itemTypeID, typeName, display, 0 FROM itemTypes"
    )
    conn.execute(
        "INSERT INTO fieldsCombined SELECT fieldID, fieldName, NULL, fieldFormatID, 0 FROM fields"
    )
    conn.execute(
        "INSERT INTO baseFieldMappingsCombined SELECT itemTypeID, baseFieldID, fieldID "
        "FROM baseFieldMappings"
    )
    conn.execute(
        "INSERT INTO libraries (libraryID, type, editable, filesEditable) VALUES (?, 'user', 1, 1)",
        (USER_LIBRARY_ID,),
    )


_LOOKUP_SQL = {
    "itemType": "SELECT itemTypeID FROM itemTypesCombined WHERE typeName = ?",
    "field": "SELECT fieldID FROM fieldsCombined WHERE fieldName = ?",
    "creatorType": "SELECT creatorTypeID FROM creatorTypes WHERE creatorType = ?",
}


def _lookup(conn: sqlite3.Connection, kind: str, name: str) -> int:
    """The id this database gives an item type, field or creator type (by name, as Zotero's
    own code does: ids differ between databases)."""
    row = conn.execute(_LOOKUP_SQL[kind], (name,)).fetchone()
    if row is None:
        raise KeyError(f"the fixture's schema has no {kind} {name!r}")
    return int(row[0])


def _insert_item(
    conn: sqlite3.Connection,
    *,
    key: str,
    item_type: str,
    fields: dict[str, str | None],
    creators: Iterable[str | tuple[str, str]],
    tags: Iterable[tuple[str, int]],
    when: str,
    library_id: int = USER_LIBRARY_ID,
) -> int:
    item_id = conn.execute(
        "INSERT INTO items (itemTypeID, dateAdded, dateModified, clientDateModified, libraryID, "
        "key) VALUES (?, ?, ?, ?, ?, ?)",
        (_lookup(conn, "itemType", item_type), when, when, when, library_id, key),
    ).lastrowid
    assert item_id is not None
    _insert_fields(conn, item_id, fields)
    for index, creator in enumerate(creators):
        name, creator_type = (creator, "author") if isinstance(creator, str) else creator
        last, sep, first = (part.strip() for part in name.partition(","))
        mode = 0 if sep else 1  # 1: single-field name, kept in lastName
        conn.execute(
            "INSERT OR IGNORE INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, ?)",
            (first, last, mode),
        )
        (creator_id,) = conn.execute(
            "SELECT creatorID FROM creators WHERE firstName = ? AND lastName = ? AND fieldMode = ?",
            (first, last, mode),
        ).fetchone()
        conn.execute(
            "INSERT INTO itemCreators VALUES (?, ?, ?, ?)",
            (item_id, creator_id, _lookup(conn, "creatorType", creator_type), index),
        )
    for tag, tag_type in tags:  # type 0: added by the user, 1: automatic
        conn.execute("INSERT OR IGNORE INTO tags (name) VALUES (?)", (tag,))
        conn.execute(
            "INSERT INTO itemTags SELECT ?, tagID, ? FROM tags WHERE name = ?",
            (item_id, tag_type, tag),
        )
    return item_id


def _insert_fields(conn: sqlite3.Connection, item_id: int, fields: dict[str, str | None]) -> None:
    for field, value in fields.items():
        if value is None:
            continue
        conn.execute("INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)", (value,))
        conn.execute(
            "INSERT INTO itemData SELECT ?, ?, valueID FROM itemDataValues WHERE value = ?",
            (item_id, _lookup(conn, "field", field), value),
        )


def _insert_attachment(
    conn: sqlite3.Connection,
    zotero_dir: pathlib.Path,
    *,
    key: str,
    parent_id: int | None,
    source: pathlib.Path,
    when: str,
    library_id: int = USER_LIBRARY_ID,
    title: str = ATTACHMENT_TITLE,
) -> int:
    """An imported file (linkMode 0) whose copy lives in ``storage/<key>/<file name>``."""
    target = zotero_dir / "storage" / key / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    item_id = _insert_item(
        conn,
        key=key,
        item_type="attachment",
        fields={"title": title},
        creators=(),
        tags=[],
        when=when,
        library_id=library_id,
    )
    conn.execute(
        "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, charsetID, "
        "path, syncState, storageModTime, storageHash) VALUES (?, ?, 0, 'application/pdf', NULL, "
        "?, 0, ?, ?)",
        (
            item_id,
            parent_id,
            f"storage:{source.name}",
            target.stat().st_mtime_ns // 1_000_000,
            hashlib.md5(target.read_bytes()).hexdigest(),
        ),
    )
    return item_id


def image_only_pdf(
    source: pathlib.Path, dest: pathlib.Path, *, pages: Sequence[int] | None = None, dpi: int = 200
) -> pathlib.Path:
    """A scan of ``source``: each page (1-based ``pages``, default all) rendered to a greyscale
    image at ``dpi`` and written as an image-only page of ``dest``, with no text layer. What a
    scanner or an old photocopy gives Zotero."""
    import pypdfium2 as pdfium

    original = pdfium.PdfDocument(source)
    scan = pdfium.PdfDocument.new()
    try:
        for number in pages or range(1, len(original) + 1):
            page = original[number - 1]
            width, height = page.get_size()
            bitmap = page.render(scale=dpi / 72, grayscale=True)
            blank = scan.new_page(width, height)
            image = pdfium.PdfImage.new(scan)
            image.set_bitmap(bitmap)
            image.set_matrix(pdfium.PdfMatrix().scale(width, height))
            blank.insert_obj(image)
            blank.gen_content()
        dest.parent.mkdir(parents=True, exist_ok=True)
        scan.save(dest)
    finally:
        scan.close()
        original.close()
    return dest


def text_rect(pdf: pathlib.Path, page: int, phrase: str) -> tuple[float, float, float, float]:
    """The rectangle (PDF points, x1 y1 x2 y2, as Zotero's annotation positions) around the
    first occurrence of ``phrase`` on ``page`` (1-based): where a user would draw an image
    annotation over it."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    try:
        textpage = doc[page - 1].get_textpage()
        searcher = textpage.search(phrase, match_case=False)
        found = searcher.get_next()
        assert found is not None, f"{phrase!r} is not on page {page} of {pdf.name}"
        first, count = found
        boxes = [textpage.get_charbox(i) for i in range(first, first + count)]
        return (
            min(b[0] for b in boxes) - 1,
            min(b[1] for b in boxes) - 1,
            max(b[2] for b in boxes) + 1,
            max(b[3] for b in boxes) + 1,
        )
    finally:
        doc.close()
