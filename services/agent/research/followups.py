"""Follow-up questions made self-contained, for the offline coordinator.

"Which of them does the package recommend by default?" means nothing to a search engine. When a
message refers back (a pronoun, "the package", "the other one", "And ...?", or hardly any words
of its own), the research request carries the conversation's subject: the question that started
the thread, and the papers the previous answer cited (their titles pull retrieval towards them).
"The other one" names the paper of the thread's question that the previous answer did not cite.
A message that names a new subject, or says so ("Different topic: ..."), starts a new thread.

Real models are told to do the same in the coordinator's instruction; this module is what the
built-in model does with no model at all.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from services.common.stopwords import stopwords

# Words that point back whatever else the message says ...
_POINTS_BACK = re.compile(
    r"\b(?:the\s+(?:package|paper|method|model|function|approach|estimator|test|library|same"
    r"|former|latter|default|result|authors?)|which\s+of\s+them|either\s+of\s+them"
    r"|both\s+of\s+them|that\s+(?:package|paper|method|model|function|one)"
    # "the two" things the last answer compared, "these methods", "both approaches"
    r"|the\s+(?:two|three|four)|these\s+(?:two|three|packages|papers|methods|models|approaches"
    r"|estimators|tests)|both\s+(?:packages|papers|methods|models|approaches|estimators|tests))\b",
    re.I,
)
# ... and pronouns, which point back only in a message that names nothing of its own.
_PRONOUN = re.compile(
    r"\b(?:it|its|they|them|their|theirs|this|that|these|those|then|there)\b", re.I
)
# Content words up to which a message with a pronoun is read as a follow-up.
MAX_PRONOUN_FOLLOW_UP = 6
_OTHER = re.compile(r"\b(?:the\s+other|other\s+one|the\s+older|the\s+newer|the\s+second)\b", re.I)
_LEAD = re.compile(r"^\s*(?:and|so|but|also|then|what\s+about|how\s+about)\b", re.I)
_FRESH = re.compile(
    r"^\s*(?:different\s+topic|unrelated|new\s+question|another\s+question|new\s+topic"
    r"|switching\s+topics?)\b",
    re.I,
)
_FOLLOW = re.compile(
    r"^(?P<message>.*?) \(follow-up to: (?P<root>.*?)(?:; about: (?P<about>.*))?\)$", re.S
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+\-]*[A-Za-z0-9+]|[A-Za-z]")
# Pronouns and modals too: a message made of them ("What would you use?") names nothing new.
_STOP = stopwords(
    """if so them they those will would you your also but both each either other one used using
    me my should could"""
)


@dataclasses.dataclass(frozen=True)
class Turn:
    """An earlier turn: the research request it ran and the titles its answer cited."""

    request: str
    cited_titles: tuple[str, ...] = ()


def _content(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if w.lower() not in _STOP and len(w) > 1]


def _names(text: str) -> list[str]:
    """Words that name something: "lme4", "RcppEigen", "HC3", "ARIMA"."""
    return [
        w
        for w in _WORD.findall(text)
        if any(ch.isdigit() for ch in w)
        or re.search(r"[a-z][A-Z]", w)
        or (w.isupper() and len(w) > 1)
    ]


def is_follow_up(request: str) -> bool:
    """Whether a research request was made from a follow-up (it is one question, whole)."""
    return _FOLLOW.match(request) is not None


def own_message(request: str) -> str:
    """What the user wrote, without the context a follow-up's request carries."""
    return request.split(" (follow-up to: ", 1)[0]


def thread_root(request: str) -> str:
    """The question that started the thread a request belongs to."""
    m = _FOLLOW.match(request)
    return m.group("root") if m else request


