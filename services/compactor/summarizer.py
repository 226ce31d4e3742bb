"""Rolling consolidation: plan the slice, write the summary, build the compaction event.

``plan_compaction`` picks turns 1..N-K that the live compaction does not cover yet. The new
event spans ``[start, end]`` with ``start`` the previous compaction's start (else the
session's first live event) and ``end`` the last event of turn N-K, scoped pipeline events
included. ADK's prompt assembly (``_process_compaction_events``) then hides every unscoped
event inside the range, keeps turns N-K+1..N verbatim (their events are later than ``end``),
and ``_get_compaction_ranges`` drops the older summary because the new range contains it:
one summary, never a stack of them.

Two summarizers write the text: :class:`ExtractiveSummarizer` (the offline default,
deterministic) and :class:`ModelSummarizer` (one call of any ADK ``BaseLlm``). Both read only
unscoped events, so raw retrieval loops never reach a summary; research answers may be quoted
up to ``MAX_TOOL_CONTENT_CHARS`` (ADK's own summarizer stops at 2,000).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.registry import LLMRegistry
from google.genai import types

from services.common.adk.history import is_compaction, is_rewind, live_events
from services.common.adk.names import REQUEST_INPUT, SEARCH_LIBRARY
from services.common.adk.turns import Turn, clip_text, extract_turns, prior_compaction
from services.common.errors import Unavailable
from services.common.tokens import fit_chars

logger = logging.getLogger(__name__)

MAX_TOOL_CONTENT_CHARS = 30_000
EXTRACTIVE_HEADER = "Summary of the earlier conversation (extractive):"
NO_SUMMARY_YET = "(none yet)"
SUMMARIZER_FAILED = "compaction_summarizer_failed"

SUMMARIZER_INSTRUCTION = """\
You maintain the running summary of a research conversation between a user and an assistant \
that answers from the user's Zotero library. Rewrite the existing summary and the new \
completed turns into ONE consolidated summary that replaces both.

Keep: every question the user asked and what was concluded, key findings with their numbers, \
the papers cited (authors, year, title) with item and page citations as given, decisions the \
user made, and open questions or gaps. Drop greetings, repetition and tool mechanics. Write \
in the user's language, as concise Markdown under a "## Conversation summary" heading."""


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """What the next compaction covers. ``new_turns`` are the turns it adds (numbered from
    ``first_new_turn``, 1-based among live turns); ``new_events`` their unscoped events."""

    start_timestamp: float
    end_timestamp: float
    previous_summary: str | None
    new_turns: tuple[Turn, ...]
    new_events: tuple[Event, ...]
    retained_turns: tuple[Turn, ...]
    first_new_turn: int
    subsumed_compactions: int

    @property
    def last_turn(self) -> int:
        """Number of the last turn the summary covers (N-K)."""
        return self.first_new_turn + len(self.new_turns) - 1


def plan_compaction(events: Sequence[Event], k: int) -> CompactionPlan | None:
    """The slice to summarize after turn N keeping K turns verbatim, or None when it would
    be empty (N <= K, or turns 1..N-K are all covered already)."""
    k = max(0, int(k))
    live = live_events(events)
    turns = extract_turns(live, rewinds_applied=True)
    if len(turns) <= k:
        return None
    candidates = turns[: len(turns) - k]
    retained = turns[len(turns) - k :]
    prior = prior_compaction(live, rewinds_applied=True)
    prev_end = prior.end_timestamp if prior else float("-inf")
    new_turns = [t for t in candidates if t.last_timestamp > prev_end]
    if not new_turns:
        return None
    end = candidates[-1].last_timestamp
    if retained and retained[0].first_timestamp <= end:
        logger.warning(
            "Turn %s starts at or before the end of turn %s; not compacting.",
            retained[0].invocation_id,
            candidates[-1].invocation_id,
        )
        return None
    timestamps = [e.timestamp for e in live if not is_compaction(e) and not is_rewind(e)]
    start = min(timestamps)
    if prior is not None:
        start = min(start, prior.start_timestamp)
    new_events = tuple(
        e
        for e in live
        if e.isolation_scope is None
        and not is_compaction(e)
        and not is_rewind(e)
        and prev_end < e.timestamp <= end
    )
    return CompactionPlan(
        start_timestamp=start,
        end_timestamp=end,
        previous_summary=(prior.summary_text or None) if prior else None,
        new_turns=tuple(new_turns),
        new_events=new_events,
        retained_turns=tuple(retained),
        first_new_turn=len(candidates) - len(new_turns) + 1,
        subsumed_compactions=len(prior.events) if prior else 0,
    )


# ---- the summarizer prompt ----


