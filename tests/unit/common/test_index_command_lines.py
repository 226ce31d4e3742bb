"""What `zocrates index` and `zocrates search` print about scanned PDFs and your own reading."""

from __future__ import annotations

from services.stack.library_commands import _ocr_line


def test_the_ocr_line_says_what_waits_and_how_to_install_tesseract() -> None:
    assert _ocr_line({}) == ""
    assert _ocr_line({"attachments_pending": 0, "pages_pending": 0, "available": True}) == ""
    reading = _ocr_line({"attachments_pending": 2, "pages_pending": 31, "available": True})
    assert reading.startswith("31 page(s) without a text layer (scans) in 2 PDF(s): OCR reads")
    missing = _ocr_line(
        {
            "attachments_pending": 1,
            "pages_pending": 3,
            "available": False,
            "error": "Tesseract is not installed. Install Tesseract OCR: "
            "sudo apt install tesseract-ocr",
        }
    )
    assert missing.endswith("wait for OCR: Tesseract is not installed. Install Tesseract OCR: "
                            "sudo apt install tesseract-ocr")  # fmt: skip
