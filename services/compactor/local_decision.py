"""The built-in decision model: topic shift from embeddings plus conversational cues.

It answers the same rubric as the Decisions API probe without a network:

- PROGRESS/PIVOT: cosine similarity between the latest turn and the part of the earlier
  discussion that compaction would summarize (every earlier turn but the last; the only one
  when there is one). Low similarity means the user has moved on. Explicit markers ("different
  question", "moving on", "that settles ...") add to it.
- NOT STUCK: clarification and correction cues in the latest question ("what do you mean",
  "I meant", "that's wrong", "can you clarify", "still don't understand", "again").
- Not mid-thought: drill-down cues ("more about", "in that paper", "the same analysis", "and
  the third?") and short questions leaning on a pronoun ("why does it ...").
- SUMMARIZABLE: enough content words in the earlier discussion.

A logistic function turns them into a probability:

    z = 0.5 + 20 * min(0.15, 0.60 - similarity) + 3.5 * papers_moved + 3.0 * pivot
        - 3.5 * stuck - 1.0 * drill - 0.6 * anaphora - 5.0 * thin

``papers_moved`` is the share of the Zotero items the latest answer names that no earlier answer
named: within one field every passage embeds alike, and a research conversation that turns to
other papers has turned to another subject (0 when the answers name no items, as in chat).

The weights were set by hand and checked (not fitted by an optimizer) on the labelled research
dialogues kept in ``tests/unit/compactor/dialogues.py``, embedded with the real bge-small
model; the test prints every probability, the accuracy and the Brier score. Reading them: an
undecided similarity (0.60) with no cue gives 0.62, below the 0.75 threshold; a clear topic
shift alone (similarity about 0.57 or less) passes it; an explicit pivot marker carries a near
pivot (similarity up to about 0.72); a clarification loop or an earlier discussion with nothing to
summarize vetoes compaction on its own; a drill-down cue needs a strong topic shift to be
overruled (the user may already have pivoted in turn N-1 and be following the new topic up).
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import numpy as np

from services.common.stopwords import stopwords
from services.compactor.decision import Decision, make_decision
from services.compactor.turns import DecisionState

logger = logging.getLogger(__name__)

LOCAL_MODEL = "local"

Embed = Callable[[list[str]], Awaitable[np.ndarray]]

# Logistic weights (see the module docstring).
BIAS = 0.5
SIMILARITY_PIVOT = 0.60  # bge-small cosine at which topic continuity is undecided
NOVELTY_WEIGHT = 20.0
MAX_NOVELTY = 0.15  # cosine below the pivot beyond which dissimilarity adds nothing
PIVOT_CUE_WEIGHT = 3.0
STUCK_CUE_WEIGHT = 3.5
DRILL_CUE_WEIGHT = 1.0
ANAPHORA_WEIGHT = 0.6
THIN_WEIGHT = 5.0
PAPER_SHIFT_WEIGHT = 3.5  # every paper of the latest turn is new to the conversation
THIN_BELOW_WORDS = 20  # content words under which the earlier discussion is not substantive
THIN_AT_WORDS = 8  # ... and at or under which it counts as empty

_STUCK = (
    r"what do you mean",
    r"what does (that|it|this) mean",
    r"\bi meant\b",
    r"\bthat'?s (wrong|not right|incorrect|not what)",
    r"\bthat is (wrong|not right|incorrect)",
    r"\bnot what i (asked|meant|wanted)",
    r"\bmisunderst",
    r"\bclarify\b",
    r"\bstill (don'?t|do not|not|confused|unclear|wrong)",
    r"\b(don'?t|do not) (understand|get it|see why|see how)",
    r"doesn'?t make sense",
    r"\bconfus",
    r"\bagain\b",
    r"^\s*no\b",
    r"^\s*sorry\b",
    r"\byou said\b",
    r"\bincorrect\b",
    r"\bwrong\b",
)
_DRILL = (
    r"\bmore about\b",
    r"\btell me more\b",
    r"\belaborate\b",
    r"\bmore detail",
    r"\bgo deeper\b",
    r"\b(that|this|the same|those|these) (paper|study|trial|model|analysis|review|cohort"
    r"|article|dataset|data|experiment|method|approach|result|effect|figure|table)s?\b",
    r"\bwhich of (those|these|them)\b",
    r"^\s*and (the|what|how|why|which|for)\b",
    r"^\s*now the\b",
    r"\bstep (two|three|four|five|\d)\b",
    r"\bhow exactly\b",
    r"\bfollow[- ]up\b",
    r"\bwhy does (it|that|this)\b",
)
_PIVOT = (
    r"\b(different|separate|new|next|another|other) "
    r"(question|topic|project|subject|chapter|area|thing)\b",
    r"\bswitch(ing)? gears\b",
    r"\bmov(e|ing) on\b",
    r"\bon to (a|an|the|my)\b",
    r"\bsomething (else|completely different|different)\b",
    r"\bunrelated\b",
    r"\blet'?s (leave|turn to|start|switch|change)\b",
    r"\b(is|are) (done|settled|clear now)\b",
    r"\bsettles\b",
    r"\bthat closes\b",
    r"\bi'?m done with\b",
    r"\bthat'?s what i needed\b",
    r"\bchang(e|ing) (the )?(topic|subject)\b",
)
_ANAPHORA = re.compile(r"\b(it|its|this|they|them|those|these)\b")
ANAPHORA_MAX_WORDS = 12
# Words that make a turn no more substantive, pleasantries included (words under four letters
# never count).
_STOPWORDS = stopwords(
    "above after again also because been before being between both could doing during each "
    "have having here just more most much only other over same some such than them they those "
    "through under very while would your hello thanks thank great sure okay please"
)
_DIALOGUE_TURN = re.compile(
    r"\*\*User\*\*:\s*(.*?)\n\*\*Assistant\*\*:\s*(.*?)(?=\n\n\*\*User\*\*:|\Z)", re.S
)


@dataclass(frozen=True, slots=True)
class Cues:
    stuck: bool
    drill: bool
    anaphora: bool
    pivot: bool


def _matches(patterns: tuple[str, ...], text: str) -> bool:
    return any(re.search(p, text) for p in patterns)


def question_cues(question: str) -> Cues:
    """The cues of the latest user question."""
    q = " ".join(question.lower().replace("\u2019", "'").split())
    drill = _matches(_DRILL, q)
    return Cues(
        stuck=_matches(_STUCK, q),
        drill=drill,
        anaphora=len(q.split()) <= ANAPHORA_MAX_WORDS and bool(_ANAPHORA.search(q)),
        # "another question about the same trial" refers back: not a pivot
        pivot=_matches(_PIVOT, q) and not drill,
    )


def dialogue_turns(dialogue: str) -> list[tuple[str, str]]:
    """(user, assistant) pairs of a serialized dialogue (``**User**: ...`` format)."""
    return [(u.strip(), a.strip()) for u, a in _DIALOGUE_TURN.findall(dialogue or "")]


def content_words(text: str) -> int:
    return sum(
        1 for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4 and w not in _STOPWORDS
    )


def thinness(words: int) -> float:
    """1 for an earlier discussion with nothing to summarize, 0 for a substantive one."""
    span = THIN_BELOW_WORDS - THIN_AT_WORDS
    return min(1.0, max(0.0, (THIN_BELOW_WORDS - words) / span))


_ITEM_KEY = re.compile(r"\b([A-Z0-9]{8})\b")


def paper_shift(earlier: list[tuple[str, str]], latest: list[tuple[str, str]]) -> float:
    """How far the latest turn moved to other papers: the share of the Zotero item keys its
    answer names that no earlier answer named (0 when either side names none).

    In a library of one field every passage embeds alike (all statistics, all biology...), so
    the papers a research turn draws on are the sharper sign of a new topic."""
    latest_keys = {k for _, answer in latest for k in _ITEM_KEY.findall(answer) if _is_key(k)}
    earlier_keys = {k for _, answer in earlier for k in _ITEM_KEY.findall(answer) if _is_key(k)}
    if not latest_keys or not earlier_keys:
        return 0.0
    return len(latest_keys - earlier_keys) / len(latest_keys)


def _is_key(token: str) -> bool:
    """Zotero keys mix letters and digits; an all-letter or all-digit token is something else."""
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def logistic_probability(
    similarity: float,
    cues: Cues,
    thin: float,
    *,
    similarity_pivot: float = SIMILARITY_PIVOT,
    papers_moved: float = 0.0,
) -> float:
    """P(compaction warranted) from the topic similarity, the cues, the thinness and the share
    of the latest turn's papers that are new to the conversation."""
    novelty = min(MAX_NOVELTY, similarity_pivot - similarity)
    z = (
        BIAS
        + NOVELTY_WEIGHT * novelty
        + PAPER_SHIFT_WEIGHT * papers_moved
        + PIVOT_CUE_WEIGHT * cues.pivot
        - STUCK_CUE_WEIGHT * cues.stuck
        - DRILL_CUE_WEIGHT * cues.drill
        - ANAPHORA_WEIGHT * cues.anaphora
        - THIN_WEIGHT * thin
    )
    return 1.0 / (1.0 + math.exp(-z))


