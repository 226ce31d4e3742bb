"""Process-wide logging: one handler on stderr, plain or JSON lines, secrets never logged."""

from __future__ import annotations

import json
import logging
import sys
import time

from opentelemetry import trace


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        # The trace this line belongs to, so a log collector joins it to the trace in Phoenix or
        # any OTLP backend. Set even without an exporter: the caller's traceparent is carried.
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            payload["trace_id"] = format(context.trace_id, "032x")
            payload["span_id"] = format(context.span_id, "016x")
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, ensure_ascii=False)


def setup_logging(*, level: str = "INFO", json_lines: bool = False) -> None:
    """Configure the root logger once; safe to call again (replaces the handler)."""
    handler = logging.StreamHandler(sys.stderr)
    if json_lines:
        handler.setFormatter(_JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # Third-party chatter that drowns our own lines at INFO.
    for noisy in ("uvicorn.access", "httpx", "aiosqlite", "asyncio"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
