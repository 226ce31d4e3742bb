"""Reading pages without a text layer (scans, photocopies) with Tesseract OCR.

``read_page`` renders one page of a PDF (PDFium, ``dpi``) to a greyscale image and has
Tesseract (the ``tesseract`` program of Debian's ``tesseract-ocr``, or ``ZOCRATES_TESSERACT``)
read it in ``languages`` (Tesseract's codes joined by ``+``: ``eng``, ``eng+deu``). It runs in
an extraction worker (``extraction.Job.ocr_page``): a hostile PDF costs a worker, never the
service. Tesseract gets one thread (``OMP_THREAD_LIMIT=1``): the worker already runs niced,
beside the embedder and the research turns.

Without Tesseract the stack runs as before: ``status()`` says which PDFs need it and how to
install it (:data:`INSTALL_HINT`).
"""

from __future__ import annotations

import functools
import os
import pathlib
import shutil
import subprocess

from services.common.errors import InvalidArgument, Unavailable
from services.library import pdf_text

TESSERACT_ENV = "ZOCRATES_TESSERACT"
DEFAULT_DPI = 300
PAGE_TIMEOUT = 300.0  # seconds for one page (a dense A4 page at 300 dpi: 5-15 s here)
INSTALL_HINT = (
    "Install Tesseract OCR to read them: `sudo apt install tesseract-ocr` (Debian, Ubuntu; "
    "tesseract-ocr-deu and others add languages), `brew install tesseract` (macOS), or the "
    "UB Mannheim installer (Windows); then restart Zocrates."
)


def tesseract() -> str | None:
    """The Tesseract program to run, or None when it is not installed."""
    configured = os.environ.get(TESSERACT_ENV)
    if configured:
        return configured if pathlib.Path(configured).is_file() else None
    return shutil.which("tesseract")


@functools.lru_cache(maxsize=8)
def installed_languages(program: str) -> frozenset[str]:
    """The languages ``program`` has data for (``tesseract --list-langs``)."""
    try:
        listed = subprocess.run(
            [program, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    lines = (listed.stdout or listed.stderr).splitlines()
    return frozenset(line.strip() for line in lines[1:] if line.strip())


def status(languages: str) -> dict[str, object]:
    """Whether OCR can run here in ``languages``, and what to do when it cannot."""
    program = tesseract()
    if program is None:
        return {"available": False, "error": f"Tesseract is not installed. {INSTALL_HINT}"}
    have = installed_languages(program)
    missing = [code for code in languages.split("+") if code and code not in have]
    if missing:
        return {
            "available": False,
            "error": (
                f"Tesseract has no data for {', '.join(missing)} (installed: "
                f"{', '.join(sorted(have)) or 'none'}); install tesseract-ocr-<language> or "
                "set ZOCRATES_OCR_LANGUAGES to installed ones."
            ),
        }
    return {"available": True, "error": ""}


def read_page(
    path: pathlib.Path, page: int, *, languages: str = "eng", dpi: int = DEFAULT_DPI
) -> str:
    """The text Tesseract reads on ``page`` (1-based) of the PDF at ``path``, cleaned like a
    text layer's page (``pdf_text.clean_text``).

    Raises:
        Unavailable: (code ``ocr_unavailable``) Tesseract is not installed.
        InvalidArgument: (``unreadable_pdf``, ``invalid_pages``) the page cannot be rendered,
            or (``ocr_failed``) Tesseract could not read it.
    """
    program = tesseract()
    if program is None:
        raise Unavailable(f"Tesseract is not installed. {INSTALL_HINT}", code="ocr_unavailable")
    image = _render(path, page, dpi)
    try:
        done = subprocess.run(
            [program, "stdin", "stdout", "-l", languages, "--dpi", str(dpi)],
            input=image,
            capture_output=True,
            timeout=PAGE_TIMEOUT,
            env={**os.environ, "OMP_THREAD_LIMIT": "1"},
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise InvalidArgument(
            f"Tesseract took over {PAGE_TIMEOUT:.0f} s on page {page} of {path.name}",
            code="ocr_failed",
        ) from exc
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InvalidArgument(
            f"Tesseract could not read page {page} of {path.name}: "
            f"{said[-1] if said else f'exit code {done.returncode}'}",
            code="ocr_failed",
        )
    return pdf_text.clean_text(done.stdout.decode("utf-8", "replace"))


def _render(path: pathlib.Path, page: int, dpi: int) -> bytes:
    """Page ``page`` of the PDF as a greyscale PGM image at ``dpi``."""
    with pdf_text.open_document(path) as doc:
        if not 1 <= page <= len(doc):
            raise InvalidArgument(
                f"{path.name} has {len(doc)} pages, not {page}", code="invalid_pages"
            )
        pdf_page = doc[page - 1]
        try:
            bitmap = pdf_page.render(scale=dpi / 72, grayscale=True)
            pixels = bitmap.to_numpy()
        finally:
            pdf_page.close()
    if pixels.ndim == 3:
        pixels = pixels[:, :, 0]
    height, width = pixels.shape
    return b"P5\n%d %d\n255\n" % (width, height) + pixels.tobytes()
