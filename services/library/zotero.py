"""Read a Zotero 7 data directory (``zotero.sqlite`` plus ``storage/``) into frozen dataclasses.

Why a file copy and not the sqlite3 backup API: Zotero 7 opens its database with
``PRAGMA main.locking_mode=EXCLUSIVE`` (``DB_LOCK_EXCLUSIVE = true`` in ``xpcom/db.js``), so
after its first write it holds an EXCLUSIVE lock until it quits. Any SQLite connection, even a
``file:...?mode=ro`` one with a busy timeout, then gets SQLITE_BUSY for as long as Zotero runs:
the backup API would fail exactly when the user is working. Copying the bytes needs no SQLite
lock (POSIX locks are advisory; on Windows SQLite locks a byte range past the first GiB, outside
the data of any normal library), so we copy ``zotero.sqlite`` and, when present, its
``-journal`` and ``-wal`` files into a temporary folder and read the copy. SQLite then treats
the copy like a crashed database: a hot rollback journal is rolled back and a WAL is replayed,
so the copy shows the last committed state. A copy taken while Zotero was writing is detected
by comparing size and mtime of the three files before and after, and retaken. The original
file is never opened by SQLite, so it cannot be modified or locked by us. Zotero 8 and 9 keep a
rollback journal; Zotero 10 switched to WAL (still exclusive), where everything since Zotero's
last checkpoint, usually at quit, is only in ``zotero.sqlite-wal``: tests/real_zotero reads
databases that Zotero 8.0.5, 9.0.6 and 10.0.1 wrote, while they run.

Tables and columns read (names as in Zotero 7's ``resource/schema/userdata.sql``, userdata
schema 123; Zotero 8 keeps 123, and up to schema 129, Zotero 9 and the development tree after
it, these tables only gained columns):

- ``sqlite_master``: ``type``, ``name`` (to tell a Zotero database from another file)
- ``libraries``: ``libraryID``, ``type`` (``user`` and ``group``; feeds are skipped)
- ``groups``: ``libraryID``, ``name``
- ``items``: ``itemID``, ``itemTypeID``, ``libraryID``, ``key``, ``dateAdded``, ``dateModified``
- ``itemTypesCombined``: ``itemTypeID``, ``typeName``
- ``fieldsCombined``: ``fieldID``, ``fieldName``
- ``baseFieldMappingsCombined``: ``baseFieldID``, ``fieldID`` (e.g. ``bookTitle`` and
  ``proceedingsTitle`` stand for ``publicationTitle``, ``university`` for ``publisher``)
- ``itemTypeCreatorTypes``: ``itemTypeID``, ``creatorTypeID``, ``primaryField``
- ``itemData``: ``itemID``, ``fieldID``, ``valueID``
- ``itemDataValues``: ``valueID``, ``value``
- ``creators``: ``creatorID``, ``firstName``, ``lastName``, ``fieldMode``
- ``itemCreators``: ``itemID``, ``creatorID``, ``creatorTypeID``, ``orderIndex``
- ``creatorTypes``: ``creatorTypeID``, ``creatorType``
- ``tags``: ``tagID``, ``name``
- ``itemTags``: ``itemID``, ``tagID``
- ``collections``: ``collectionID``, ``collectionName``, ``parentCollectionID``, ``libraryID``,
  ``key``
- ``collectionItems``: ``collectionID``, ``itemID``
- ``deletedItems``: ``itemID`` (the trash)
- ``deletedCollections``: ``collectionID`` (collections in the trash; read when present)
- ``itemAttachments``: ``itemID``, ``parentItemID``, ``linkMode``, ``contentType``, ``path``
- ``itemAnnotations`` (when present): ``itemID``, ``parentItemID`` (the attachment), ``type``,
  ``text``, ``comment``, ``color``, ``pageLabel``, ``position`` (JSON; ``pageIndex`` and
  ``rects`` for a PDF)
- ``itemNotes`` (when present): ``itemID``, ``parentItemID``, ``note`` (HTML), ``title``

Item types, fields and creator types are looked up by name, never by id: Zotero assigns their
ids when it installs its global schema, so they differ between databases. ``*Combined`` tables
are what Zotero itself reads (``cachedTypes.js``); ``itemData.fieldID`` references
``fieldsCombined``. A type-specific field is read as the base field it maps to, so a book
section's ``bookTitle``, a conference paper's ``proceedingsTitle`` (else its
``conferenceName``) and a thesis's ``university`` are the venue. ``authors`` follows Zotero's
``firstCreator`` (``items.js``): the item type's primary creator type, else editors, else
contributors. Attachments are in Zotero's ``getBestAttachments`` order (matching the parent's
URL first, then oldest first), so the first is the one Zotero opens for the item.

Only PDF files are indexed. EPUB files, HTML snapshots, linked URLs and other files are left
out and counted in one log line per read. What the user wrote in Zotero is read too: the
annotations of the PDFs read (highlights and underlines with the text under them, notes, text
and ink annotations, image annotations with the region they mark; each with its comment, page,
colour and tags), child notes (their item's) and standalone notes (items of their own, in the
collections they are filed in), their HTML turned into text (:func:`note_text`).
Files read besides the database: ``storage/<key>/.zotero-ft-cache`` (only its existence is
checked here).

``read_library`` blocks (file copy, SQLite); async callers run it in a thread.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import pathlib
import re
import shutil
import sqlite3
import tempfile
import time
from collections import defaultdict
from html.parser import HTMLParser

from services.common.errors import InvalidArgument, NotFound

logger = logging.getLogger(__name__)

DB_FILE = "zotero.sqlite"
STORAGE_DIR = "storage"
FT_CACHE_FILE = ".zotero-ft-cache"
USER_LIBRARY_NAME = "My Library"
PDF_CONTENT_TYPE = "application/pdf"
STORAGE_PREFIX = "storage:"
BASE_DIR_PREFIX = "attachments:"  # Zotero.Attachments.BASE_PATH_PLACEHOLDER

# Zotero.Attachments.LINK_MODE_*; linked URLs (3) and embedded images (4) have no PDF file.
LINK_MODE_IMPORTED_FILE = 0
LINK_MODE_IMPORTED_URL = 1
LINK_MODE_LINKED_FILE = 2
LINK_MODE_LINKED_URL = 3
LINK_MODE_EMBEDDED_IMAGE = 4
_FILE_LINK_MODES = (LINK_MODE_IMPORTED_FILE, LINK_MODE_IMPORTED_URL, LINK_MODE_LINKED_FILE)
_NOT_REGULAR_TYPES = frozenset({"attachment", "note", "annotation"})
# What a skipped attachment is, for the log line (Zotero's content types).
_SKIPPED_KINDS = {
    "application/epub+zip": "EPUB",
    "text/html": "HTML snapshot",
    "application/xhtml+xml": "HTML snapshot",
}

# The base fields read; a type-specific field is read as the one it maps to (its own name when
# it maps to none).
_BASE_FIELDS = ("title", "date", "publicationTitle", "publisher")
_OTHER_FIELDS = ("conferenceName", "DOI", "abstractNote", "extra", "url")
# Zotero's firstCreator: these creator types, in order, when none has the primary type.
_FALLBACK_AUTHOR_TYPES = ("editor", "director", "contributor")
_REQUIRED_TABLES = frozenset(
    {
        "libraries",
        "groups",
        "items",
        "itemTypesCombined",
        "fieldsCombined",
        "baseFieldMappingsCombined",
        "itemTypeCreatorTypes",
        "itemData",
        "itemDataValues",
        "creators",
        "itemCreators",
        "creatorTypes",
        "tags",
        "itemTags",
        "collections",
        "collectionItems",
        "deletedItems",
        "itemAttachments",
    }
)
_COPY_ATTEMPTS = 5
_COPY_RETRY_SECONDS = 0.2
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_MULTIPART_DATE = re.compile(r"^\d{4}-\d{2}-\d{2} ")  # Zotero.Date.isMultipart
_EXTRA_DOI = re.compile(r"^\s*DOI:\s*(10\.\S+)\s*$", re.IGNORECASE | re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Creator:
    first_name: str
    last_name: str
    creator_type: str

    @property
    def display(self) -> str:
        """Last name, comma, first name; or the one name of a single-field creator."""
        if self.first_name and self.last_name:
            return f"{self.last_name}, {self.first_name}"
        return self.last_name or self.first_name


@dataclasses.dataclass(frozen=True)
class Attachment:
    """A PDF attachment. ``path`` is where the file should be (it may be missing); None when
    Zotero's stored path cannot be resolved here. ``ft_cache`` is set only when it exists.
    ``date_added`` is Zotero's UTC "YYYY-MM-DD HH:MM:SS"."""

    key: str
    parent_key: str | None
    path: pathlib.Path | None
    content_type: str
    link_mode: int
    ft_cache: pathlib.Path | None
    date_added: str = ""


