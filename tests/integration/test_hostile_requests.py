"""Oversized, unknown and malformed input to the gateway gets a clear refusal with a stable code
and changes nothing (issue 16, "Hostile input")."""

from __future__ import annotations

import pathlib
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.support.stack import running_gateway, running_sessions


@pytest.fixture
async def http(tmp_path: pathlib.Path) -> AsyncIterator[httpx.AsyncClient]:
    async with (
        running_sessions(tmp_path) as sessions,
        running_gateway(tmp_path, sessions.runtime.address) as gateway,
    ):
        await gateway.app.state.gateway.startup_done.wait()
        token = (tmp_path / "zocrates-data" / "gateway.token").read_text().strip()
        async with httpx.AsyncClient(
            base_url=gateway.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as client:
            yield client


def _refusal(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["status"] == "error" and body["code"] == code, body
    return str(body["message"])


async def test_an_oversized_prompt_is_413_and_starts_nothing(http: httpx.AsyncClient) -> None:
    session_id = (await http.post("/sessions", json={"title": "big"})).json()["session"]["id"]
    message = _refusal(
        await http.post("/chat", json={"session_id": session_id, "prompt": "x" * 20_001}),
        413,
        "prompt_too_long",
    )
    assert "20,001" in message and "20,000" in message
    session = (await http.get(f"/sessions/{session_id}")).json()["session"]
    assert session["messages"] == []
    # A body over the gateway's limit, whatever it holds.
    huge = b'{"session_id": "' + session_id.encode() + b'", "prompt": "' + b"y" * (13 << 20) + b'"}'
    _refusal(
        await http.post("/chat", content=huge, headers={"Content-Type": "application/json"}),
        413,
        "payload_too_large",
    )


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/sessions/{id}"),
        ("DELETE", "/sessions/{id}"),
        ("PATCH", "/sessions/{id}"),
        ("GET", "/sessions/{id}/images/" + "0" * 64),
    ],
)
async def test_unknown_and_malformed_session_ids(
    http: httpx.AsyncClient, method: str, path: str
) -> None:
    bodies = {"PATCH": {"title": "t"}}
    unknown = await http.request(method, path.format(id="0" * 32), json=bodies.get(method))
    assert unknown.status_code == 404, unknown.text
    assert unknown.json()["code"] == "session_not_found"
    for bad in ("..%2F..%2Fetc", "a" * 300, "%00", "id with spaces"):
        response = await http.request(method, path.format(id=bad), json=bodies.get(method))
        assert response.status_code in (400, 404, 422), (bad, response.status_code, response.text)
        assert response.json()["status"] == "error" and response.json()["code"], response.text
    assert (await http.get("/sessions")).json()["sessions"] == []
