"""What the researcher wrote in Zotero, as passages of the index: highlights and underlines
(the text under them, with the comment), the user's own words on a page (note, text, ink and
image annotations), and notes (child and standalone).

Each annotation is one passage (``kind`` highlight or comment) on its PDF's page; a note is
cut into passages like a paper's section (``chunking.chunk_document``), without a page. A
passage is stored as a chunk whose ``attachment_key`` is the annotation's or note's own key and
whose ``details`` say where it is (the PDF, the page label, the colour, the tags, the note's
title): search finds it by keyword and, once embedded, by meaning, in the scope of its item
(a child note and an annotation belong to their item; a standalone note is an item).

A sync compares a fingerprint of each (what is indexed of it) with the last one: only the
annotations and notes that are new, changed or gone are written, in one transaction, so a
re-sync after one new highlight costs one passage, not the library. Their chunks wait in the
embedding queue like any other.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable

from services.common.own_reading import COMMENT_LEAD, REGION_LEAD
from services.library import chunking, terms
from services.library.index_store import KIND_COMMENT, KIND_HIGHLIGHT, KIND_NOTE, IndexStore
from services.library.zotero import Annotation, LibrarySnapshot, Note

# Annotation types whose ``text`` is the paper's (what the mark covers).
_MARKS = ("highlight", "underline")
_ENDS_SENTENCE = re.compile(r"[.!?][\"')\]\u201d\u2019]*$")
_INSERT = """
INSERT INTO chunks(attachment_key, item_key, ordinal, page_start, page_end, section, text,
                   word_count, embedding, kind, details)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)
