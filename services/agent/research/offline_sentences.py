"""The sentences an offline answer may quote: the synthesis prompt's numbered evidence parsed
into blocks, cut into sentences, and filtered to prose.

A sentence of two overlapping chunks is one candidate; fragments (a chunk that opens
mid-sentence, a list's lead-in), reference entries, R code and output, table rows and name lists
are not quotable; a heading run into its sentence is cut off; bibliography sections are not
evidence. ``[page N]`` lines in a passage give each sentence its page.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

MAX_CANDIDATES = 400
EVIDENCE_BLOCK = re.compile(
    r"^### \[(\d+)\] (.*?) \"(.*?)\" item ([^\s,]+)(?:, p\. (\d+)(?:-(\d+))?)?([^\n]*)\n"
    r"(.*?)(?=^### \[\d+\] |\Z)",
    re.S | re.M,
)
# What the user wrote (evidence.evidence_block): ", your highlight KEY", ", your note KEY 'T'".
_OWN = re.compile(r", your (highlight|comment|note) ([^\s,]+)(?: '(.*?)'| \"(.*?)\")?(?=,|$)")
_REFERENCES_SECTION = re.compile(
    r"section '(?:\d+(?:\.\d+)*\.?\s*)?(?:References|Bibliography|Literature cited)'", re.I
)
_PDF = re.compile(r"^, PDF (\S+?)(?=,|$)")
PAGE_MARK = re.compile(r"^\[page (\d{1,5})\]$", re.M)
_ABBREVIATIONS = frozenset(
    """e.g i.e et al fig figs eq eqs sec secs tab cf vs etc pp p no nos dr mr ms resp approx
    ch chap vol viz ibid incl esp""".split()
)
# A full stop, then a capital, a digit, or a lowercase word: R papers start sentences with
# names ("flo consists of ...", "vcovHC() computes ..."); abbreviations are told apart below.
_SENTENCE_END = re.compile(
    r"[.!?][\"')\]\u201d\u2019]*\s+(?=[\"'(\[\u201c]?[A-Z0-9]|[a-z])|\s*\u2022\s*"
)
_REFERENCE = re.compile(
    r"^\W*[\u201c\"]|[A-Z][a-z]+,\s+[A-Z]\.(?:\s*[A-Z]\.)*,?\s+(?:and\s+)?[A-Z]"
    r"|\(\d{4}[a-z]?\)\.\s+[\u201c\"A-Z]"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+\-]*[A-Za-z0-9+]|[A-Za-z]")


@dataclasses.dataclass(frozen=True)
class Block:
    """One numbered piece of evidence from the synthesis prompt."""

    n: int
    label: str
    title: str
    key: str
    page: int
    page_end: int
    body: str
    attachment_key: str = ""  # the PDF the passage is from ("": the item's default)
    origin: str = ""  # what the user wrote: "highlight", "comment" or "note" ("": the paper)
    source_key: str = ""  # the annotation's or note's key
    note_title: str = ""


@dataclasses.dataclass(frozen=True)
class Sentence:
    id: str
    text: str
    block: Block
    page: int
    context: str  # the sentence before it in the passage ("" at the start)


def parse_blocks(evidence_text: str) -> list[Block]:
    blocks: list[Block] = []
    for m in EVIDENCE_BLOCK.finditer(evidence_text.strip() + "\n"):
        n, label, title, key, page, page_end, rest, body = m.groups()
        if body.startswith("(found by: "):
            body = body.partition("\n")[2]
        if _REFERENCES_SECTION.search(rest):
            continue  # the bibliography: titles of other works, not answers
        own = _OWN.search(rest)
        blocks.append(
            Block(
                n=int(n),
                label=label,
                title=title,
                key=key,
                page=int(page or 0),
                page_end=int(page_end or page or 0),
                body=body.strip(),
                attachment_key=pdf.group(1) if (pdf := _PDF.match(rest)) else "",
                origin=own.group(1) if own else "",
                source_key=own.group(2) if own else "",
                note_title=(own.group(3) or own.group(4) or "") if own else "",
            )
        )
    return blocks


def words(text: str) -> list[str]:
    """The lowercase words of ``text`` (a word may hold digits, "+" and "-": "lme4", "C++")."""
    return [w.lower() for w in _WORD.findall(text)]


def sentence_key(text: str) -> str:
    """What two copies of a sentence share, whatever their spacing and punctuation."""
    return " ".join(words(text))


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage: paragraph and line breaks after a full stop end one; a full stop
    after an abbreviation ("e.g.", "Fig.", "et al.") or an initial ("J.") does not."""
    out: list[str] = []
    for paragraph in _prose_runs(text):
        flat = " ".join(paragraph.split())
        start = 0
        for m in _SENTENCE_END.finditer(flat):
            before = flat[start : m.start() + 1]
            last = before.rstrip(".!?\"')]\u201d\u2019").rsplit(" ", 1)[-1]
            if last.lower().rstrip(".") in _ABBREVIATIONS or re.fullmatch(r"[A-Z]", last):
                continue
            stop = m.group(0)[:1] in ".!?"
            if (
                stop
                and flat[m.end() : m.end() + 1].islower()
                and not _ENDS_BEFORE_NAME.search(before)
            ):
                continue  # "U.S. macroeconomic", "Eq. three", "approx. two": not an end
            out.append(flat[start : m.end()].strip(" \u2022"))
            start = m.end()
        if flat[start:].strip(" \u2022"):
            out.append(flat[start:].strip(" \u2022"))
    return [sentence for sentence in out if sentence]


