"""Text extraction on the 38 real test papers, and on broken and cached inputs."""

from __future__ import annotations

import os
import pathlib
import unicodedata

import pypdf
import pytest

from services.agent.library import pdf_text
from services.common.errors import InvalidArgument, NotFound

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
LIGATURES = "".join(chr(c) for c in range(0xFB00, 0xFB07))


def papers_dir() -> pathlib.Path:
    folder = pathlib.Path(
        os.environ.get("ZOCRATES_TEST_PAPERS_DIR", REPO_ROOT.parent / "shared/data/papers")
    )
    if not sorted(folder.glob("*.pdf")):
        pytest.fail(f"No test papers in {folder}: set ZOCRATES_TEST_PAPERS_DIR to the folder")
    return folder


@pytest.fixture(scope="module")
def pages() -> dict[str, list[str]]:
    """Every paper's extracted pages, by file name (extracted once for the module)."""
    return {pdf.name: pdf_text.extract_pages(pdf) for pdf in sorted(papers_dir().glob("*.pdf"))}


def test_one_text_per_page_for_all_38_papers(pages: dict[str, list[str]]) -> None:
    assert len(pages) == 38
    for name, texts in pages.items():
        assert len(texts) == pdf_text.pdf_page_count(papers_dir() / name), name
    assert sum(len(texts) for texts in pages.values()) == 1045


def test_text_is_nfkc_without_ligatures_or_control_characters(
    pages: dict[str, list[str]],
) -> None:
    for name, texts in pages.items():
        for number, text in enumerate(texts, start=1):
            where = f"{name} p.{number}"
            assert not any(ch in LIGATURES for ch in text), where
            assert unicodedata.normalize("NFKC", text) == text, where
            assert not [ch for ch in text if ch != "\n" and unicodedata.category(ch) == "Cc"]
            assert "\ufffe" not in text and "\x00" not in text, where


def test_whitespace_is_normalised_within_lines(pages: dict[str, list[str]]) -> None:
    for name, texts in pages.items():
        for text in texts:
            assert "\n\n\n" not in text, name
            for line in text.split("\n"):
                assert line == " ".join(line.split()), (name, line)


def test_pages_carry_text(pages: dict[str, list[str]]) -> None:
    words = [len(text.split()) for texts in pages.values() for text in texts]
    assert sum(n > 50 for n in words) / len(words) > 0.95


def test_hyphenated_line_breaks_are_joined(pages: dict[str, list[str]]) -> None:
    # lme4 p.2 hyphenates "var-ious", "re-search", "describ-ing" and "formu-lations" at line
    # ends (PDFium marks them with U+FFFE).
    text = pages["lme4__lmer.pdf"][1]
    assert "(various forms of heteroscedasticity" in text
    assert "an active area of research with many open problems" in text
    assert "restricted to describing the current stable version" in text
    assert "with previous formulations of mixed models" in text
    assert "var-" not in text and "re-search" not in text


def test_broken_tex_ligatures_are_mended(pages: dict[str, list[str]]) -> None:
    # strucchange's Type 1 fonts map "fl" and "fi" to control characters.
    text = pages["strucchange__strucchange-intro.pdf"][2]
    assert "4 Generalized fluctuation tests" in text.split("\n")


def test_paragraph_breaks_are_kept(pages: dict[str, list[str]]) -> None:
    text = pages["lme4__lmer.pdf"][1]
    assert "(Section 1.3).\n\n1.1. Linear mixed models\n\nJust as a linear model" in text
    assert "handle (see Appendix A).\n\nThe development of general software" in text


def test_clean_text_joins_a_word_split_by_a_line_end_hyphen() -> None:
    assert pdf_text.clean_text("an opti-\nmizer and the M3-\ncompetition") == (
        "an optimizer and the M3-\ncompetition"
    )
    assert pdf_text.clean_text("Springer-\nVerlag") == "Springer-\nVerlag"


def test_garbage_bytes_raise_unreadable_pdf(tmp_path: pathlib.Path) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 8)
    for read in (pdf_text.extract_pages, pdf_text.pdf_page_count):
        with pytest.raises(InvalidArgument) as caught:
            read(broken)
        assert caught.value.code == "unreadable_pdf"
        assert "broken.pdf" in caught.value.message


def test_password_protected_pdf_raises_unreadable_pdf(tmp_path: pathlib.Path) -> None:
    writer = pypdf.PdfWriter()
    writer.add_page(pypdf.PdfReader(papers_dir() / "AER__AER.pdf").pages[0])
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    locked = tmp_path / "locked.pdf"
    with locked.open("wb") as fh:
        writer.write(fh)
    with pytest.raises(InvalidArgument) as caught:
        pdf_text.extract_pages(locked)
    assert caught.value.code == "unreadable_pdf"
    assert "locked.pdf" in caught.value.message and "encrypted" in caught.value.message


def test_missing_file_raises_not_found(tmp_path: pathlib.Path) -> None:
    with pytest.raises(NotFound):
        pdf_text.extract_pages(tmp_path / "absent.pdf")
    with pytest.raises(NotFound):
        pdf_text.read_ft_cache(tmp_path / ".zotero-ft-cache")


def test_ft_cache_pages_split_at_form_feeds(tmp_path: pathlib.Path) -> None:
    cache = tmp_path / ".zotero-ft-cache"
    cache.write_text(
        "First  page with an opti-\nmizer\fSecond \ufb01le page\n\n\nNext paragraph\f",
        encoding="utf-8",
    )
    assert pdf_text.read_ft_cache(cache) == [
        "First page with an optimizer",
        "Second file page\nNext paragraph",
    ]


def test_ft_cache_without_form_feeds_is_one_page(tmp_path: pathlib.Path) -> None:
    cache = tmp_path / ".zotero-ft-cache"
    cache.write_text("E\ufb00ective  \ufb01tting\nof models\x00\n", encoding="utf-8")
    assert pdf_text.read_ft_cache(cache) == ["Effective fitting\nof models"]