@dataclasses.dataclass(frozen=True)
class ZoteroItem:
    """A regular item, or a standalone PDF (``item_type == "attachment"``). ``date`` is the
    text the user sees in Zotero; ``date_modified`` is Zotero's UTC "YYYY-MM-DD HH:MM:SS".
    ``creators`` are all of them in Zotero's order; ``authors`` those Zotero names the item by
    (see the module docstring). ``attachments`` come best first."""

    key: str
    library_id: int
    library_name: str
    item_type: str
    title: str
    creators: tuple[Creator, ...]
    date: str | None
    year: int | None
    publication: str | None
    doi: str | None
    abstract: str | None
    tags: tuple[str, ...]
    collection_keys: tuple[str, ...]
    attachments: tuple[Attachment, ...]
    date_modified: str
    authors: tuple[Creator, ...] = ()


# Zotero.Annotations.ANNOTATION_TYPE_* (xpcom/annotations.js).
ANNOTATION_TYPES = {1: "highlight", 2: "note", 3: "image", 4: "ink", 5: "underline", 6: "text"}


@dataclasses.dataclass(frozen=True)
class Annotation:
    """An annotation on a PDF attachment that is read. ``text`` is what a highlight or an
    underline covers (empty for the other types); ``comment`` is what the user wrote (a text
    annotation's own text is its comment). ``page`` is 1-based (``position.pageIndex`` + 1;
    None when the position has none), ``page_label`` the page's printed label, ``rects`` the
    region in PDF points (x1, y1, x2, y2), for an image annotation the text under it."""

    key: str
    attachment_key: str
    item_key: str  # the attachment's parent item, or the attachment for a standalone PDF
    annotation_type: str
    text: str
    comment: str
    color: str
    page: int | None
    page_label: str
    rects: tuple[tuple[float, float, float, float], ...]
    tags: tuple[str, ...]
    date_modified: str


