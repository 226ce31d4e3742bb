"""What a question asks, for the offline synthesizer: its parts, the papers it names, and the
names no passage of the evidence mentions.

A question is split into parts only where it asks about different things ("..., and what do
these papers say about ...") or names several papers ("How do lme4 and brms each ..."): each
part, and each named subject, gets its own direct answer from its own papers.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from services.agent.research.followups import is_follow_up, own_message
from services.agent.research.offline_sentences import Block, words
from services.common.stopwords import stopwords

_CLAUSE_SPLIT = re.compile(
    r"\s*;\s*|\?\s+(?=\S)"
    r"|,?\s+and\s+(?=(?:how|what|why|which|when|where|whether|who|does|do|did|is|are|can|could"
    r"|should|would|will)\b)",
    re.I,
)
_QUESTION_WORD = re.compile(
    r"\b(?:how|what|why|which|when|where|whether|who|does|do|did|is|are|can|could|should|would"
    r"|will|compare|explain|describe|list|name)\b",
    re.I,
)
_PRONOUN = re.compile(r"\b(?:it|its|them|their)\b", re.I)
# A question's own words, not its subject: "paper", "package", "library" and "r" (every paper
# of the library is about an R package).
STOP = stopwords(
    """all any been but could did had has have if so such than them they those under up were
    while will would you your each both between other same also more most very just only not no
    used using uses way ways paper papers package packages library r"""
)


@dataclasses.dataclass(frozen=True)
class Part:
    """A part of the question, answered from ``papers`` (None: any paper)."""

    label: str
    query: str
    papers: frozenset[str] | None = None


def _name_tokens(title: str) -> set[str]:
    """Words of a title that name something (a package, a method): "lme4", "brms" in "...
    Using lme4", "RcppArmadillo", the word before a title's colon, an acronym."""
    names: set[str] = set()
    words = re.findall(r"[A-Za-z][A-Za-z0-9+.\-]*[A-Za-z0-9+]|[A-Za-z]", title)
    capitalised = sum(1 for w in words if w[:1].isupper())
    head = re.match(r"\s*([A-Za-z][\w.+\-]*)\s*[:\-]\s", title)
    if head:
        names.add(head.group(1).lower())
    for w in words:
        coined = any(ch.isdigit() for ch in w) or re.search(r"[a-z][A-Z]", w)
        acronym = len(w) >= 2 and w.isupper()
        if coined or acronym:
            names.add(w.lower())
        elif w.islower() and len(w) >= 3 and capitalised >= 2 and w not in STOP:
            names.add(w.lower())  # "lme4", "brms" written lowercase in a Title Case title
    return names - {"an", "the", "for", "with", "using", "and", "in"}


def _named_in_text(word: str, blocks: Sequence[Block]) -> set[str]:
    """Papers whose evidence calls ``word`` a package ("the glmnet package")."""
    cue = re.compile(rf"\bpackages?\s+{re.escape(word)}\b|\b{re.escape(word)}\s+package\b", re.I)
    return {b.key for b in blocks if cue.search(b.body)}


def subjects_of(text: str, blocks: Sequence[Block]) -> dict[str, frozenset[str]]:
    """The papers of the evidence that ``text`` names, by the name used: {"lme4": {key}}."""
    names: dict[str, set[str]] = {}
    for block in blocks:
        for name in _name_tokens(block.title):
            names.setdefault(name, set()).add(block.key)
    papers = {b.key for b in blocks}
    found: dict[str, frozenset[str]] = {}
    for word in dict.fromkeys(words(text)):
        if word in STOP or len(word) < 2:
            continue
        keys = set(names.get(word, set()))
        if not keys and (any(ch.isdigit() for ch in word) or len(word) >= 4):
            keys = _named_in_text(word, blocks)
        # A name every paper of the evidence shares tells them apart no better than none.
        if keys and (len(keys) < len(papers) or len(papers) == 1):
            found[word] = frozenset(keys)
    return found


def _own_words(clause: str) -> list[str]:
    """The words a clause asks with, past its stop words and question words."""
    return [w for w in words(clause) if w not in STOP and not _QUESTION_WORD.fullmatch(w)]


