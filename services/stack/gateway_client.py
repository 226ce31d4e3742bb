"""What the `zocrates index` and `zocrates search` commands need: the running gateway's URL
and token, and a reader of its server-sent events."""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Iterator
from typing import Any

import httpx

from services.common import ports
from services.common.settings import DATA_FOLDER_NAME


class GatewayError(SystemExit):
    """A failed call, with the gateway's message (exits the command with it)."""


def gateway_url(port: int | None) -> str:
    host = os.environ.get("ZOCRATES_BIND_HOST", "127.0.0.1")
    base = port or int(os.environ.get("ZOCRATES_PORT", ports.DEFAULT_BASE_PORT))
    return f"http://{host}:{base}"


def read_token(zotero_dir: pathlib.Path | None) -> str:
    if os.environ.get("ZOCRATES_GATEWAY_TOKEN"):
        return os.environ["ZOCRATES_GATEWAY_TOKEN"]
    folder = (
        zotero_dir or pathlib.Path(os.environ.get("ZOCRATES_ZOTERO_DIR", "~/Zotero"))
    ).expanduser()
    path = folder / DATA_FOLDER_NAME / "gateway.token"
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise GatewayError(
            f"No gateway token at {path}. "
            "Is Zocrates running (`make run`) with this Zotero directory?"
        ) from None


def client(url: str, token: str, *, timeout: float | None = 60.0) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout)


def check(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        raise GatewayError(
            f"gateway answered {response.status_code}: {response.text[:200]}"
        ) from None
    if response.status_code >= 400 or body.get("status") == "error":
        raise GatewayError(
            f"error {response.status_code} ({body.get('code')}): {body.get('message')}"
        )
    return dict(body)


def events(response: httpx.Response) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event type, data) of each server-sent event of a streaming response."""
    event, data = "message", list[str]()
    for line in response.iter_lines():
        if not line:
            if data:
                yield event, json.loads("\n".join(data))
            event, data = "message", list[str]()
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def connect_error(url: str) -> GatewayError:
    return GatewayError(
        f"Cannot reach the Zocrates gateway at {url}. Start it with `make run` (or `zocrates run`)."
    )