@dataclasses.dataclass(frozen=True)
class Note:
    """A Zotero note: a child of ``parent_key``'s item, or standalone (``parent_key`` None; it
    is then an item of the snapshot too, of type ``note``). ``text`` is its HTML as text."""

    key: str
    library_id: int
    parent_key: str | None
    title: str
    text: str
    tags: tuple[str, ...]
    date_modified: str


@dataclasses.dataclass(frozen=True)
class Collection:
    key: str
    name: str
    parent_key: str | None
    library_id: int


@dataclasses.dataclass(frozen=True)
class LibrarySnapshot:
    """Every item and collection outside the trash, across the user and group libraries, and
    what the user wrote: the annotations of the PDFs read, and the notes."""

    items: list[ZoteroItem]
    collections: list[Collection]
    annotations: list[Annotation] = dataclasses.field(default_factory=list)
    notes: list[Note] = dataclasses.field(default_factory=list)

    def items_by_key(self) -> dict[str, ZoteroItem]:
        return {item.key: item for item in self.items}

    def collection_item_keys(self, collection_key: str, *, recursive: bool = True) -> set[str]:
        """Keys of the items in a collection and, if ``recursive``, in its sub-collections."""
        wanted = {collection_key}
        if recursive:
            children: defaultdict[str, list[str]] = defaultdict(list)
            for collection in self.collections:
                if collection.parent_key is not None:
                    children[collection.parent_key].append(collection.key)
            stack = [collection_key]
            while stack:
                for child in children[stack.pop()]:
                    if child not in wanted:
                        wanted.add(child)
                        stack.append(child)
        return {item.key for item in self.items if wanted.intersection(item.collection_keys)}


