"""Completed turns, the latest compaction and the coordinator's prompt size, read from a
session's events: what the agent reports with ``done`` (so the gateway can apply the envelope
gate without asking the compactor) and what the compactor plans its summaries from.

Everything here reads the events as ADK's own prompt assembly does: rewinds applied first
(:func:`services.common.adk.history.live_events`, compaction events kept: the prior summary is
one of them), then only unscoped events (``isolation_scope is None``) carry conversation.
Scoped events (the search pipeline's subagent and synthesizer, in ``search_pipeline:<call
id>``) only count for where a turn begins and ends in time.

A turn is one invocation that a user text started and that has an answer:

- a research turn: the coordinator's ``search_library`` response; its assistant text is the
  short findings ``summary`` (falling back to the start of the ``answer``, without its
  bibliography);
- a conversational turn: the coordinator's text, untruncated.

Resume events (a user ``FunctionResponse`` to ``adk_request_input``) share the invocation of
the turn they resume; rewind markers and compaction events are not turns. An invocation
without an answer (paused, aborted, failed) is not a completed turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.events.event import Event

from services.common.adk.history import is_compaction, is_rewind, live_events
from services.common.adk.internals import get_compaction_ranges
from services.common.adk.names import SEARCH_LIBRARY

CITED_SOURCES_HEADING = "# Cited Sources"
ANSWER_FALLBACK_CHARS = 600  # of a research answer, when its response carries no summary


@dataclass(frozen=True, slots=True)
class Turn:
    """One completed turn. Timestamps span every live event of the invocation, scoped ones
    included; ``prompt_tokens`` is the coordinator's last reported prompt size in it."""

    invocation_id: str
    user_text: str
    assistant_text: str
    first_timestamp: float
    last_timestamp: float
    prompt_tokens: int | None = None
    is_research: bool = False


@dataclass(frozen=True, slots=True)
class PriorCompaction:
    """The compaction summaries the coordinator's prompt currently shows (ADK drops those
    subsumed by a later, containing range). Usually one; ``events`` keeps them in order."""

    start_timestamp: float
    end_timestamp: float
    summary_text: str
    events: tuple[Event, ...] = field(default=())

    @property
    def written_at(self) -> float:
        """When the newest of these summaries was written (after the turn that triggered it)."""
        return max((e.timestamp for e in self.events), default=self.end_timestamp)


def _texts(event: Event) -> list[str]:
    if not (event.content and event.content.parts):
        return []
    return [p.text for p in event.content.parts if p.text and not p.thought]


def user_text(event: Event) -> str | None:
    if event.author != "user" or event.get_function_responses():
        return None
    text = "\n".join(_texts(event)).strip()
    return text or None


def research_reply(response: Any) -> str | None:
    """The assistant text of one ``search_library`` response: its summary, else the start of
    its answer (no bibliography), else its error message."""
    if not isinstance(response, dict):
        return None
    summary = str(response.get("summary") or "").strip()
    if summary:
        return summary
    answer = str(response.get("answer") or "")
    answer = answer.split(CITED_SOURCES_HEADING, 1)[0].strip()
    if answer:
        return clip_text(answer, ANSWER_FALLBACK_CHARS)
    message = str(response.get("message") or "").strip()
    return message or None