def _truncate(text: str, limit: int = MAX_TOOL_CONTENT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [truncated {len(text) - limit} chars]"


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _tool_response_text(name: str, response: Any) -> str:
    if name == SEARCH_LIBRARY and isinstance(response, dict):
        answer = str(response.get("answer") or "").strip()
        if answer:
            return answer
        summary = str(response.get("summary") or response.get("message") or "").strip()
        if summary:
            return summary
    return _json(response)


def format_events(events: Sequence[Event], *, max_tool_chars: int = MAX_TOOL_CONTENT_CHARS) -> str:
    """Unscoped events as summarizer input: texts, tool calls and tool results (each capped at
    ``max_tool_chars``). Thoughts, scoped events and HITL checkpoint traffic are left out."""
    lines: list[str] = []
    for event in events:
        if event.isolation_scope is not None or not (event.content and event.content.parts):
            continue
        for part in event.content.parts:
            if part.text and not part.thought:
                lines.append(f"{event.author}: {part.text.strip()}")
            call = part.function_call
            if call and call.name != REQUEST_INPUT:
                args = _truncate(_json(call.args or {}), max_tool_chars)
                lines.append(f"{event.author} called tool: {call.name}({args})")
            response = part.function_response
            if response and response.name != REQUEST_INPUT:
                text = _tool_response_text(response.name or "", response.response)
                lines.append(
                    f"Tool response from {response.name}:\n{_truncate(text, max_tool_chars)}"
                )
    return "\n".join(lines)


def summarizer_prompt(plan: CompactionPlan, *, max_tool_chars: int = MAX_TOOL_CONTENT_CHARS) -> str:
    """The consolidation input: the existing summary, then the new completed turns."""
    previous = plan.previous_summary or NO_SUMMARY_YET
    turns = format_events(plan.new_events, max_tool_chars=max_tool_chars)
    return (
        f"Existing Conversation Summary:\n{previous}\n\nNew Completed Turns to Integrate:\n{turns}"
    )


_TOOL_CHAR_STEPS = (MAX_TOOL_CONTENT_CHARS, 2000, 400, 0)


def fit_prompt(instruction: str, plan: CompactionPlan, max_tokens: int | None) -> str:
    """The summarizer's prompt within ``max_tokens`` (None: no limit): tool results shortened
    first, then the existing summary and the turns cut in their middle, so the oldest question
    and the newest answer both stay."""
    budget = None if max_tokens is None else fit_chars(max_tokens)
    prompt = ""
    for chars in _TOOL_CHAR_STEPS:
        prompt = f"{instruction}\n\n{summarizer_prompt(plan, max_tool_chars=chars)}"
        if budget is None or len(prompt) <= budget:
            return prompt
    assert budget is not None
    previous = clip_text(plan.previous_summary or NO_SUMMARY_YET, max(budget // 4, 200))
    turns = format_events(plan.new_events, max_tool_chars=0)
    room = max(budget - len(instruction) - len(previous) - 120, 400)
    if len(turns) > room:
        left = len(turns) - room
        turns = f"{turns[: room // 2]}\n[... {left} characters left out ...]\n{turns[-room // 2 :]}"
    return (
        f"{instruction}\n\nExisting Conversation Summary:\n{previous}\n\n"
        f"New Completed Turns to Integrate:\n{turns}"
    )


# ---- summarizers ----


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary's text, and the token counts its model reported (None: nothing reported, as
    for the offline summarizer; the span then records an estimate)."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Summarizer(Protocol):
    async def summarize(self, plan: CompactionPlan) -> Summary: ...


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_MARKDOWN_NOISE = re.compile(r"^\s*(#+\s*|[-*]\s+|>\s*)", re.M)
_DROPPED = re.compile(r"\((\d+) older entries dropped\)")


def first_sentences(text: str, count: int) -> str:
    """The first ``count`` sentences of ``text``, Markdown markers removed."""
    flat = " ".join(_MARKDOWN_NOISE.sub("", text).split())
    return " ".join(_SENTENCE_END.split(flat)[: max(1, count)])


class ExtractiveSummarizer:
    """The offline summary: one entry per turn (the question and the first sentences of the
    answer), appended to the previous summary's entries. Deterministic. Past ``max_chars`` the
    oldest entries are dropped (the newest turns always stay)."""

    def __init__(
        self,
        *,
        max_chars: int = 6000,
        answer_sentences: int = 2,
        question_chars: int = 300,
        answer_chars: int = 450,
    ) -> None:
        self.max_chars = max_chars
        self.answer_sentences = answer_sentences
        self.question_chars = question_chars
        self.answer_chars = answer_chars

    def entry(self, number: int, turn: Turn) -> str:
        question = clip_text(" ".join(turn.user_text.split()), self.question_chars)
        answer = clip_text(
            first_sentences(turn.assistant_text, self.answer_sentences), self.answer_chars
        )
        source = "library research" if turn.is_research else "reply"
        return f"- Turn {number}: the user asked: {question}\n  Answer ({source}): {answer}"

    def previous_entries(self, previous: str | None) -> tuple[list[str], int]:
        """The entries of the previous summary and how many it had dropped already."""
        if not previous or not previous.strip():
            return [], 0
        text = previous.strip()
        if not text.startswith(EXTRACTIVE_HEADER):
            flat = " ".join(text.split())
            return ["- Earlier summary: " + clip_text(flat, self.max_chars // 2)], 0
        body = text[len(EXTRACTIVE_HEADER) :].strip()
        dropped = 0
        marker = _DROPPED.match(body)
        if marker:
            dropped = int(marker.group(1))
            body = body[marker.end() :].strip()
        entries = [e if e.startswith("- ") else "- " + e for e in re.split(r"\n(?=- )", body) if e]
        return entries, dropped

    async def summarize(self, plan: CompactionPlan) -> Summary:
        new = [self.entry(plan.first_new_turn + i, t) for i, t in enumerate(plan.new_turns)]
        old, dropped = self.previous_entries(plan.previous_summary)
        budget = self.max_chars - 40  # room for the "(n older entries dropped)" line
        while old and len("\n".join([EXTRACTIVE_HEADER, *old, *new])) > budget:
            old.pop(0)
            dropped += 1
        while len(new) > 1 and len("\n".join([EXTRACTIVE_HEADER, *new])) > budget:
            new.pop(0)
            dropped += 1
        lines = [EXTRACTIVE_HEADER]
        if dropped:
            lines.append(f"({dropped} older entries dropped)")
        return Summary("\n".join([*lines, *old, *new])[: max(self.max_chars, 200)])


class ModelSummarizer:
    """The summary written by a generative model in one ``generate_content_async`` call.

    ``llm`` is an ADK ``BaseLlm`` or a model name for ADK's registry (``gemini-2.5-flash``;
    the caller builds LiteLLM models). Raises ``Unavailable`` (code
    ``compaction_summarizer_failed``) when the model fails or answers with no text."""

    def __init__(
        self,
        llm: BaseLlm | str,
        *,
        instruction: str = SUMMARIZER_INSTRUCTION,
        max_prompt_tokens: int | None = None,
    ) -> None:
        self.llm = LLMRegistry.new_llm(llm) if isinstance(llm, str) else llm
        self.instruction = instruction
        # A small local model's window: the prompt is fitted to it (fit_prompt).
        self.max_prompt_tokens = max_prompt_tokens

    async def summarize(self, plan: CompactionPlan) -> Summary:
        prompt = fit_prompt(self.instruction, plan, self.max_prompt_tokens)
        request = LlmRequest(
            model=self.llm.model,
            contents=[types.Content(role="user", parts=[types.Part(text=prompt)])],
        )
        texts: list[str] = []
        usage: types.GenerateContentResponseUsageMetadata | None = None
        try:
            async for response in self.llm.generate_content_async(request, stream=False):
                usage = response.usage_metadata or usage
                if response.error_code:
                    raise Unavailable(
                        f"The summarizer model {self.llm.model} failed: "
                        f"{response.error_code} {response.error_message or ''}".strip(),
                        code=SUMMARIZER_FAILED,
                    )
                if response.partial or not (response.content and response.content.parts):
                    continue
                texts.extend(p.text for p in response.content.parts if p.text and not p.thought)
        except Unavailable:
            raise
        except Exception as exc:
            raise Unavailable(
                f"The summarizer model {self.llm.model} failed: {type(exc).__name__}: {exc}",
                code=SUMMARIZER_FAILED,
            ) from exc
        text = "".join(texts).strip()
        if not text:
            raise Unavailable(
                f"The summarizer model {self.llm.model} answered with no text.",
                code=SUMMARIZER_FAILED,
            )
        return Summary(
            text,
            prompt_tokens=usage.prompt_token_count if usage else None,
            completion_tokens=usage.candidates_token_count if usage else None,
        )


# ---- the event ----


def compaction_event(plan: CompactionPlan, summary_text: str) -> Event:
    """The compaction event to append (unscoped, author ``user``, no ``content``: ADK
    materializes the summary from ``compacted_content`` when it builds a prompt)."""
    if not summary_text.strip():
        raise ValueError("A compaction needs a non-empty summary.")
    return Event(
        author="user",
        invocation_id=Event.new_id(),
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=plan.start_timestamp,
                end_timestamp=plan.end_timestamp,
                compacted_content=types.Content(
                    role="model", parts=[types.Part(text=summary_text.strip())]
                ),
            )
        ),
    )
