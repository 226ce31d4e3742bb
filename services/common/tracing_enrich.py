"""Spans as Phoenix reads them: an OpenInference kind on every span, one message per turn.

:class:`EnrichingSpanProcessor` sits in front of the exporting processor. At each span's end it
hands the exporter a copy of the span (an ended span's attributes are frozen) with:

- ``openinference.span.kind``, unless the span has one: ADK's ``invoke_agent`` is AGENT, its
  ``generate_content`` LLM, its ``execute_tool`` TOOL; the reranker's RPCs RERANKER and
  EMBEDDING, the library's search RETRIEVER; everything else (workflows, nodes, RPCs, HTTP)
  CHAIN. OpenInference (0.1.42) and Phoenix have no WORKFLOW or TASK kind (Phoenix shows an
  unknown kind as UNKNOWN), so the span tree's workflow/task distinction rides in
  ``zocrates.span.kind``: WORKFLOW for
  ``invoke_workflow`` and our ``checkpoint_N``, TASK for ``invoke_node`` and ``rerank_evidence``.
- consolidated input messages on model calls: a replayed conversation carries each streamed
  assistant chunk as a message of its own. Consecutive text-only assistant messages become one,
  and an assistant message's text parts at most one thought part and one response part; a user
  message's text parts become one. ``gen_ai.input.messages`` is rewritten and ``input.value``
  set to a readable transcript (``[assistant] Thought: ... / Response: ...``).

Merged tool spans are left alone: ADK 2.13 writes only the function responses there (see
:mod:`services.common.adk.telemetry`), so there is no ``state_delta`` to strip.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as context_api
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import Status, StatusCode
from opentelemetry.util.types import AttributeValue

OI_KIND = "openinference.span.kind"
ZOCRATES_KIND = "zocrates.span.kind"
INPUT_VALUE = "input.value"
INPUT_MIME_TYPE = "input.mime_type"
INPUT_MESSAGES = "gen_ai.input.messages"
OPERATION = "gen_ai.operation.name"

AGENT, LLM, TOOL, CHAIN, RERANKER, EMBEDDING, RETRIEVER = (
    "AGENT",
    "LLM",
    "TOOL",
    "CHAIN",
    "RERANKER",
    "EMBEDDING",
    "RETRIEVER",
)
WORKFLOW, TASK = "WORKFLOW", "TASK"

# gen_ai.operation.name (or the span name's first word) -> (OpenInference kind, our label)
_OPERATIONS: dict[str, tuple[str, str | None]] = {
    "invoke_agent": (AGENT, None),
    "create_agent": (AGENT, None),
    "generate_content": (LLM, None),
    "chat": (LLM, None),
    "text_completion": (LLM, None),
    "call_llm": (LLM, None),
    "execute_tool": (TOOL, None),
    "invoke_workflow": (CHAIN, WORKFLOW),
    "invoke_node": (CHAIN, TASK),
}
_RPCS = {
    "reranker/Rerank": RERANKER,
    "reranker/Embed": EMBEDDING,
    "library/SearchLibrary": RETRIEVER,
}

tracer = trace.get_tracer("zocrates")


def span_kind(name: str, attributes: Mapping[str, Any]) -> tuple[str, str | None]:
    """The OpenInference kind and the ``zocrates.span.kind`` label of a span."""
    operation = str(attributes.get(OPERATION) or name.split(" ", 1)[0])
    if operation in _OPERATIONS:
        return _OPERATIONS[operation]
    return _RPCS.get(name, CHAIN), None


@contextmanager
def task_span(
    name: str, attributes: Mapping[str, AttributeValue], *, label: str = TASK
) -> Iterator[trace.Span]:
    """A CHAIN span of ours (``zocrates.span.kind`` = ``label``), current for the block."""
    with tracer.start_as_current_span(
        name, attributes={OI_KIND: CHAIN, ZOCRATES_KIND: label, **attributes}
    ) as span:
        yield span


def _text_only(parts: Sequence[Any]) -> bool:
    return all(isinstance(p, dict) and p.get("type") == "text" for p in parts)


def _joined(parts: Sequence[dict[str, Any]], *, thought: bool, sep: str) -> dict[str, Any] | None:
    texts = [str(p.get("content") or "") for p in parts if bool(p.get("thought")) == thought]
    if not texts:
        return None
    part: dict[str, Any] = {"type": "text", "content": sep.join(texts)}
    if thought:
        part["thought"] = True
    return part


def _consolidated_parts(role: str, parts: list[Any]) -> list[Any]:
    texts = [p for p in parts if isinstance(p, dict) and p.get("type") == "text"]
    others = [p for p in parts if not (isinstance(p, dict) and p.get("type") == "text")]
    if role == "assistant":
        # Streamed tokens: concatenated as they came, thoughts first, then the response.
        joined = [_joined(texts, thought=True, sep=""), _joined(texts, thought=False, sep="")]
    elif role == "user":
        # Separate text parts of a user turn (a question, a note) read as separate lines.
        joined = [_joined(texts, thought=False, sep="\n"), _joined(texts, thought=True, sep="\n")]
    else:
        return parts
    return [p for p in joined if p is not None] + others


def consolidate_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Streamed assistant chunks merged into one message with at most one thought and one
    response part; a user message's text joined. Tool calls, responses and media stay."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role") or "")
        parts = list(message.get("parts") or [])
        previous = merged[-1] if merged else None
        if (
            role == "assistant"
            and previous is not None
            and previous["role"] == "assistant"
            and _text_only(parts)
            and _text_only(previous["parts"])
        ):
            previous["parts"].extend(parts)
            continue
        merged.append({**message, "role": role, "parts": parts})
    for message in merged:
        message["parts"] = _consolidated_parts(message["role"], message["parts"])
    return merged


def format_parts_with_labeled_thoughts(role: str, parts: Sequence[Any]) -> str:
    """One message as ``input.value`` shows it: thoughts and the response labelled apart."""
    has_thought = any(isinstance(p, dict) and p.get("thought") for p in parts)
    lines: list[str] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            content = str(part.get("content") or "")
            if part.get("thought"):
                lines.append(f"Thought: {content}")
            elif has_thought and role == "assistant":
                lines.append(f"Response: {content}")
            else:
                lines.append(content)
        elif kind == "tool_call":
            args = json.dumps(part.get("arguments"), ensure_ascii=False, default=str)
            lines.append(f"tool_call {part.get('name', '')}({args})")
        elif kind == "tool_call_response":
            response = json.dumps(part.get("response"), ensure_ascii=False, default=str)
            lines.append(f"tool_call_response {part.get('id', '')}: {response}")
        else:
            mime = part.get("mime_type")
            lines.append(f"<{kind} {mime}>" if mime else f"<{kind}>")
    return f"[{role or 'unknown'}] " + "\n".join(lines)


def enriched_attributes(name: str, attributes: Mapping[str, Any]) -> dict[str, Any]:
    """``attributes`` with the span's kind and, on a model call, consolidated input messages."""
    result = dict(attributes)
    if OI_KIND not in result:
        kind, label = span_kind(name, result)
        result[OI_KIND] = kind
        if label is not None and ZOCRATES_KIND not in result:
            result[ZOCRATES_KIND] = label
    raw = result.get(INPUT_MESSAGES)
    if isinstance(raw, str):
        try:
            messages = json.loads(raw)
        except ValueError:
            return result
        if isinstance(messages, list):
            consolidated = consolidate_messages(messages)
            result[INPUT_MESSAGES] = json.dumps(
                consolidated, ensure_ascii=False, separators=(",", ":")
            )
            result[INPUT_VALUE] = "\n".join(
                format_parts_with_labeled_thoughts(m["role"], m["parts"]) for m in consolidated
            )
            result[INPUT_MIME_TYPE] = "text/plain"
    return result


class EnrichingSpanProcessor(SpanProcessor):
    """Forwards every span to ``inner`` (the exporting processor) enriched as described above."""

    def __init__(self, inner: SpanProcessor) -> None:
        self._inner = inner

    def on_start(self, span: Span, parent_context: context_api.Context | None = None) -> None:
        self._inner.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        self._inner.on_end(enriched(span))

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


def enriched(span: ReadableSpan) -> ReadableSpan:
    attributes = enriched_attributes(span.name, span.attributes or {})
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=attributes,
        events=span.events,
        links=span.links,
        kind=span.kind,
        status=span.status if span.status is not None else Status(StatusCode.UNSET),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )
