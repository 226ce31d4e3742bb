"""What Zocrates changes in, and adds to, google-adk 2.13's tracing.

``patch_semconv_thoughts``: ADK's experimental GenAI semconv (``_experimental_semconv``, on by
default in its schema v2) serialises each ``types.Part`` of a model call into
``gen_ai.input.messages`` / ``gen_ai.output.messages`` with ``_to_part``, which keeps a thought
part's text but drops ``thought``, so a trace shows a reasoning model's thinking as its answer.
The wrapper adds ``"thought": true`` to such a part (Phoenix's GenAI models accept extra keys).
``_to_input_message`` and ``_to_system_instructions`` look ``_to_part`` up in the module at each
call, so replacing the module attribute covers inputs and outputs. Idempotent.

``child_node_span``: a span of our own around ``ctx.run_node`` calls (the pipeline's
``checkpoint_N``). ADK parents a child node's ``invoke_node`` span on the *parent context's*
``telemetry_context``, not on the current OpenTelemetry context, so a plain
``start_as_current_span`` would leave the child beside our span instead of under it. The helper
points that telemetry context at our span for the block and restores it after.

What is *not* patched: merged tool spans. ADK 2.13's ``trace_merged_tool_calls`` already
serialises only the function responses (never the event's actions and their ``state_delta``), and
in schema v2 it writes no response at all (each call has its own ``execute_tool`` span).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from google.adk.agents.context import Context
from google.adk.telemetry import _experimental_semconv as _semconv
from google.adk.telemetry import tracing as _tracing
from opentelemetry import context as context_api
from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from services.common.adk.internals import NodeInterruptedError

_PATCHED = "_zocrates_keeps_thought"
# Set on a span whose block ended in a pause (a checkpoint's RequestInput): not a failure.
PAUSED = "zocrates.paused"

tracer = trace.get_tracer("zocrates.research")

# ADK's own serialisers, for tests that check what a span will carry.
to_input_messages = _semconv._to_input_messages
trace_merged_tool_calls = _tracing.trace_merged_tool_calls

__all__ = [
    "PAUSED",
    "child_node_span",
    "patch_semconv_thoughts",
    "to_input_messages",
    "to_part",
    "trace_merged_tool_calls",
]


def to_part(part: Any, idx: int) -> Any:
    """ADK's serialisation of one part, as currently patched."""
    return _semconv._to_part(part, idx)


def patch_semconv_thoughts() -> None:
    original: Callable[..., Any] = _semconv._to_part
    if getattr(original, _PATCHED, False):
        return

    def _to_part(part: Any, idx: int, *args: Any, **kwargs: Any) -> Any:
        result = original(part, idx, *args, **kwargs)
        if result is not None and getattr(part, "thought", None):
            result["thought"] = True
        return result

    setattr(_to_part, _PATCHED, True)
    _semconv._to_part = _to_part


@contextmanager
def child_node_span(
    ctx: Context, name: str, attributes: Mapping[str, AttributeValue]
) -> Iterator[Span]:
    """A span named ``name`` under the node of ``ctx``, parent of the nodes it runs meanwhile.

    A pause (``NodeInterruptedError``) ends it with ``zocrates.paused`` and no error; any other
    exception is recorded and marks it failed. Callers only ``await`` inside the block.
    """
    outer = ctx.telemetry_context
    with tracer.start_as_current_span(
        name,
        context=outer.otel_context,
        attributes=dict(attributes),
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        # Same event list: the events stay associated with the enclosing node's span.
        ctx._telemetry_context = dataclasses.replace(outer, otel_context=context_api.get_current())
        try:
            yield span
        except NodeInterruptedError:
            span.set_attribute(PAUSED, True)
            raise
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, str(exc)))
            raise
        finally:
            ctx._telemetry_context = outer
