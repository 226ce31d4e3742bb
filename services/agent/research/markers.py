"""Citation markers in an answer's text: the one reader of them on the agent's side.

The synthesizer is asked for ``[n, p. X]``. Models also write ``[n]``, ``[n, pp. X-Y]`` and
several references in one bracket separated by ``;`` (``[1, p. 3; 2, p. 5]``, ``[1; 2]``), so
these are markers too, as the plugin reads them (``zotero-plugin/src/citations.js``,
``MARKER_BODY_RE``: its grammar, with ``p``, ``pp`` or ``page(s)``, case-insensitive). Not
markers: a bracket of bare numbers (``[1, 3]`` is an interval as often as a list), a link's
text (``[1](url)``), and anything inside code (an inline span or a fenced block: R prints
``[1] 0.25``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ONE = re.compile(
    r"^\s*(\d{1,3})(?:\s*,\s*(?:pp?\.?|pages?)\s*(\d{1,5})(?:\s*[-\u2013]\s*(\d{1,5}))?)?\s*$",
    re.I,
)
_BRACKET = re.compile(r"\[([^\[\]\n]{1,300})\](?!\()")
_FENCED = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]{0,3}\1[ \t]*$|\Z)", re.S | re.M)
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)\1(?!`)", re.S)


@dataclass(frozen=True, slots=True)
class Marker:
    """One reference of a citation bracket: evidence ``n``, the page (or first page of a
    range) when given. ``start`` and ``end`` delimit the whole bracket in the answer."""

    start: int
    end: int
    n: int
    page: int | None
    page_end: int | None


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group())


def without_code(text: str) -> str:
    """``text`` with its code (fenced blocks, inline spans) blanked out, offsets unchanged."""
    return _INLINE_CODE.sub(_blank, _FENCED.sub(_blank, text))


def parse_marker(inner: str) -> list[tuple[int, int | None, int | None]] | None:
    """The references ``(n, page, page_end)`` of a bracket's inside, or None when it is not a
    citation marker."""
    refs = []
    for piece in inner.split(";"):
        m = _ONE.match(piece)
        if m is None:
            return None
        refs.append((int(m[1]), int(m[2]) if m[2] else None, int(m[3]) if m[3] else None))
    return refs


def find_markers(text: str) -> list[Marker]:
    """Every citation reference of ``text``, in reading order."""
    out = []
    for bracket in _BRACKET.finditer(without_code(text)):
        for n, page, page_end in parse_marker(bracket.group(1)) or []:
            out.append(Marker(bracket.start(), bracket.end(), n, page, page_end))
    return out


def strip_markers(text: str, replacement: str = "") -> str:
    """``text`` with each citation bracket replaced (code left as it is)."""
    spans = sorted({(m.start, m.end) for m in find_markers(text)})
    kept, at = [], 0
    for start, end in spans:
        kept.append(text[at:start] + replacement)
        at = end
    return "".join(kept) + text[at:]


def keep_markers(text: str, known: set[int]) -> tuple[str, int]:
    """``text`` with the references to evidence numbers not in ``known`` taken out of their
    brackets (a bracket left empty goes, with the space before it), and how many went: the
    citations a model invented. Code is left as it is."""
    code_free = without_code(text)
    kept: list[str] = []
    at = dropped = 0
    for bracket in _BRACKET.finditer(code_free):
        refs = parse_marker(bracket.group(1))
        if refs is None:
            continue
        good = [
            piece
            for piece, (n, _, _) in zip(bracket.group(1).split(";"), refs, strict=True)
            if n in known
        ]
        if len(good) == len(refs):
            continue
        dropped += len(refs) - len(good)
        start = bracket.start()
        if not good:
            while start > at and text[start - 1] in " \t":
                start -= 1
        kept.append(text[at:start] + ("[" + ";".join(good).strip() + "]" if good else ""))
        at = bracket.end()
    return "".join(kept) + text[at:], dropped
