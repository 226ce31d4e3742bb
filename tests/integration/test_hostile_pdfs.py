"""Hostile PDFs next to a real paper, through the real sync: Zotero-shaped library -> indexer ->
extraction workers -> index. Each hostile file ends skipped (failed, no text) or partly indexed
with its reason, the real paper is indexed and searchable, and neither time nor memory runs
away: the test's timeout bounds the first, the workers' memory cap the second (no PDF is
opened in the agent's own process).

The PDFs are written here byte by byte (``_pdf``): a truncated and a random file, encrypted
ones (pypdf), thousands of pages, a page with a giant content stream, zip bombs (a content
stream, and an object stream holding the page tree, that inflate to GiBs), deep and cyclic
structures, and a scanned document (images, no text).
"""

from __future__ import annotations

import io
import pathlib
import random
import resource
import zlib

import pypdf
import pytest

from services.library import extraction, pdf_text
from services.library.index_store import (
    STATE_FAILED,
    STATE_INDEXED,
    STATE_NO_TEXT,
    IndexStore,
)
from services.library.indexer import LibraryIndexer, SyncProgress
from tests.support import zotero_fixture as zf

pytestmark = [pytest.mark.timeout(300)]

GOOD = "sandwich__sandwich-CL.pdf"
MEMORY_LIMIT = 512 << 20  # per extraction worker, here
FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
WORDS = (
    "mixed models random effects variance components likelihood estimation bootstrap "
    "sandwich estimator clustered errors regression panel data optimizer convergence"
).split()


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (object n is ``objects[n - 1]``; object 1 the catalog) with a
    correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _stream(data: bytes, entries: bytes = b"") -> bytes:
    return b"<< /Length %d %s >>\nstream\n%s\nendstream" % (len(data), entries, data)


def _text(lines: list[str], size: int = 11) -> bytes:
    ops = [b"BT /F1 %d Tf 72 720 Td %d TL" % (size, size + 3)]
    ops += [b"(%s) '" % line.encode("latin-1") for line in lines]
    return b"\n".join([*ops, b"ET"])


def _one_page(contents: bytes, *, resources: bytes = b"", catalog: bytes = b"") -> list[bytes]:
    return [
        b"<< /Type /Catalog /Pages 2 0 R %s >>" % catalog,
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> %s >> /Contents 5 0 R >>" % resources,
        FONT,
        contents,
    ]


def _sentences(rng: random.Random, count: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(12)) + "." for _ in range(count)]


def _inflating_to(prefix: bytes, gib: int, block: int = 1 << 24) -> bytes:
    """A zlib stream of ``prefix`` then ``gib`` GiB of spaces, about 1 MB per GiB: one deflated
    block of spaces repeated (each ends in a full flush, so none depends on the one before),
    with the right Adler-32 (closed form: every byte after the prefix is a space)."""
    deflate = zlib.compressobj(9)
    head = deflate.compress(prefix + b" " * block) + deflate.flush(zlib.Z_FULL_FLUSH)
    again = deflate.compress(b" " * block) + deflate.flush(zlib.Z_FULL_FLUSH)
    tail = deflate.flush()[:-4]
    count = gib * (1 << 30) // block
    spaces = count * block
    a0 = zlib.adler32(prefix) & 0xFFFF
    b0 = zlib.adler32(prefix) >> 16
    a = (a0 + 32 * spaces) % 65521
    b = (b0 + spaces * a0 + 32 * spaces * (spaces + 1) // 2) % 65521
    return head + again * (count - 1) + tail + ((b << 16) | a).to_bytes(4, "big")


def _content_bomb() -> bytes:
    """One page whose content stream inflates to 4 GiB (PDFium reads it whole)."""
    bomb = _inflating_to(_text(_sentences(random.Random(1), 3)) + b"\n", 4)
    return _pdf(_one_page(_stream(bomb, b"/Filter /FlateDecode")))


def _object_stream_bomb() -> bytes:
    """The page tree in an object stream that inflates to 2 GiB: opening the file, even to
    count its pages, inflates it (a PDF 1.5 cross-reference stream points into it)."""
    pages = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>"
    )
    header = b"2 0 3 %d " % (len(pages) + 1)
    objstm = _inflating_to(header + pages + b" " + page + b" ", 2)
    out = bytearray(b"%PDF-1.7\n")
    offsets = {}
    for number, body in (
        (1, b"<< /Type /Catalog /Pages 2 0 R >>"),
        (4, FONT),
        (5, _stream(_text(_sentences(random.Random(2), 3)))),
        (6, _stream(objstm, b"/Type /ObjStm /N 2 /First %d /Filter /FlateDecode" % len(header))),
    ):
        offsets[number] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    rows = [b"\0\0\0\0\xff\xff"]
    for number in range(1, 8):
        if number in (2, 3):  # compressed: object stream 6, index 0 and 1
            rows.append(b"\2" + (6).to_bytes(3, "big") + (number - 2).to_bytes(2, "big"))
        else:
            rows.append(b"\1" + offsets.get(number, xref).to_bytes(3, "big") + b"\0\0")
    table = b"".join(rows)
    out += b"7 0 obj\n<< /Type /XRef /Size 8 /W [1 3 2] /Root 1 0 R /Length %d >>\n" % len(table)
    out += b"stream\n%s\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % (table, xref)
    return bytes(out)