# What a sentence ends with when the next one starts with a lowercase name: a word of two or
# more letters with no full stop of its own inside, a year or reference in parentheses.
_ENDS_BEFORE_NAME = re.compile(r"(?:(?<![\w.])[A-Za-z][a-z]+|\))[.!?][\"')\]\u201d\u2019]*$")

# An R prompt or assignment inside a sentence: code, not prose.
_CODE = re.compile(r"<-|(?:^|\s)R?>\s+[\w.]+\s*(?:\(|<-|\$|\[)")


# A heading run into the sentence after it ("Orthogonalized Gnanadesikan/Kettenring The MCD
# estimator ..."): two or more capitalised words, then a capitalised sentence opener.
_HEADING_PREFIX = re.compile(
    r"^(?:\d+(?:\.\d+)*\.?\s+)?(?:[A-Z][\w/\-]*\s+){1,7}?(?=(?:The|A|An|In|We|This|These|Our|For"
    r"|Here|To|If|When|It|One)\s+\w)"
)


# Six tokens in a row that are numbers or capitalised words: a table row, axis ticks, names.
_TABLE_RUN = re.compile(r"(?:(?:^|\s)(?:[\d.,\u2212\-]+|[A-Z][\w\u2019']*)(?=\s|$)){6}")


_CODE_LINE = re.compile(r"^\s*(?:\[\d+\]|R>|>|\$|#|\+\s)")


def _prose_runs(text: str) -> list[str]:
    """Paragraphs, with lines of code or program output (and a label line ending in ":")
    kept apart from the prose around them."""
    runs: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        current: list[str] = []
        for line in paragraph.split("\n"):
            stripped = line.strip()
            letters = sum(ch.isalpha() for ch in stripped)
            apart = bool(_CODE_LINE.match(line)) or letters < 0.5 * len(stripped.replace(" ", ""))
            if apart:
                runs.extend([" ".join(current)] if current else [])
                runs.append(stripped)
                current = []
                continue
            current.append(stripped)
            if stripped.endswith(":") and len(stripped.split()) <= 4:
                runs.append(" ".join(current))
                current = []
        if current:
            runs.append(" ".join(current))
    return [run for run in runs if run.strip()]


def _is_quotable(sentence: str, first_in_passage: bool, min_words: int = 6) -> bool:
    words = sentence.split()
    if not min_words <= len(words) <= 90:
        return False
    if not re.search(r"[.!?:)\"\u201d]$", sentence):
        return False  # a fragment: a list's lead-in, a passage cut mid-sentence
    letters = sum(ch.isalpha() for ch in sentence)
    if letters < 0.6 * len(sentence.replace(" ", "")):
        return False  # code, tables, formulas
    if _REFERENCE.search(sentence):
        return False  # an entry of the references, a quoted title
    if _CODE.search(sentence):
        return False  # R code or output run into the prose
    numbers = sum(1 for w in words if re.fullmatch(r"[\d.,:;()%\-\u2212]+", w))
    capitals = sum(1 for w in words if w[:1].isupper())
    if numbers >= 0.3 * len(words) or (len(words) >= 10 and capitals >= 0.7 * len(words)):
        return False  # a table's numbers, a list of names
    if _TABLE_RUN.search(sentence):
        return False  # a figure's axis ticks or a table row run into the prose
    # A chunk may open mid-sentence, and so may a page ("trol the behavior of ..." after
    # "con-" at the foot of the page before): that fragment is not a sentence of its own.
    return not (first_in_passage and sentence[:1].islower())


def candidate_sentences(blocks: Sequence[Block]) -> list[Sentence]:
    """Every quotable sentence of the evidence once (the first, best-ranked copy), with the
    page it is on when the passage marks its page breaks (``[page N]`` lines)."""
    seen: set[str] = set()
    long_seen: list[str] = []  # the keys of six words or more: a repeat may hold one
    out: list[Sentence] = []
    for block in blocks:
        page, previous = block.page, ""
        pieces = PAGE_MARK.split(block.body)
        # pieces: text, page, text, page, text ...
        for index in range(0, len(pieces), 2):
            if index:
                page = int(pieces[index - 1])
            for position, sentence in enumerate(split_sentences(pieces[index])):
                head = _HEADING_PREFIX.match(sentence)
                if head and len(head.group(0).split()) >= 2:
                    sentence = sentence[head.end() :]
                key = sentence_key(sentence)
                if block.origin:
                    # What the user highlighted or wrote is quotable as they chose it: a short
                    # highlight, one that starts mid-sentence.
                    quotable = _is_quotable(sentence, False, min_words=2)
                else:
                    quotable = _is_quotable(sentence, position == 0)
                # A sentence already quoted, or part of a longer one already taken, is a repeat
                # (overlapping chunks; a chunk boundary that cut a sentence).
                # A sentence holding one already taken is one too (a heading run into it).
                repeat = quotable and (
                    key in seen
                    or any(key in k for k in seen if len(k) > len(key))
                    or any(k in key for k in long_seen)
                )
                if quotable and not repeat:
                    seen.add(key)
                    if len(key.split()) >= 6:
                        long_seen.append(key)
                    out.append(
                        Sentence(
                            id=str(len(out)),
                            text=sentence,
                            block=block,
                            page=page,
                            context=previous,
                        )
                    )
                previous = sentence
    return out[:MAX_CANDIDATES]
