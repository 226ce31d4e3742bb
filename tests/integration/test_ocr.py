"""Scanned papers through the real library service: a PDF without a text layer (pages of a
real paper rendered to images) is listed as such by the keyword phase, read by Tesseract in
the OCR phase, and then found by search on its page, its page text readable for citations.
What OCR read is kept per page: a full re-index reads no page again. Without Tesseract the
stack runs, and the status says which PDFs need it and how to install it.
"""

from __future__ import annotations

import asyncio
import pathlib
import shutil
import time
from typing import Any

import pytest

from services.library.client import LibraryClient
from tests.support import zotero_fixture as zf
from tests.support.stack import running_library, running_reranker

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(600)]

PAPER = "sandwich__sandwich-CL.pdf"
SCAN_KEY = "SCANNED2"
# On page 2 of the paper, so page 1 of the two-page scan (pages 2 and 3).
SENTENCE = "clustered covariances are widely used to account for clustered correlations"


def _scanned_library(root: pathlib.Path) -> pathlib.Path:
    zotero = zf.build_zotero_library(root / "zotero", files=("lme4__lmer.pdf",))
    scan = zf.image_only_pdf(zf.default_papers_dir() / PAPER, root / "scan.pdf", pages=(2, 3))
    zf.add_journal_article(
        zotero, key=SCAN_KEY, title="Various Versatile Variances (scan)", pdf=scan
    )
    return zotero


async def _sync(client: LibraryClient, **kwargs: Any) -> dict[str, Any]:
    last: dict[str, Any] = {}
    async for progress in client.sync(**kwargs):
        last = progress
    return last


async def _ocr_idle(client: LibraryClient, timeout: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        status = await client.status()
        ocr = status["ocr_phase"]
        if not ocr["attachments_pending"] and not ocr["running"]:
            return status
        assert time.monotonic() < deadline, ocr
        await asyncio.sleep(0.5)


async def test_a_scanned_paper_is_read_by_ocr_and_found_on_its_page(
    tmp_path: pathlib.Path,
) -> None:
    assert shutil.which("tesseract"), "OCR needs Tesseract: apt-get install tesseract-ocr"
    zotero = _scanned_library(tmp_path)
    async with (
        running_reranker() as reranker,
        running_library(zotero, reranker_addr=reranker.runtime.address, ocr_dpi=200) as library,
    ):
        client = LibraryClient(library.runtime.address, timeout=120)
        try:
            first = await _sync(client)
            assert first["no_text"] == 1, first
            status = await _ocr_idle(client)
            assert status["attachment_states"]["no_text"] == 0, status["problems"]
            ocr = status["ocr_phase"]
            assert ocr["available"] and ocr["languages"] == "eng" and ocr["error"] == ""
            assert ocr["pages_done"] == 2 and ocr["pages_per_second"] >= 0

            hits, _ = await client.search(SENTENCE, k=3, mode="keyword")
            assert hits and hits[0]["item_key"] == SCAN_KEY and hits[0]["page"] == 1, hits
            read = await client.read_document(SCAN_KEY, start_page=1)
            assert "clustered correlations" in read["pages"][0]["text"]

            # A full re-index extracts the scan again (no text layer) and OCR re-reads
            # nothing: its pages come from what was kept.
            again = await _sync(client, full=True)
            assert again["no_text"] == 1
            status = await _ocr_idle(client)
            assert status["ocr_phase"]["pages_done"] == 2  # no page read a second time
            assert status["attachment_states"]["no_text"] == 0
            hits, _ = await client.search(SENTENCE, k=3, mode="keyword")
            assert hits[0]["item_key"] == SCAN_KEY
        finally:
            await client.close()


async def test_without_tesseract_the_status_says_what_needs_it_and_how_to_install_it(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZOCRATES_TESSERACT", str(tmp_path / "no-such-tesseract"))
    zotero = _scanned_library(tmp_path)
    async with (
        running_reranker() as reranker,
        running_library(zotero, reranker_addr=reranker.runtime.address) as library,
    ):
        client = LibraryClient(library.runtime.address, timeout=120)
        try:
            await _sync(client)
            await asyncio.sleep(1.0)  # the phase wakes after the sync and finds no Tesseract
            status = await client.status()
        finally:
            await client.close()
    ocr = status["ocr_phase"]
    assert not ocr["available"] and not ocr["running"]
    assert ocr["attachments_pending"] == 1 and ocr["pages_pending"] == 2
    assert "apt install tesseract-ocr" in ocr["error"]
    (scan,) = [p for p in status["problems"] if p["item_key"] == SCAN_KEY]
    assert scan["state"] == "no_text" and "OCR" in scan["reason"]
    assert status["attachment_states"]["indexed"] == 1  # the rest of the library is searchable
