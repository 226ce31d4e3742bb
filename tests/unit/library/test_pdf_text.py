"""Text extraction on the 38 real test papers, and on broken and cached inputs."""

from __future__ import annotations

import os
import pathlib
import unicodedata

import pypdf
import pytest

from services.common.errors import InvalidArgument, NotFound
from services.library import pdf_text

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


def test_running_headers_are_gone_and_the_body_stays(pages: dict[str, list[str]]) -> None:
    # lme4 alternates "Douglas Bates, Martin Mächler, Ben Bolker, Steve Walker 3" (odd pages)
    # and "4 Linear Mixed Models with lme4" (even pages) above the text.
    texts = pages["lme4__lmer.pdf"]
    for number, text in enumerate(texts[1:], start=2):
        lines = text.split("\n")
        assert not any(line.startswith("Douglas Bates, Martin Mächler") for line in lines), number
        assert f"{number} Linear Mixed Models with lme4" not in lines, number
    assert texts[2].startswith(
        "In a linear mixed model it is the conditional distribution of Y given B = b that has"
    )
    assert "Fitting Linear Mixed-Effects Models Using lme4" in texts[0]  # the title stays
    # JSS's two headers, R News's two headers, and lone page numbers at the foot.
    sandwich = pages["sandwich__sandwich.pdf"]
    assert not [
        line for p in sandwich for line in p.split("\n") if line.startswith("Achim Zeileis ")
    ]
    mvtnorm = pages["mvtnorm__MVT_Rnews.pdf"]
    assert mvtnorm[0].startswith("ON MULTIVARIATE t AND GAUSS PROBABILITIES IN R\n")
    assert all("TORSTEN HOTHORN, FRANK BRETZ" not in p for p in mvtnorm[1:])
    assert all("GAUSS PROBABILITIES IN R" not in p for p in mvtnorm[1:])
    for number, text in enumerate(pages["glmnet__Coxnet.pdf"], start=1):
        assert text.split("\n")[-1] != str(number), number


def test_a_word_hyphenated_across_a_page_break_is_joined(pages: dict[str, list[str]]) -> None:
    # lme4 p.1 ends "mixed models (al-", p.2 goes on, below its header, "though in this paper".
    first, second = pages["lme4__lmer.pdf"][:2]
    assert first.endswith("generalized linear mixed models (although")
    assert second.startswith("in this paper we restrict ourselves to linear mixed models).")


def test_math_set_in_tex_fonts_reads_as_its_symbols(pages: dict[str, list[str]]) -> None:
    # Ghostscript's ToUnicode tables for Latin Modern: É for omega, ♣ for |, ¶ ♢ for { }.
    sandwich, forecast = pages["sandwich__sandwich.pdf"], pages["forecast__JSS2008.pdf"]
    assert "HC0 : \N{GREEK SMALL LETTER OMEGA}i =" in sandwich[3]
    assert "HC0 : \N{LATIN CAPITAL LETTER E WITH ACUTE}i" not in sandwich[3]
    assert (
        "(Y|B = b) \N{TILDE OPERATOR} N (X\N{GREEK SMALL LETTER BETA} + Zb"
        in pages["lme4__lmer.pdf"][2]
    )
    assert "where {\N{GREEK SMALL LETTER EPSILON}t} is a Gaussian white noise" in "".join(forecast)
    assert "K ̃ := {1 . . . , K} is defined" in pages["flexmix__mixture-regressions.pdf"][2]
    rho = "cluster correlation \N{GREEK SMALL LETTER RHO}"  # was Ä
    assert rho in pages["sandwich__sandwich-CL.pdf"][20]
    # A big parenthesis (a raw CMEX code, U+0010) is a parenthesis again.
    assert (
        "\n(\n\N{GREEK SMALL LETTER THETA}i" in pages["bridgesampling__bridgesampling_paper.pdf"][6]
    )
    # The symbol font's raw negation slash before "=": "λ 6= 0" reads "λ ≠ 0".
    ordinal = pages["ordinal__clm_article.pdf"]
    assert "\N{GREEK SMALL LETTER LAMDA} \N{NOT EQUAL TO} 0" in ordinal[10]
    assert not any("\N{GREEK SMALL LETTER LAMDA} 6=" in text for text in ordinal)
    debris = set("♣♢¶ÉÈ¦Ã\u00b3\u00b4\u00b8\u00b9ÄÇ")
    for name, texts in pages.items():
        for number, text in enumerate(texts, start=1):
            assert not debris & set(text), (name, number, sorted(debris & set(text)))


def test_clean_pages_drops_alternating_headers_and_page_numbers() -> None:
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()
    raw = []
    for number in range(1, 7):
        header = f"{number} A Short Title" if number % 2 == 0 else f"A. Author, B. Author {number}"
        lines = [header] if number > 1 else ["The Full Title of the Paper"]
        if number in (2, 4):
            lines.append("We thank the reviewers for their comments.")  # twice, not running
        body = [
            f"Here {words[number + i]} and {words[number * i % 12]} say something."
            for i in range(5)
        ]
        raw.append("\n".join([*lines, *body, str(number)]))
    cleaned = pdf_text.clean_pages(raw)
    assert cleaned[0].startswith("The Full Title of the Paper\n")
    for number, text in enumerate(cleaned, start=1):
        lines = text.split("\n")
        assert "A Short Title" not in text and "A. Author" not in text, number
        assert lines[-1].startswith("Here "), number  # the page number is gone
        assert len(lines) == 5 + (number in (1, 2, 4)), number
        assert (lines[0] == "We thank the reviewers for their comments.") == (number in (2, 4))


def test_clean_pages_keeps_lines_that_repeat_without_running() -> None:
    # A figure label opens 3 of 12 pages: not a share of the pages, so it stays.
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()
    raw = [f"The {word} section goes on here.\nAnd ends with {word}." for word in words]
    for index in (2, 5, 9):
        raw[index] = "Empirical coverage\n" + raw[index]
    cleaned = pdf_text.clean_pages(raw)
    assert [p.startswith("Empirical coverage\n") for p in cleaned].count(True) == 3
    assert cleaned[0] == "The alpha section goes on here.\nAnd ends with alpha."


def test_clean_pages_joins_only_lowercase_continuations_across_pages() -> None:
    raw = [
        "the optimal step size is found by an opti-",
        "mizer, as usual.\nNext line.",
        "Springer-",
        "Verlag",
    ]
    assert pdf_text.clean_pages(raw)[:2] == [
        "the optimal step size is found by an optimizer,",
        "as usual.\nNext line.",
    ]
    assert pdf_text.clean_pages(raw)[2:] == ["Springer-", "Verlag"]
