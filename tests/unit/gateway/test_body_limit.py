"""The gateway's body limit: a body over ``MAX_BODY_BYTES`` is a 413 ``payload_too_large``
that says what fits, whether it announced its length or streamed without one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request

from services.gateway.errors import install_error_handlers
from services.gateway.middleware import MAX_BODY_BYTES, GatewayMiddleware

TOKEN = "t" * 40


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    install_error_handlers(app)

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, Any]:
        return {"bytes": len(await request.body())}

    app.add_middleware(
        GatewayMiddleware,
        allowed_hosts=["test"],
        token=lambda: TOKEN,
        token_hint=lambda: "gateway.token",
    )
    transport = httpx.ASGITransport(app=app)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://test", headers=headers
    ) as client:
        yield client


async def test_a_body_within_the_limit_passes(http: httpx.AsyncClient) -> None:
    response = await http.post("/echo", content=b"x" * 1000)
    assert response.status_code == 200 and response.json() == {"bytes": 1000}


async def test_a_body_over_the_limit_is_a_413_that_says_what_fits(
    http: httpx.AsyncClient,
) -> None:
    response = await http.post("/echo", content=b"x" * (MAX_BODY_BYTES + 1))
    assert response.status_code == 413, response.text
    body = response.json()
    assert body["code"] == "payload_too_large"
    assert "at most 12 MB" in body["message"] and "3 images of at most 2 MB" in body["message"]


async def test_a_streamed_body_without_a_length_is_stopped_too(http: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(13):
            yield b"x" * (1024 * 1024)

    response = await http.post("/echo", content=chunks())
    assert response.status_code == 413, response.text
    assert response.json()["code"] == "payload_too_large"