"""


@dataclasses.dataclass(frozen=True)
class Passage:
    """One chunk of what the user wrote."""

    text: str
    page: int  # 1-based; 0 for a note


@dataclasses.dataclass(frozen=True)
class UserWriting:
    """An annotation or a note, as the index keeps it. ``fingerprint`` is of what Zotero holds
    of it (not of the text under an image annotation's region, which the PDF gives): a sync
    compares it with the last one. One without words has no passages, but its fingerprint is
    kept all the same, so it is not looked at again until it changes."""

    key: str
    kind: str
    item_key: str
    passages: tuple[Passage, ...]
    details: dict[str, object]
    fingerprint: str


@dataclasses.dataclass(frozen=True)
class Changes:
    added: int = 0
    changed: int = 0
    removed: int = 0
    chunks_written: int = 0

    @property
    def any(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def _fingerprint(*parts: object) -> str:
    body = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.blake2b(body.encode(), digest_size=16).hexdigest()


def annotation_fingerprint(a: Annotation) -> str:
    return _fingerprint(
        a.annotation_type, a.attachment_key, a.item_key, a.text, a.comment, a.color, a.page,
        a.page_label, a.rects, a.tags,
    )  # fmt: skip


def annotation_passage(annotation: Annotation, under_region: str = "") -> UserWriting:
    """An annotation as a passage: a highlight's text and its comment, or the user's own
    words (and, for an image annotation, the text under its region); no passage when it holds
    no words (an ink stroke, an image without a comment over a figure)."""
    marked = " ".join(annotation.text.split()) if annotation.annotation_type in _MARKS else ""
    under = " ".join(under_region.split()) if annotation.annotation_type == "image" else ""
    parts = []
    if marked:
        # A highlight is often part of a sentence: ended with a full stop, it reads as one
        # (the citation check ignores punctuation, so it is still found on its page).
        parts.append(marked if _ENDS_SENTENCE.search(marked) else f"{marked}.")
    if annotation.comment:
        parts.append(f"{COMMENT_LEAD}{annotation.comment}" if marked else annotation.comment)
    if under:
        parts.append(f"{REGION_LEAD}{under}")
    kind = KIND_HIGHLIGHT if marked else KIND_COMMENT
    return UserWriting(
        key=annotation.key,
        kind=kind,
        item_key=annotation.item_key,
        passages=(Passage("\n\n".join(parts), annotation.page or 0),) if parts else (),
        fingerprint=annotation_fingerprint(annotation),
        details={
            "attachment_key": annotation.attachment_key,
            "annotation_type": annotation.annotation_type,
            "page_label": annotation.page_label,
            "color": annotation.color,
            "tags": list(annotation.tags),
            "highlighted": marked,
            "comment": annotation.comment,
        },
    )


def note_passages(note: Note) -> UserWriting:
    """A note, in passages of about a section chunk's size (its title heads the first)."""
    chunks = chunking.chunk_document([note.text], [])
    return UserWriting(
        key=note.key,
        kind=KIND_NOTE,
        # A child note is its item's; a standalone note is an item of its own.
        item_key=note.parent_key or note.key,
        passages=tuple(Passage(c.text, 0) for c in chunks) or (Passage(note.text, 0),),
        fingerprint=_fingerprint("note", note.parent_key, note.title, note.text, note.tags),
        details={
            "note_title": note.title,
            "standalone": note.parent_key is None,
            "tags": list(note.tags),
        },
    )


def writings(snapshot: LibrarySnapshot, regions: dict[str, str] | None = None) -> list[UserWriting]:
    """Every annotation and note of ``snapshot`` that holds words; ``regions``: the text under
    each image annotation's region, by its key, where it was read."""
    regions = regions or {}
    out = [annotation_passage(a, regions.get(a.key, "")) for a in snapshot.annotations]
    out.extend(note_passages(note) for note in snapshot.notes)
    return out


def regions_to_read(
    store: IndexStore, snapshot: LibrarySnapshot
) -> dict[str, list[tuple[str, int, tuple[tuple[float, float, float, float], ...]]]]:
    """The image annotations whose region's text is to be read from their PDF (new or changed
    since the last sync): by attachment key, (annotation key, page, rects)."""
    stored = store.user_passage_fingerprints()
    out: dict[str, list[tuple[str, int, tuple[tuple[float, float, float, float], ...]]]] = {}
    for a in snapshot.annotations:
        if a.annotation_type != "image" or not a.page or not a.rects:
            continue
        if stored.get(a.key) == annotation_fingerprint(a):
            continue
        out.setdefault(a.attachment_key, []).append((a.key, a.page, a.rects))
    return out


def sync(store: IndexStore, current: Iterable[UserWriting]) -> Changes:
    """Write what changed since the last sync (one transaction): new and changed writings
    replace their passages, gone ones are deleted."""
    stored = store.user_passage_fingerprints()
    wanted = {w.key: w for w in current}
    changed = [w for key, w in wanted.items() if key in stored and stored[key] != w.fingerprint]
    added = [w for key, w in wanted.items() if key not in stored]
    gone = [key for key in stored if key not in wanted]
    if not (changed or added or gone):
        return Changes()
    written = 0
    with store.writer() as conn:
        for key in gone + [w.key for w in changed]:
            _delete(conn, key)
        for writing in changed + added:
            written += _write(conn, writing)
    return Changes(len(added), len(changed), len(gone), written)


def _delete(conn: sqlite3.Connection, key: str) -> None:
    rows = conn.execute("SELECT text, section FROM chunks WHERE attachment_key = ?", (key,))
    counts = terms.document_frequencies(terms.chunk_text(r[0], r[1]) for r in rows)
    if counts:
        conn.executemany(
            "UPDATE term_df SET df = df - ? WHERE term = ?", [(n, t) for t, n in counts.items()]
        )
        conn.execute("DELETE FROM term_df WHERE df <= 0")
    conn.execute("DELETE FROM chunks WHERE attachment_key = ?", (key,))
    conn.execute("DELETE FROM user_passages WHERE source_key = ?", (key,))


def _write(conn: sqlite3.Connection, writing: UserWriting) -> int:
    details = json.dumps(writing.details, ensure_ascii=False, sort_keys=True)
    rows = [
        (
            writing.key,
            writing.item_key,
            ordinal,
            passage.page,
            passage.page,
            None,
            passage.text,
            len(passage.text.split()),
            writing.kind,
            details,
        )
        for ordinal, passage in enumerate(writing.passages)
    ]
    conn.executemany(_INSERT, rows)
    counts = terms.document_frequencies(terms.chunk_text(p.text, None) for p in writing.passages)
    conn.executemany(
        "INSERT INTO term_df(term, df) VALUES (?, ?) "
        "ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
        counts.items(),
    )
    conn.execute(
        "INSERT INTO user_passages(source_key, kind, item_key, fingerprint) VALUES (?, ?, ?, ?)",
        (writing.key, writing.kind, writing.item_key, writing.fingerprint),
    )
    return len(rows)