def read_library(
    zotero_dir: pathlib.Path, *, base_attachment_dir: pathlib.Path | None = None
) -> LibrarySnapshot:
    """Read a consistent snapshot of the Zotero library in ``zotero_dir``.

    ``base_attachment_dir`` is Zotero's "Linked Attachment Base Directory" preference, needed to
    resolve linked files stored as ``attachments:<relative path>``.
    Raises NotFound (``zotero_db_not_found``) or InvalidArgument (``not_a_zotero_db``).
    """
    db_path = zotero_dir / DB_FILE
    if not db_path.is_file():
        raise NotFound(f"No Zotero database at {db_path}", code="zotero_db_not_found")
    with tempfile.TemporaryDirectory(prefix="zocrates-zotero-") as tmp:
        for attempt in range(1, _COPY_ATTEMPTS + 1):
            before = _fingerprint(db_path)
            copy = _copy_database(db_path, pathlib.Path(tmp))
            changed = _fingerprint(db_path) != before
            if changed and attempt < _COPY_ATTEMPTS:
                logger.info("%s changed while being copied; copying again", db_path)
                time.sleep(_COPY_RETRY_SECONDS)
                continue
            if changed:
                logger.warning(
                    "%s kept changing over %d copies; reading the last", db_path, attempt
                )
            try:
                snapshot = _read_copy(copy, zotero_dir, base_attachment_dir)
            except sqlite3.DatabaseError as exc:
                if changed or attempt == _COPY_ATTEMPTS or not _looks_torn(exc):
                    raise InvalidArgument(
                        f"{db_path} is not a readable Zotero database: {exc}",
                        code="not_a_zotero_db",
                    ) from exc
                logger.info("copy of %s is inconsistent (%s); copying again", db_path, exc)
                continue
            logger.info(
                "read %d items and %d collections from %s",
                len(snapshot.items),
                len(snapshot.collections),
                db_path,
            )
            return snapshot
    raise AssertionError("unreachable")  # pragma: no cover


def parse_year(date: str | None) -> int | None:
    """The first non-zero 4-digit year in a Zotero date ("2008-00-00 2008" gives 2008)."""
    for match in _YEAR.finditer(date or ""):
        if year := int(match.group(1)):
            return year
    return None


def _fingerprint(db_path: pathlib.Path) -> tuple[tuple[int, int] | None, ...]:
    result: list[tuple[int, int] | None] = []
    for suffix in ("", "-journal", "-wal"):
        try:
            stat = os.stat(f"{db_path}{suffix}")
        except FileNotFoundError:
            result.append(None)
        else:
            result.append((stat.st_size, stat.st_mtime_ns))
    return tuple(result)