def question_parts(question: str, blocks: Sequence[Block] = ()) -> list[Part]:
    """The parts of a question that need their own answer.

    Split only between clauses that ask something of their own ("...; how ...", "..., and what
    ..."), never at a bare comma ("When X is selected automatically for a seasonal series, how
    is d chosen?" is one question). A part naming two or more papers of the evidence becomes
    one part per paper ("How do lme4 and brms each fit ..." -> lme4, brms).
    """
    question = " ".join(question.split())
    if is_follow_up(question):  # one question with its context: never cut
        return [Part(label=own_message(question), query=question)]
    clauses = [c.strip(" ,.?") for c in _CLAUSE_SPLIT.split(question)]
    clauses = [c for c in clauses if c and [w for w in words(c) if w not in STOP]]
    merged: list[str] = []
    for clause in clauses:
        about_before = bool(_PRONOUN.search(clause)) and len(_own_words(clause)) <= 2
        if merged and (not _QUESTION_WORD.search(clause) or about_before):
            # No question of its own, or a short one about the clause before ("..., and what
            # was its design?"): the same part.
            merged[-1] = f"{merged[-1]}, {clause}"
        else:
            merged.append(clause)
    parts: list[Part] = []
    for clause in merged or [question.strip(" ?")]:
        subjects = subjects_of(clause, blocks) if blocks else {}
        distinct = {keys for keys in subjects.values()}
        if len(subjects) >= 2 and len(distinct) >= 2:
            for name, keys in subjects.items():
                others = [other for other in subjects if other != name]
                parts.append(Part(label=name, query=_without(clause, others), papers=keys))
        else:
            parts.append(Part(label=clause, query=clause))
    return _about_the_first(parts, blocks) if blocks else parts


# A part that asks beyond the first one's subject: "which other packages ...".
_CONTRAST = re.compile(r"\b(?:other|others|another|else|different|alternatives?)\b", re.I)


def _names_nothing(text: str, blocks: Sequence[Block] = ()) -> bool:
    """Whether ``text`` is a short part that names no package, method or paper of its own
    ("how is the error estimated": two words of its own), and does not ask beyond ("which
    other packages")."""
    if len(_own_words(text)) > 2 or _NAMED.search(text) or _CONTRAST.search(text):
        return False
    return not (blocks and subjects_of(text, blocks))


def _about_the_first(parts: list[Part], blocks: Sequence[Block]) -> list[Part]:
    """A later part that names nothing asks about what the first part names: "Which
    technique does mvtnorm use ..., and how is the error estimated?" is answered from the
    mvtnorm paper, not from every paper that estimates an error."""
    if len(parts) < 2 or parts[0].papers is not None:
        return parts
    subjects = set(subjects_of(parts[0].query, blocks).values())
    if len(subjects) != 1:
        return parts
    (papers,) = subjects
    return [
        Part(label=p.label, query=p.query, papers=papers)
        if i and p.papers is None and _names_nothing(p.query, blocks)
        else p
        for i, p in enumerate(parts)
    ]


# A part that points back at the one before: "..., and which package fits that weight model?"
_REFERS_BACK = re.compile(r"\b(?:that|this|these|those|such|its|their|it|them)\b", re.I)


def with_context(parts: Sequence[str]) -> list[str]:
    """Search queries for a question's parts: a part after the first that points back at it
    ("that weight model", "its default") searches with the first part's words too, which
    say what "that" is ("which package does the fitting of that weight model (mixing weights
    latent class regressions covariates)"), and so does a short one that names nothing of its
    own ("how is the error estimated")."""
    out: list[str] = []
    for index, part in enumerate(parts):
        # "..., and how is the error estimated?": the error of what the first part is about.
        if index and (_REFERS_BACK.search(part) or _names_nothing(part)):
            own = set(words(part))
            context = [w for w in dict.fromkeys(words(parts[0])) if w not in STOP and w not in own]
            context = [w for w in context if not _QUESTION_WORD.fullmatch(w)]
            if context:
                part = f"{part} ({' '.join(context)})"
        out.append(part)
    return out


# What a question names: a coined word ("lme4", "AlphaFold", "Cas9"), an acronym ("ADVI",
# "HC3") or a hyphenated proper name ("Mann-Kendall", "Baum-Welch", "Tukey-type").
_NAMED = re.compile(
    r"(?<![\w\-])(?:[A-Za-z]+\d\w*|\d+[A-Za-z]\w*|[a-z]+[A-Z]\w*|[A-Z][a-z]*[A-Z]\w*|[A-Z]{2,}s?"
    r"|[A-Z][a-z]+(?:-[A-Za-z]+)+)(?![\w\-])"
)