def _many_pages(count: int) -> bytes:
    rng = random.Random(3)
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count),
        FONT,
    ]
    for i in range(count):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * i)
        )
        objects.append(_stream(_text([f"Part {i + 1}", *_sentences(rng, 3)])))
    return _pdf(objects)


def _giant_page() -> bytes:
    """One page with 4,000 lines of text in its content stream (about 350,000 characters, more
    than 30 dense pages; PDFium needs about 200 bytes per character of a page)."""
    lines = _sentences(random.Random(4), 4_000)
    ops = b"BT /F1 1 Tf 0 790 Td 0.02 TL\n" + b"\n".join(b"(%s) '" % s.encode() for s in lines)
    return _pdf(_one_page(_stream(zlib.compress(ops + b"\nET"), b"/Filter /FlateDecode")))


def _nested_arrays() -> bytes:
    deep = b"[" * 100_000 + b"]" * 100_000
    text = _stream(_text(_sentences(random.Random(5), 4)) + b"\n" + deep + b" pop")
    return _pdf(_one_page(text, resources=b"/Deep " + deep, catalog=b"/Deep " + deep))


def _deep_page_tree(depth: int = 5000) -> bytes:
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level in range(depth):  # object 2 + level, its kid the next
        parent = b"/Parent %d 0 R" % (1 + level) if level else b""
        objects.append(b"<< /Type /Pages /Kids [%d 0 R] /Count 1 %s >>" % (3 + level, parent))
    leaf = 2 + depth
    objects.append(
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>"
        % (leaf - 1, leaf + 1, leaf + 2)
    )
    objects += [FONT, _stream(_text(_sentences(random.Random(6), 3)))]
    return _pdf(objects)


def _cyclic_page_tree() -> bytes:
    objects = _one_page(_stream(_text(_sentences(random.Random(7), 3))))
    objects[1] = b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>"  # it is its own kid
    return _pdf(objects)