def _copy_database(db_path: pathlib.Path, dest_dir: pathlib.Path) -> pathlib.Path:
    copy = dest_dir / DB_FILE
    for suffix in ("", "-journal", "-wal", "-shm"):
        pathlib.Path(f"{copy}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(db_path, copy)
    for suffix in ("-journal", "-wal"):  # -shm is rebuilt from the WAL
        with contextlib.suppress(FileNotFoundError):
            shutil.copyfile(f"{db_path}{suffix}", f"{copy}{suffix}")
    return copy


def _looks_torn(exc: sqlite3.DatabaseError) -> bool:
    return "malformed" in str(exc) or "corrupt" in str(exc)


def _read_copy(
    copy: pathlib.Path, zotero_dir: pathlib.Path, base_attachment_dir: pathlib.Path | None
) -> LibrarySnapshot:
    # Read-write on our own copy, so SQLite can roll back a hot journal or replay a WAL.
    conn = sqlite3.connect(copy)
    try:
        tables = {
            row[0]
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = ?", ("table",))
        }
        missing = _REQUIRED_TABLES - tables
        if missing:
            raise InvalidArgument(
                f"{zotero_dir / DB_FILE} is not a Zotero database "
                f"(missing tables: {', '.join(sorted(missing))})",
                code="not_a_zotero_db",
            )
        return _Reader(conn, zotero_dir, base_attachment_dir, tables).read()
    finally:
        conn.close()


class _Reader:
    """One pass over the copied database: load the tables, then assemble the dataclasses."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        zotero_dir: pathlib.Path,
        base_attachment_dir: pathlib.Path | None,
        tables: set[str],
    ) -> None:
        self.conn = conn
        self.storage = zotero_dir / STORAGE_DIR
        self.base_attachment_dir = base_attachment_dir
        self.has_deleted_collections = "deletedCollections" in tables
        self.tables = tables

    def read(self) -> LibrarySnapshot:
        q = self.conn.execute
        library_names = self._library_names()
        type_names = dict(q("SELECT itemTypeID, typeName FROM itemTypesCombined").fetchall())
        trashed = {row[0] for row in q("SELECT itemID FROM deletedItems")}
        rows = q(
            "SELECT itemID, itemTypeID, libraryID, key, dateModified, dateAdded FROM items "
            "ORDER BY libraryID, itemID"
        ).fetchall()
        # itemID -> row, for the items outside the trash in a user or group library
        items = {r[0]: r for r in rows if r[0] not in trashed and r[2] in library_names}
        keys = {item_id: row[3] for item_id, row in items.items()}
        fields = self._fields()
        creators = self._creators()
        primary_types = self._primary_creator_types()
        tags = self._tags()
        collections, item_collections = self._collections(library_names)
        attachments, standalone = self._attachments(items, keys, fields)
        notes = self._notes(items, keys, tags)
        standalone_notes = {n.key: n for n in notes if n.parent_key is None}

        result = []
        for item_id, (_, type_id, library_id, key, modified, _) in items.items():
            type_name = type_names.get(type_id, "")
            if type_name in _NOT_REGULAR_TYPES and item_id not in standalone:
                note = standalone_notes.get(key)
                if note is not None:  # an item of its own, in its collections
                    result.append(
                        ZoteroItem(
                            key=key,
                            library_id=library_id,
                            library_name=library_names[library_id],
                            item_type="note",
                            title=note.title,
                            creators=(),
                            date=None,
                            year=None,
                            publication=None,
                            doi=None,
                            abstract=None,
                            tags=note.tags,
                            collection_keys=tuple(sorted(item_collections.get(item_id, ()))),
                            attachments=(),
                            date_modified=str(modified),
                        )
                    )
                continue
            values = fields.get(item_id, {})
            own = (standalone[item_id],) if item_id in standalone else attachments.get(item_id, ())
            date = values.get("date")
            everyone = tuple(creators.get(item_id, ()))
            result.append(
                ZoteroItem(
                    key=key,
                    library_id=library_id,
                    library_name=library_names[library_id],
                    item_type=type_name,
                    title=values.get("title") or "",
                    creators=everyone,
                    date=date[11:] if date and _MULTIPART_DATE.match(date) else date,
                    year=parse_year(date),
                    publication=_first(values, ("publicationTitle", "conferenceName", "publisher")),
                    doi=values.get("DOI") or _doi_from_extra(values.get("extra")),
                    abstract=values.get("abstractNote"),
                    tags=tuple(sorted(tags.get(item_id, ()), key=str.casefold)),
                    collection_keys=tuple(sorted(item_collections.get(item_id, ()))),
                    attachments=tuple(own),
                    date_modified=str(modified),
                    authors=_authors(everyone, primary_types.get(type_id)),
                )
            )
        annotations = self._annotations(items, keys, attachments, standalone, tags)
        return LibrarySnapshot(
            items=result, collections=collections, annotations=annotations, notes=notes
        )

    def _annotations(
        self,
        items: dict[int, tuple[int, int, int, str, str, str]],
        keys: dict[int, str],
        attachments: dict[int, list[Attachment]],
        standalone: dict[int, Attachment],
        tags: dict[int, list[str]],
    ) -> list[Annotation]:
        """The annotations of the PDF attachments read (outside the trash, as they are)."""
        if "itemAnnotations" not in self.tables:
            return []
        owner: dict[str, str] = {}  # attachment key -> the item it belongs to
        for parent_id, children in attachments.items():
            for attachment in children:
                owner[attachment.key] = keys[parent_id]
        for attachment in standalone.values():
            owner[attachment.key] = attachment.key
        out = []
        for item_id, parent_id, type_id, text, comment, color, label, position in self.conn.execute(
            "SELECT itemID, parentItemID, type, text, comment, color, pageLabel, position "
            "FROM itemAnnotations ORDER BY parentItemID, sortIndex, itemID"
        ):
            attachment_key = keys.get(parent_id)
            if item_id not in items or attachment_key not in owner:
                continue
            page, rects = _pdf_position(position)
            out.append(
                Annotation(
                    key=keys[item_id],
                    attachment_key=attachment_key,
                    item_key=owner[attachment_key],
                    annotation_type=ANNOTATION_TYPES.get(int(type_id or 0), "unknown"),
                    text=(text or "").strip(),
                    comment=(comment or "").strip(),
                    color=color or "",
                    page=page,
                    page_label=label or "",
                    rects=rects,
                    tags=tuple(sorted(tags.get(item_id, ()), key=str.casefold)),
                    date_modified=str(items[item_id][4]),
                )
            )
        return out

    def _notes(
        self,
        items: dict[int, tuple[int, int, int, str, str, str]],
        keys: dict[int, str],
        tags: dict[int, list[str]],
    ) -> list[Note]:
        """Child notes of the items read, and standalone notes (outside the trash)."""
        if "itemNotes" not in self.tables:
            return []
        out = []
        for item_id, parent_id, html, title in self.conn.execute(
            "SELECT itemID, parentItemID, note, title FROM itemNotes ORDER BY itemID"
        ):
            if item_id not in items or (parent_id is not None and parent_id not in items):
                continue  # trashed, or a note of an item in the trash
            text = note_text(html or "")
            if not text:
                continue
            out.append(
                Note(
                    key=keys[item_id],
                    library_id=items[item_id][2],
                    parent_key=keys.get(parent_id) if parent_id is not None else None,
                    title=(title or "").strip() or text.split("\n", 1)[0][:120],
                    text=text,
                    tags=tuple(sorted(tags.get(item_id, ()), key=str.casefold)),
                    date_modified=str(items[item_id][4]),
                )
            )
        return out

    def _library_names(self) -> dict[int, str]:
        groups = dict(self.conn.execute("SELECT libraryID, name FROM groups").fetchall())
        names = {}
        for library_id, library_type in self.conn.execute("SELECT libraryID, type FROM libraries"):
            if library_type == "user":
                names[library_id] = USER_LIBRARY_NAME
            elif library_type == "group":
                names[library_id] = groups.get(library_id) or f"Group library {library_id}"
        return names

    def _fields(self) -> dict[int, dict[str, str]]:
        """itemID -> {field name: value}, each type-specific field under its base field's name
        (``baseFieldMappingsCombined``), only the fields of ``_BASE_FIELDS`` and
        ``_OTHER_FIELDS``."""
        all_names = dict(self.conn.execute("SELECT fieldID, fieldName FROM fieldsCombined"))
        base_of = {
            field_id: all_names.get(base_id)
            for base_id, field_id in self.conn.execute(
                "SELECT DISTINCT baseFieldID, fieldID FROM baseFieldMappingsCombined"
            )
        }
        names = {}
        for field_id, name in all_names.items():
            canonical = base_of.get(field_id) or name
            if canonical in _BASE_FIELDS or canonical in _OTHER_FIELDS:
                names[field_id] = canonical
        marks = ", ".join("?" * len(names))
        result: defaultdict[int, dict[str, str]] = defaultdict(dict)
        for item_id, field_id, value in self.conn.execute(
            "SELECT itemData.itemID, itemData.fieldID, itemDataValues.value FROM itemData "
            f"JOIN itemDataValues ON itemDataValues.valueID = itemData.valueID "
            f"WHERE itemData.fieldID IN ({marks})",
            tuple(names),
        ):
            if value is not None and str(value).strip():
                result[item_id][names[field_id]] = str(value).strip()
        return result

    def _creators(self) -> dict[int, list[Creator]]:
        types = dict(self.conn.execute("SELECT creatorTypeID, creatorType FROM creatorTypes"))
        result: defaultdict[int, list[Creator]] = defaultdict(list)
        for item_id, first, last, field_mode, type_id in self.conn.execute(
            "SELECT itemCreators.itemID, creators.firstName, creators.lastName, "
            "creators.fieldMode, itemCreators.creatorTypeID FROM itemCreators "
            "JOIN creators ON creators.creatorID = itemCreators.creatorID "
            "ORDER BY itemCreators.itemID, itemCreators.orderIndex"
        ):
            single = field_mode == 1  # one-field name, kept in lastName
            result[item_id].append(
                Creator(
                    first_name="" if single else (first or ""),
                    last_name=last or "",
                    creator_type=types.get(type_id, "author"),
                )
            )
        return result

    def _primary_creator_types(self) -> dict[int, str]:
        """itemTypeID -> the name of its primary creator type (``author`` for most types)."""
        return dict(
            self.conn.execute(
                "SELECT itemTypeCreatorTypes.itemTypeID, creatorTypes.creatorType "
                "FROM itemTypeCreatorTypes JOIN creatorTypes "
                "ON creatorTypes.creatorTypeID = itemTypeCreatorTypes.creatorTypeID "
                "WHERE itemTypeCreatorTypes.primaryField = 1"
            ).fetchall()
        )

    def _tags(self) -> dict[int, list[str]]:
        result: defaultdict[int, list[str]] = defaultdict(list)
        for item_id, name in self.conn.execute(
            "SELECT itemTags.itemID, tags.name FROM itemTags "
            "JOIN tags ON tags.tagID = itemTags.tagID"
        ):
            result[item_id].append(name)
        return result

    def _collections(
        self, library_names: dict[int, str]
    ) -> tuple[list[Collection], dict[int, list[str]]]:
        rows = self.conn.execute(
            "SELECT collectionID, key, collectionName, parentCollectionID, libraryID "
            "FROM collections ORDER BY libraryID, collectionID"
        ).fetchall()
        trashed: set[int] = set()
        if self.has_deleted_collections:
            trashed = {
                r[0] for r in self.conn.execute("SELECT collectionID FROM deletedCollections")
            }
        parents = {r[0]: r[3] for r in rows}

        def live(collection_id: int | None) -> bool:  # neither it nor an ancestor is trashed
            seen: set[int] = set()
            while collection_id is not None and collection_id not in seen:
                if collection_id in trashed or collection_id not in parents:
                    return False
                seen.add(collection_id)
                collection_id = parents[collection_id]
            return True

        keys = {r[0]: r[1] for r in rows if r[4] in library_names and live(r[0])}
        collections = [
            Collection(key=keys[r[0]], name=r[2], parent_key=keys.get(r[3]), library_id=r[4])
            for r in rows
            if r[0] in keys
        ]
        members: defaultdict[int, list[str]] = defaultdict(list)
        for collection_id, item_id in self.conn.execute(
            "SELECT collectionID, itemID FROM collectionItems"
        ):
            if collection_id in keys:
                members[item_id].append(keys[collection_id])
        return collections, members

    def _attachments(
        self,
        items: dict[int, tuple[int, int, int, str, str, str]],
        keys: dict[int, str],
        fields: dict[int, dict[str, str]],
    ) -> tuple[dict[int, list[Attachment]], dict[int, Attachment]]:
        """PDF attachments by parent itemID (best first), and standalone PDFs by their own
        itemID. Other attachments are counted in one log line."""
        children: defaultdict[int, list[Attachment]] = defaultdict(list)
        standalone: dict[int, Attachment] = {}
        skipped: defaultdict[str, int] = defaultdict(int)
        order: dict[str, tuple[bool, str, int]] = {}
        for item_id, parent_id, link_mode, content_type, raw_path in self.conn.execute(
            "SELECT itemID, parentItemID, linkMode, contentType, path FROM itemAttachments "
            "ORDER BY itemID"
        ):
            if item_id not in items:
                continue
            if link_mode not in _FILE_LINK_MODES or content_type != PDF_CONTENT_TYPE:
                if parent_id is None or parent_id in items:
                    skipped[_skipped_kind(link_mode, content_type)] += 1
                    logger.debug(
                        "not indexing attachment %s (%s, linkMode %s): not a PDF file",
                        keys[item_id],
                        content_type or "no content type",
                        link_mode,
                    )
                continue
            key = keys[item_id]
            cache = self.storage / key / FT_CACHE_FILE
            attachment = Attachment(
                key=key,
                parent_key=keys.get(parent_id) if parent_id is not None else None,
                path=self._resolve(raw_path, key=key, link_mode=link_mode),
                content_type=content_type,
                link_mode=link_mode,
                ft_cache=cache if cache.is_file() else None,
                date_added=str(items[item_id][5]),
            )
            if parent_id is None:
                standalone[item_id] = attachment
            elif parent_id in items:
                children[parent_id].append(attachment)
                # Zotero.Item.getBestAttachments: the parent's URL first, then the oldest.
                parent_url = fields.get(parent_id, {}).get("url")
                own_url = fields.get(item_id, {}).get("url")
                order[key] = (
                    not parent_url or own_url != parent_url,
                    attachment.date_added,
                    item_id,
                )
        for siblings in children.values():
            siblings.sort(key=lambda a: order[a.key])
        if skipped:
            logger.info(
                "not indexing %d attachments that are not PDF files (only PDFs are indexed): %s",
                sum(skipped.values()),
                ", ".join(f"{n} {kind}" for kind, n in sorted(skipped.items())),
            )
        return children, standalone

    def _resolve(self, raw: str | None, *, key: str, link_mode: int) -> pathlib.Path | None:
        """Zotero's ``Item.getFilePath``: ``storage:<name>``, absolute, or ``attachments:<rel>``."""
        if not raw:
            return None
        if link_mode in (LINK_MODE_IMPORTED_FILE, LINK_MODE_IMPORTED_URL):
            name = raw.removeprefix(STORAGE_PREFIX)
            if name == raw or not name or name.startswith(".zotero"):
                return None
            return _inside(self.storage / key, name)
        if raw.startswith(BASE_DIR_PREFIX):
            if self.base_attachment_dir is None:
                return None
            return _inside(self.base_attachment_dir, raw.removeprefix(BASE_DIR_PREFIX))
        path = pathlib.Path(raw)
        return path if path.is_absolute() else None


def _inside(folder: pathlib.Path, relative: str) -> pathlib.Path | None:
    """``folder / relative`` (Zotero writes "/" on every platform), or None if it escapes."""
    base = pathlib.Path(os.path.normpath(folder))
    path = pathlib.Path(os.path.normpath(base / relative.replace("\\", "/")))
    return path if path != base and path.is_relative_to(base) else None


def _first(values: dict[str, str], names: tuple[str, ...]) -> str | None:
    return next((values[name] for name in names if name in values), None)


def _authors(creators: tuple[Creator, ...], primary_type: str | None) -> tuple[Creator, ...]:
    """The creators Zotero's ``firstCreator`` names: the primary type's, else the first of
    ``_FALLBACK_AUTHOR_TYPES`` that has any (none for, say, a book section with only its
    book's author)."""
    for creator_type in (primary_type or "author", *_FALLBACK_AUTHOR_TYPES):
        chosen = tuple(c for c in creators if c.creator_type == creator_type)
        if chosen:
            return chosen
    return ()


def _skipped_kind(link_mode: int | None, content_type: str | None) -> str:
    if link_mode == LINK_MODE_LINKED_URL:
        return "linked URL"
    if link_mode == LINK_MODE_EMBEDDED_IMAGE:
        return "image embedded in a note"
    if content_type in _SKIPPED_KINDS:
        return _SKIPPED_KINDS[content_type]
    return f"{content_type or 'unknown'} file"


def _doi_from_extra(extra: str | None) -> str | None:
    """Zotero keeps a DOI for item types without a DOI field as a "DOI: ..." line in Extra."""
    match = _EXTRA_DOI.search(extra or "")
    return match.group(1) if match else None


def _pdf_position(
    raw: str | None,
) -> tuple[int | None, tuple[tuple[float, float, float, float], ...]]:
    """(1-based page, rects) of a PDF annotation's ``position``; (None, ()) for another
    reader's (EPUB, snapshot) or a position that cannot be read."""
    try:
        position = json.loads(raw or "{}")
    except ValueError:
        return None, ()
    if not isinstance(position, dict) or not isinstance(position.get("pageIndex"), int):
        return None, ()
    rects = []
    for rect in position.get("rects") or []:
        if isinstance(rect, list) and len(rect) == 4:
            try:
                x1, y1, x2, y2 = (float(v) for v in rect)
            except (TypeError, ValueError):
                continue
            rects.append((x1, y1, x2, y2))
    return position["pageIndex"] + 1, tuple(rects)


# Elements after which a note's text breaks a line (Zotero's note editor writes these).
_BLOCKS = frozenset("p div br li ul ol h1 h2 h3 h4 h5 h6 blockquote pre tr table hr dt dd".split())


class _NoteText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self.skip += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")
        if tag == "li":
            self.parts.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def note_text(html: str) -> str:
    """A Zotero note's HTML as plain text: a paragraph (blank lines between) per paragraph,
    heading and list item, the words of each joined by single spaces."""
    parser = _NoteText()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n\n".join(line for line in lines if line)