def unmentioned_names(question: str, blocks: Sequence[Block]) -> list[str]:
    """The names of ``question`` that no passage of the evidence mentions (in any spelling:
    "Mann-Kendall", "Mann Kendall", "Kleiber and Zeileis" for "Kleiber-Zeileis")."""
    question = own_message(question)
    text = " ".join(f"{b.title} {b.body}" for b in blocks).lower()
    found = set(words(text))
    found |= {piece for word in found if "-" in word for piece in word.split("-")}
    missing: list[str] = []
    for name in dict.fromkeys(m.group(0) for m in _NAMED.finditer(question)):
        if name.lower() in found:
            continue
        if "-" in name:  # every capitalised piece is mentioned: "Tukey-type" -> "tukey"
            pieces = [p.lower() for p in name.split("-") if p[:1].isupper()]
            if all(p in found for p in pieces):
                continue
        elif name.lower().rstrip("s") in found:
            continue
        missing.append(name)
    return missing


def _without(clause: str, names: Sequence[str]) -> str:
    """``clause`` about one subject only: "How do lme4 and brms each fit ..." without "lme4"
    is "How do brms fit ..."."""
    for name in names:
        word = re.escape(name)
        # "lme4 and brms" -> "brms"; "brms and lme4" or "brms, lme4" -> "brms"
        clause = re.sub(rf"\b{word}\b\s*(?:,|\band\b|\bor\b|&)\s*", "", clause, flags=re.I)
        clause = re.sub(rf"\s*(?:,|\band\b|\bor\b|&)?\s*\b{word}\b", "", clause, flags=re.I)
    if names:
        clause = re.sub(r"\b(?:each|both|respectively)\b", "", clause, flags=re.I)
    return " ".join(clause.split())


def subject_queries(question: str, blocks: Sequence[Block]) -> list[str]:
    """One search query per paper the question names ("How do lme4 and brms each fit ..." ->
    "How do lme4 fit ...", "How do brms fit ..."), so each gets evidence of its own."""
    parts = question_parts(question, blocks)
    return list(dict.fromkeys(p.query for p in parts if p.papers is not None))


# "what did I note / write / highlight about ...", "my notes on ...", "my highlights in ...":
# the question asks what the user wrote in Zotero, not what the papers say.
_OWN_WRITING = re.compile(
    r"\b(?:i|i've|i'd)\s+(?:\w+\s+){0,2}?(?:note|noted|wrote|write|written|highlight|highlighted"
    r"|underline|underlined|annotate|annotated|comment|commented|mark|marked|jot|jotted)\b"
    r"|\bmy\s+(?:own\s+)?(?:notes?|highlights?|annotations?|comments?|underlines?|markings?"
    r"|reading\s+notes)\b",
    re.I,
)


# "what did I comment / write / note": the user's own words, not the text they highlighted.
_OWN_WORDS = re.compile(
    r"\b(?:i|i've|i'd)\s+(?:\w+\s+){0,2}?(?:note|noted|wrote|write|written|comment|commented"
    r"|jot|jotted)\b|\bmy\s+(?:own\s+)?(?:notes?|comments?|reading\s+notes)\b",
    re.I,
)


def asks_for_own_words(question: str) -> bool:
    """Whether ``question`` asks what the user wrote (a comment, a note), rather than what they
    highlighted: a highlight then answers with its comment, not the paper's words under it."""
    return bool(_OWN_WORDS.search(question))


def about_own_writing(question: str) -> bool:
    """Whether ``question`` asks about what the user wrote in Zotero (their notes, highlights,
    comments): those are searched first and preferred as evidence."""
    return bool(_OWN_WRITING.search(question))


_LEAD = re.compile(
    r"^(?:\s*(?:about|on|in|regarding|concerning|for|of|to|the|paper|papers|down|up)\b)+", re.I
)
_ASK_WORDS = (
    r"what|which|where|when|how|why|did|do|does|have|has|had|show|list|find|give|tell|me|all"
    r"|of|the|any|were|was|in|on"
)
_ASK = re.compile(rf"^\s*(?:(?:{_ASK_WORDS})\b\s*)+", re.I)
_ASK_TAIL = re.compile(rf"(?:[\s,;:]*\b(?:{_ASK_WORDS}))+[\s,;:]*$", re.I)


def own_writing_subject(question: str) -> str:
    """What a question about the user's own writing is about: "What did I note about REML?"
    is about "REML", "my highlights on sandwich estimators" about "sandwich estimators"."""
    match = _OWN_WRITING.search(question)
    if match is None:
        return question.strip()
    after = _LEAD.sub("", question[match.end() :]).strip(" ?.!,:;")
    before = _ASK_TAIL.sub("", _ASK.sub("", question[: match.start()])).strip(" ?.!,:;")
    return " ".join(part for part in (before, after) if part) or question.strip()