def _self_drawing_form() -> bytes:
    """A form XObject that draws itself twice: a 1 KB page that grows past 20 GB uncapped."""
    objects = _one_page(
        _stream(_text(_sentences(random.Random(8), 3)) + b"\n/X Do"),
        resources=b"/XObject << /X 6 0 R >>",
        catalog=b"/Outlines 7 0 R",
    )
    objects.append(
        _stream(
            b"BT /F1 9 Tf 72 600 Td (again) Tj ET /X Do /X Do",
            b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] "
            b"/Resources << /Font << /F1 4 0 R >> /XObject << /X 6 0 R >> >>",
        )
    )
    # and a cyclic outline: each bookmark is the other's next and child
    objects.append(b"<< /Type /Outlines /First 8 0 R /Last 9 0 R /Count 2 >>")
    objects.append(b"<< /Title (One) /Parent 7 0 R /Next 9 0 R /First 9 0 R /Dest [3 0 R /Fit] >>")
    objects.append(b"<< /Title (Two) /Parent 8 0 R /Next 8 0 R /First 8 0 R /Dest [3 0 R /Fit] >>")
    return _pdf(objects)


def _scanned(pages: int = 3) -> bytes:
    rng = random.Random(9)
    kids = b" ".join(b"%d 0 R" % (3 + 3 * i) for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
    ]
    for i in range(pages):
        page, contents, image = 3 + 3 * i, 4 + 3 * i, 5 + 3 * i
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /XObject << /Im %d 0 R >> >> >>" % (contents, image)
        )
        assert len(objects) == page
        objects.append(_stream(b"q 512 0 0 692 50 50 cm /Im Do Q"))
        objects.append(
            _stream(
                rng.randbytes(128 * 128),
                b"/Type /XObject /Subtype /Image /Width 128 /Height 128 "
                b"/ColorSpace /DeviceGray /BitsPerComponent 8",
            )
        )
    return _pdf(objects)


