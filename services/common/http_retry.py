"""Helpers for clients of remote HTTP APIs (OpenAlex, the Decisions API)."""

from __future__ import annotations

import email.utils
import time

import httpx


def retry_after_seconds(response: httpx.Response) -> float | None:
    """``Retry-After`` in seconds (delta-seconds or an HTTP date); None if absent or bad."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