def refers_back(message: str, thread: str = "") -> bool:
    """Whether ``message`` continues the thread (``thread``: its question and cited titles)
    rather than asking something new."""
    if _FRESH.match(message):
        return False
    known = thread.lower()
    before_package = re.findall(r"\b([a-z][a-z0-9]{2,})\s+package\b", message)
    named = [
        n for n in _names(message) + before_package if n.lower() not in known and n not in _STOP
    ]
    if named and not _OTHER.search(message) and not _LEAD.match(message):
        # It names a subject the conversation has not had (but "And brms?" asks the thread's
        # question of it).
        return False
    return bool(
        _POINTS_BACK.search(message)
        or _OTHER.search(message)
        or _LEAD.match(message)
        or len(_content(message)) <= 3
        # A pronoun points back from a short message; a long one ("How does lmer choose its
        # optimizer, and which chips implement its solver?") says what "its" is itself.
        or (_PRONOUN.search(message) and len(_content(message)) <= MAX_PRONOUN_FOLLOW_UP)
    )


def standalone_request(message: str, history: Sequence[Turn]) -> str:
    """``message`` as a research request that stands on its own (unchanged when it does)."""
    message = " ".join(message.split())
    if not history:
        return message
    last = history[-1]
    root = thread_root(last.request)
    if not refers_back(message, " ".join((last.request, *last.cited_titles))):
        return message
    about = list(dict.fromkeys(last.cited_titles))[:2]
    if _OTHER.search(message):
        cited = " ".join(last.cited_titles).lower()
        names = list(dict.fromkeys(_names(root) + _lowercase_names(root)))
        others = [n for n in names if n.lower() not in cited]
        if others:
            # The thread's own question, about the other one: "Which estimation approach does
            # brms rely on?" -> "... does lme4 rely on?"
            asked = re.split(r"(?<=[.!?])\s+", root.strip())[-1]
            for name in names:
                if name.lower() in cited:
                    asked = re.sub(rf"\b{re.escape(name)}\b", others[0], asked)
            return f"{message} {asked} (follow-up to: {root}; about: {others[0]})"
    subject = _asked_of(message, " ".join((last.request, *last.cited_titles)))
    if subject:
        # "And brms?": the thread's own question, of the new subject, without the papers
        # that answered it before ("Which estimation approach does lme4 rely on?" -> brms).
        asked = re.split(r"(?<=[.!?])\s+", root.strip())[-1]
        names = [n for n in dict.fromkeys(_names(root) + _lowercase_names(root)) if n in asked]
        if len(names) == 1:
            asked = re.sub(rf"\b{re.escape(names[0])}\b", subject, asked)
        return f"{message} {asked} (follow-up to: {root}; about: {subject})"
    tail = f"; about: {'; '.join(about)}" if about else ""
    return f"{message} (follow-up to: {root}{tail})"


_ASKED_OF = re.compile(
    r"^\s*(?:and|what\s+about|how\s+about)\s+(?:for\s+|with\s+|in\s+)?"
    r"(?P<subject>[A-Za-z][\w.+\-]*)\s*\??\s*$",
    re.I,
)


def _asked_of(message: str, thread: str) -> str:
    """The one-word subject of "And brms?" or "What about nlme?", when the thread has not
    had it ("" otherwise)."""
    m = _ASKED_OF.match(message)
    if m is None:
        return ""
    subject = m.group("subject").rstrip(".")
    known = {w.lower() for w in _WORD.findall(thread)}
    if subject.lower() in _STOP or subject.lower() in known:
        return ""
    return subject


def _lowercase_names(text: str) -> list[str]:
    """Lowercase package-like words of a question ("brms", "partykit"): not English words we
    know, written lowercase, next to "and", "or", "both" or "package"."""
    out: list[str] = []
    for m in re.finditer(r"\b(?:both|and|or|package|with|in)\s+([a-z][a-z0-9]{2,})\b", text):
        word = m.group(1)
        if word not in _STOP and word not in out:
            out.append(word)
    for m in re.finditer(r"(?<![\w\-])([a-z][a-z0-9]{2,})\s+(?:and|or|package)\b", text):
        word = m.group(1)
        if word not in _STOP and word not in out:
            out.append(word)
    return out