def _encrypted(user_password: str) -> bytes:
    writer = pypdf.PdfWriter(clone_from=str(zf.default_papers_dir() / "lme4__lmer.pdf"))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _hostile_files() -> dict[str, bytes]:
    real = (zf.default_papers_dir() / "ordinal__clm_article.pdf").read_bytes()
    files = {
        "truncated.pdf": real[: len(real) * 2 // 5],
        "random.pdf": b"%PDF-1.7\n" + random.Random(10).randbytes(300_000),
        "locked.pdf": _encrypted("secret"),
        "owner-only.pdf": _encrypted(""),
        "many-pages.pdf": _many_pages(3000),
        "giant-page.pdf": _giant_page(),
        "object-stream-bomb.pdf": _object_stream_bomb(),
        "nested-arrays.pdf": _nested_arrays(),
        "deep-page-tree.pdf": _deep_page_tree(),
        "cyclic-page-tree.pdf": _cyclic_page_tree(),
        "self-drawing-form.pdf": _self_drawing_form(),
        "scanned.pdf": _scanned(),
        "content-bomb.pdf": _content_bomb(),
    }
    return files


def _peak_kib(who: int) -> int:
    return resource.getrusage(who).ru_maxrss  # KiB on Linux


# Uncapped, the bombs and the self-drawing form would take tens of GB of the machine.
@pytest.mark.skipif(not extraction.MEMORY_LIMIT_ENFORCED, reason="the cap is Linux's RLIMIT_AS")
async def test_hostile_pdfs_are_skipped_or_cut_with_a_reason_and_the_paper_is_indexed(
    tmp_path: pathlib.Path,
) -> None:
    zotero = zf.build_zotero_library(tmp_path / "Zotero", files=[GOOD])
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    keys = {}
    for name, data in _hostile_files().items():
        (hostile / name).write_bytes(data)
        keys[name] = zf.add_standalone_pdf(zotero, hostile / name)
    store = IndexStore(tmp_path / "index" / "index.sqlite3")
    indexer = LibraryIndexer(store, workers=2, timeout=120, memory_limit=MEMORY_LIMIT)
    agent_peak, workers_peak = _peak_kib(resource.RUSAGE_SELF), _peak_kib(resource.RUSAGE_CHILDREN)
    try:
        progress = [SyncProgress(**vars(p)) async for p in indexer.sync(zotero)]
        rows = store.attachment_rows()
        problems = {p["attachment_key"]: p for p in store.problem_attachments(limit=50)}
        item = store.item(zf.paper_item_key(GOOD))
    finally:
        store.close()

    # The agent's process read no PDF: its peak memory did not grow by a bomb's worth.
    assert _peak_kib(resource.RUSAGE_SELF) - agent_peak < 300 << 10
    # No worker went far past its cap (RSS <= its address space <= what it mapped at start +
    # the cap). What a spawned worker maps at start (the interpreter, PDFium, thread stacks)
    # varies by machine: up to a GiB is allowed for it; uncapped, the bombs take 2-20 GB.
    assert _peak_kib(resource.RUSAGE_CHILDREN) <= max(
        workers_peak, (MEMORY_LIMIT >> 10) + (1 << 20)
    )

    good = rows[zf.paper_attachment_key(GOOD)]
    assert (good["state"], good["error"]) == (STATE_INDEXED, None) and good["page_count"] > 20
    title = next(p.title for p in zf.read_manifest() if p.file == GOOD)
    assert item is not None and item["title"] == title

    state = {name: rows[key]["state"] for name, key in keys.items()}
    reason = {name: rows[key]["error"] or "" for name, key in keys.items()}
    expected = {
        "truncated.pdf": (STATE_FAILED, "not a valid PDF"),
        "random.pdf": (STATE_FAILED, "not a valid PDF"),
        "locked.pdf": (STATE_FAILED, "encrypted"),
        "owner-only.pdf": (STATE_INDEXED, ""),  # no password needed to read it
        "many-pages.pdf": (STATE_INDEXED, ""),
        "giant-page.pdf": (STATE_INDEXED, "partly indexed: the text of 1 page(s) (1) was cut"),
        "object-stream-bomb.pdf": (STATE_FAILED, "crashed on this file (killed by SIGABRT)"),
        "nested-arrays.pdf": (STATE_INDEXED, ""),
        "deep-page-tree.pdf": (STATE_FAILED, "a page is unreadable"),
        "cyclic-page-tree.pdf": (STATE_FAILED, "a page is unreadable"),
        "self-drawing-form.pdf": (STATE_FAILED, "crashed on this file (killed by SIGABRT)"),
        "scanned.pdf": (STATE_NO_TEXT, "the OCR phase reads its pages"),
        "content-bomb.pdf": (STATE_FAILED, "crashed on this file (killed by SIGABRT)"),
    }
    for name in keys:
        want_state, want_reason = expected[name]
        assert state[name] == want_state, (name, reason[name])
        assert want_reason in reason[name], name
        if want_state != STATE_INDEXED or want_reason:  # listed for the user, with the reason
            assert problems[keys[name]]["reason"] == reason[name], name
    assert "of memory" in reason["self-drawing-form.pdf"]
    assert rows[keys["many-pages.pdf"]]["page_count"] == 3000
    lme4 = zf.default_papers_dir() / "lme4__lmer.pdf"
    assert rows[keys["owner-only.pdf"]]["page_count"] == pdf_text.pdf_page_count(lme4)
    giant = rows[keys["giant-page.pdf"]]
    assert giant["page_count"] == 1

    final = progress[-1]
    failed = sum(s == STATE_FAILED for s in state.values())
    assert (final.phase, final.failed, final.no_text) == ("done", failed, 1)
    assert final.added == 1 + len(keys) - failed
    indexing = [p for p in progress if p.phase == "indexing"]
    assert indexing[0].items_total == 1 + len(keys)


def test_text_past_the_caps_is_cut_and_said_so() -> None:
    pages = ["a" * 50, "b" * 300, "c" * 80, "d" * 80]
    kept, reason = extraction.limit_text(pages, page_chars=200, document_chars=400)
    assert [len(p) for p in kept] == [50, 200, 80, 70]
    assert reason == (
        "partly indexed: the text of 1 page(s) (2) was cut at 200 characters, more than a real "
        "page holds; the text past 400 characters (from page 4 on) was left out"
    )
    assert extraction.limit_text(["short"]) == (["short"], None)