def _plain(turns: list[tuple[str, str]]) -> str:
    return "\n".join(f"{u} {a}" for u, a in turns)


class LocalDecisionModel:
    """The rubric answered from embeddings and cues.

    ``embed`` maps texts to one vector each (the reranker service's ``Embed``; one call of two
    texts per decision). The weights were set by hand for bge-small-en (v1), the reranker's
    default embedder, whose cosine between unrelated research passages sits near 0.45-0.6;
    with another embedder, pass the cosine at which it is undecided as ``similarity_pivot``.
    """

    def __init__(
        self,
        embed: Embed,
        *,
        model: str = LOCAL_MODEL,
        similarity_pivot: float = SIMILARITY_PIVOT,
    ) -> None:
        self._embed = embed
        self.model = model
        self.similarity_pivot = similarity_pivot

    async def decide(self, state: DecisionState, *, threshold: float) -> Decision:
        started = time.monotonic()
        earlier = dialogue_turns(state.earlier_discussion)
        latest = dialogue_turns(state.latest_turn)
        if not earlier or not latest:
            return make_decision(
                0.0,
                threshold=threshold,
                model=self.model,
                started=started,
                reason="nothing to compact: no earlier turns",
            )
        head = earlier[:-1] or earlier
        try:
            vectors = np.asarray(await self._embed([_plain(head), _plain(latest)]), np.float32)
        except Exception as exc:  # any embedder failure fails open
            logger.warning("Local decision model failed open (CONTINUE): %s", exc)
            return make_decision(
                None,
                threshold=threshold,
                model=self.model,
                started=started,
                reason=f"embedding_unavailable: {type(exc).__name__}: {exc}",
            )
        if vectors.shape[0] != 2:
            return make_decision(
                None,
                threshold=threshold,
                model=self.model,
                started=started,
                reason=f"embedding_unavailable: {vectors.shape[0]} vectors for 2 texts",
            )
        a, b = vectors
        similarity = float(a @ b / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-12))
        cues = question_cues(latest[-1][0])
        words = content_words(_plain(earlier))
        thin = thinness(words)
        moved = paper_shift(earlier, latest)
        p = logistic_probability(
            similarity, cues, thin, similarity_pivot=self.similarity_pivot, papers_moved=moved
        )
        signals = {
            "similarity": round(similarity, 4),
            "stuck": float(cues.stuck),
            "drill": float(cues.drill),
            "anaphora": float(cues.anaphora),
            "pivot": float(cues.pivot),
            "earlier_content_words": float(words),
            "thin": round(thin, 3),
            "papers_moved": round(moved, 3),
        }
        return make_decision(
            p, threshold=threshold, model=self.model, started=started, reason="ok", signals=signals
        )
