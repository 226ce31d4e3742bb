"""Reading server-sent events the way the plugin does."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx


async def events(response: httpx.Response) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    kind, data = "message", []
    async for line in response.aiter_lines():
        if line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            yield kind, json.loads("\n".join(data))
            kind, data = "message", []


async def post_stream(
    http: httpx.AsyncClient, path: str, body: dict[str, Any]
) -> tuple[int, list[tuple[str, dict[str, Any]]], dict[str, Any] | None]:
    """(status, events, error body) of a streaming POST, read to the end."""
    async with http.stream("POST", path, json=body) as response:
        if response.status_code != 200:
            await response.aread()
            return response.status_code, [], response.json()
        return 200, [e async for e in events(response)], None


def post_stream_sync(
    http: httpx.Client, path: str, body: dict[str, Any]
) -> tuple[int, list[tuple[str, dict[str, Any]]], bytes]:
    """(status, events, body of a refusal) of a streaming POST with a blocking client."""
    out: list[tuple[str, dict[str, Any]]] = []
    with http.stream("POST", path, json=body) as response:
        if response.status_code != 200:
            return response.status_code, out, response.read()
        kind = "message"
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:"):
                out.append((kind, json.loads(line[5:])))
    return 200, out, b""
