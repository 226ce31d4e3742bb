"""Characters set in TeX's math fonts, repaired by font: "(Y♣B = b)" reads "(Y|B = b)".

TeX's math fonts (Computer Modern and Latin Modern math italic, symbols and extension) use
their own encodings (OML, OMS, OMX), in which a character code says nothing of the letter.
A PDF maps codes to Unicode through a ToUnicode table, or PDFium guesses from glyph names;
both go wrong in two ways seen in the test papers:

- Ghostscript (9.5x, the JSS papers) writes ToUnicode tables for Latin Modern that send
  Greek letters to Latin-1 ("É" for omega, "¹" for theta, "Ã" for both pi and sigma) and
  delimiters to card suits ("♣" for |, "¶" and "♢" for { and }, "¦" for the transpose T);
- a glyph name PDFium does not know leaves the raw code, a control character for TeX's
  positions below 32 (a big "(" is U+0010) or an ASCII letter ("X" for a display ∑).

PDFium tells the font of each character (``FPDFText_GetFontInfo``). Checking every character
would more than double the extraction time, so ``repair`` first looks at the page's text for the
characters these failures produce (control characters, Latin-1 symbols and letters, card
suits) and asks only about those. Each one drawn in a TeX math font becomes what that font's
encoding puts there: a control character maps through OML/OMS/OMX; a Ghostscript Latin-1 or
suit substitute maps back through the tables below when only one letter leads to it; any
other such character in a math font is dropped (an ambiguous "Ã" included): a missing
letter misleads less than a wrong one. Characters in other fonts are never touched. Of the
raw ASCII codes only "6=" (a negated "=") and "7→" (maps to) are looked at; the rest (the "X"
of a display sum, the "b" of a wide hat) are left alone: telling them from real letters would
need the font of every letter.
"""

from __future__ import annotations

import ctypes
import functools
import re

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_OML, _OMS, _OMX = "oml", "oms", "omx"
_FONT_CLASSES = (
    (_OML, re.compile(r"CMMIB?\d+|LMMathItalic\d+(?:-\w+)?")),
    (_OMS, re.compile(r"CMB?SY\d+|LMMathSymbols\d+(?:-\w+)?")),
    (_OMX, re.compile(r"CMEX\d+|LMMathExtension\d+(?:-\w+)?")),
)
_SUBSET_PREFIX_RE = re.compile(r"^[A-Z]{6}\+")

# What a failed mapping leaves behind: control characters (raw TeX codes below 32, not tab
# or line ends), Latin-1 symbols and letters, card suits; and the raw codes of the symbol
# font's negation slash and maps-to bar, "6" before "=" ("6=" for "≠") and "7" before "→".
_SUSPECT_RE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\u00a0-\u00ff\u2660-\u2667]|6(?==)|7(?=\u2192)"
)
# OMS's raw codes among those: the negation slash (pdf_text makes "\u0338=" a "≠") and the
# bar of "↦" (dropped: the arrow stays).
_OMS_ASCII = {"6": "\u0338", "7": ""}
_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")

# TeX's encodings below 32 (the positions a raw code turns into control characters).
_OML_LOW = "ΓΔΘΛΞΠΣΥΦΨΩαβγδϵζηθικλμνξπρστυϕχ"
_OMS_LOW = "−·×∗÷⋄±∓⊕⊖⊗⊘⊙◯∘∙≍≡⊆⊇≤≥⪯⪰∼≈⊂⊃≪≫≺≻"  # noqa: RUF001 (maths, not ASCII)
# OMX 0-31: delimiters in two sizes (12 and 13 are pieces of tall bars: not text).
_OMX_LOW = (*"()[]⌊⌋⌈⌉{}⟨⟩", "", "", *"/\\()()[]⌊⌋⌈⌉{}⟨⟩/\\")

# Ghostscript's Latin Modern substitutes, by the character each stands for (found in the
# test papers' ToUnicode tables; only those that one character leads to).
_GHOSTSCRIPT = {
    _OML: dict(zip("³´¶¸¹ÄÇÈÉ", "αβδηθρχψω", strict=True)),  # noqa: RUF001
    _OMS: dict(zip("♣¶♢¦", "|{}⊤", strict=True)),  # noqa: RUF001
    _OMX: {},
}
# Latin-1 characters a math font does draw: kept.
_KEPT = {
    _OML: frozenset("µ"),
    _OMS: frozenset("×·±¬÷§"),  # noqa: RUF001
    _OMX: frozenset(),
}
# Card suits in the symbol font are its own glyphs (heart, spade) unless replaced above.
_SUITS = frozenset(chr(c) for c in range(0x2660, 0x2668))

_FONT_NAME_SIZE = 128


def repair(textpage: pdfium.PdfTextPage, text: str) -> str:
    """``text`` (``textpage.get_text_range()``) with characters set in TeX math fonts
    mapped to what they stand for, or dropped; other characters are returned as they are."""
    if _SUSPECT_RE.search(text) is None:
        return text
    raw = textpage.raw
    base = _first_text_index(raw)
    astral = [m.start() for m in _ASTRAL_RE.finditer(text)]
    buffer = ctypes.create_string_buffer(_FONT_NAME_SIZE)
    flags = ctypes.c_int()
    out: list[str] = []
    last = 0
    for match in _SUSPECT_RE.finditer(text):
        position = match.start()
        # Text indices count UTF-16 units: a character beyond the BMP takes two.
        text_index = base + position + sum(1 for a in astral if a < position)
        char_index = pdfium_c.FPDFText_GetCharIndexFromTextIndex(raw, text_index)
        char = match.group()
        if char_index < 0 or pdfium_c.FPDFText_GetUnicode(raw, char_index) != ord(char):
            continue  # not where it should be: leave the text alone
        size = pdfium_c.FPDFText_GetFontInfo(raw, char_index, buffer, _FONT_NAME_SIZE, flags)
        name = buffer.value.decode("latin-1") if 0 < size <= _FONT_NAME_SIZE else ""
        replacement = _replacement(_font_class(name), char)
        if replacement is not None:
            out.append(text[last:position])
            out.append(replacement)
            last = position + 1
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _replacement(font_class: str | None, char: str) -> str | None:
    """What ``char`` stands for in a font of ``font_class``; "" to drop it, None to keep."""
    if font_class is None:
        return None
    code = ord(char)
    if code < 0x80 and char in _OMS_ASCII:
        return _OMS_ASCII[char] if font_class == _OMS else None
    if code < 0x20:
        low = {_OML: _OML_LOW, _OMS: _OMS_LOW, _OMX: _OMX_LOW}[font_class]
        return low[code] if code < len(low) else ""
    mapped = _GHOSTSCRIPT[font_class].get(char)
    if mapped is not None:
        return mapped
    if char in _KEPT[font_class] or (font_class == _OMS and char in _SUITS):
        return None
    return ""


@functools.lru_cache(maxsize=1024)
def _font_class(name: str) -> str | None:
    """The TeX math encoding of the font called ``name``, or None for any other font."""
    name = _SUBSET_PREFIX_RE.sub("", name)
    for font_class, pattern in _FONT_CLASSES:
        if pattern.fullmatch(name):
            return font_class
    return None


def _first_text_index(raw: pdfium_c.FPDF_TEXTPAGE) -> int:
    """The text index ``get_text_range()`` starts at (of its first character in the text)."""
    count = pdfium_c.FPDFText_CountChars(raw)
    for char_index in range(count):
        text_index = pdfium_c.FPDFText_GetTextIndexFromCharIndex(raw, char_index)
        if text_index >= 0:
            return int(text_index)
    return 0