def clip_text(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, marked with '…'."""
    text = text.strip()
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    cut = text[: limit - 1]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip() + "…"


@dataclass
class _Invocation:
    invocation_id: str
    first_timestamp: float
    last_timestamp: float
    user_text: str | None = None
    research: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    prompt_tokens: int | None = None

    def turn(self) -> Turn | None:
        if self.user_text is None:
            return None
        assistant = "\n\n".join(self.research) if self.research else "\n\n".join(self.replies)
        if not assistant.strip():
            return None
        return Turn(
            invocation_id=self.invocation_id,
            user_text=self.user_text,
            assistant_text=assistant.strip(),
            first_timestamp=self.first_timestamp,
            last_timestamp=self.last_timestamp,
            prompt_tokens=self.prompt_tokens,
            is_research=bool(self.research),
        )


def extract_turns(events: Sequence[Event], *, rewinds_applied: bool = False) -> list[Turn]:
    """The completed turns of a session, oldest first."""
    live = list(events) if rewinds_applied else live_events(events)
    invocations: dict[str, _Invocation] = {}
    for event in live:
        if is_compaction(event) or is_rewind(event) or not event.invocation_id:
            continue
        inv = invocations.get(event.invocation_id)
        if inv is None:
            inv = invocations[event.invocation_id] = _Invocation(
                event.invocation_id, event.timestamp, event.timestamp
            )
        inv.first_timestamp = min(inv.first_timestamp, event.timestamp)
        inv.last_timestamp = max(inv.last_timestamp, event.timestamp)
        if event.isolation_scope is not None:
            continue
        if event.author == "user":
            if inv.user_text is None:
                inv.user_text = user_text(event)
            continue
        if event.usage_metadata and event.usage_metadata.prompt_token_count is not None:
            inv.prompt_tokens = event.usage_metadata.prompt_token_count
        for response in event.get_function_responses():
            if response.name == SEARCH_LIBRARY:
                reply = research_reply(response.response)
                if reply:
                    inv.research.append(reply)
        if not event.get_function_calls() and not event.get_function_responses():
            inv.replies.extend(_texts(event))
    turns = (inv.turn() for inv in invocations.values())
    return sorted((t for t in turns if t is not None), key=lambda t: t.first_timestamp)


def prior_compaction(
    events: Sequence[Event], *, rewinds_applied: bool = False
) -> PriorCompaction | None:
    """The live compaction summaries of the coordinator's context, merged, or None.

    Uses ADK's ``_get_compaction_ranges`` (through :mod:`services.common.adk.internals`) over
    live unscoped events, so a summary that a later containing range subsumed is not returned
    (exactly what prompt assembly drops)."""
    live = list(events) if rewinds_applied else live_events(events)
    unscoped = [e for e in live if e.isolation_scope is None]
    ranges = get_compaction_ranges(unscoped)
    if not ranges:
        return None
    kept = [unscoped[index] for index, _, _ in ranges]
    texts = []
    for event in kept:
        compaction = event.actions.compaction
        parts = compaction.compacted_content.parts if compaction else None
        text = "\n".join(p.text for p in parts or [] if p.text and not p.thought).strip()
        if text:
            texts.append(text)
    return PriorCompaction(
        start_timestamp=min(start for _, start, _ in ranges),
        end_timestamp=max(end for _, _, end in ranges),
        summary_text="\n\n".join(texts),
        events=tuple(kept),
    )


def turns_since(turns: Iterable[Turn], compaction: PriorCompaction | None) -> list[Turn]:
    """The turns completed since the latest compaction was written (all of them without one).

    Counted from when it happened, not from the end of the range it summarized: the K turns it
    kept verbatim do not count again: with ``min_turns`` 4 and K 2, compaction after turn 4,
    then after turn 8 (docs/compaction.md, "Post-turn compaction", item 1)."""
    if compaction is None:
        return list(turns)
    return [t for t in turns if t.first_timestamp > compaction.written_at]


def coordinator_prompt_tokens(events: Sequence[Event]) -> int | None:
    """Extract prompt token count strictly from the coordinator agent's latest event.

    The latest unscoped event that reports a prompt token count; subagent counts (scoped)
    never open the envelope (``docs/compaction.md``, step 1 "Envelope gate"). Pass live events
    (after rewinds) so a rewound turn's count is not read."""
    for event in reversed(events):
        if (
            event.isolation_scope is None
            and event.usage_metadata
            and event.usage_metadata.prompt_token_count is not None
        ):
            return event.usage_metadata.prompt_token_count
    return None


@dataclass(frozen=True, slots=True)
class CompactionFigures:
    """What the envelope gate reads after a turn: completed turns since the latest compaction
    and the coordinator's latest reported prompt size (None when no model reported one)."""

    turns_since_compaction: int
    prompt_tokens: int | None


def compaction_figures(events: Sequence[Event]) -> CompactionFigures:
    """The envelope gate's figures for a session's events (rewinds not yet applied)."""
    live = live_events(events)
    turns = extract_turns(live, rewinds_applied=True)
    since = turns_since(turns, prior_compaction(live, rewinds_applied=True))
    return CompactionFigures(len(since), coordinator_prompt_tokens(live))
