"""``POST /chat``'s body: the session-lifecycle document's ``mode`` is accepted, checked against
the scope it needs, and carried into the turn's scope; a bad one is the gateway's usual 422.

The body goes through the gateway's own model and error handlers on a bare app (the route's
agent call is not the subject here; tests/integration/test_chat_mode.py runs the real turn)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from services.gateway.errors import install_error_handlers
from services.gateway.routers.chat import ChatBody

SESSION = "0f0e6c1d-2f7b-4d4a-9a53-1c0b7e6f2a10"
ITEM = {"item_key": "ABCD1234", "title": "lme4"}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    install_error_handlers(app)

    @app.post("/chat")
    async def chat(body: ChatBody) -> dict[str, Any]:
        return dataclasses.asdict(body.turn_scope())

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        yield client


async def _scope(http: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    response = await http.post("/chat", json={"session_id": SESSION, "prompt": "Q?", **fields})
    assert response.status_code == 200, response.text
    return dict(response.json())


async def _refused(http: httpx.AsyncClient, **fields: Any) -> str:
    response = await http.post("/chat", json={"session_id": SESSION, "prompt": "Q?", **fields})
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["status"] == "error" and body["code"] == "invalid_request", body
    return str(body["message"])


async def test_each_mode_is_accepted_and_picks_its_scope(http: httpx.AsyncClient) -> None:
    both = {"active_items": [ITEM], "collection_key": "COLL0001", "collection_name": "Stats"}
    items = await _scope(http, mode="items", **both)
    assert items["mode"] == "items" and items["items"] == [ITEM] and items["collection_key"] == ""
    collection = await _scope(http, mode="collection", **both)
    assert collection["mode"] == "collection" and collection["items"] == []
    assert (collection["collection_key"], collection["collection_name"]) == ("COLL0001", "Stats")
    library = await _scope(http, mode="library", **both)
    assert library["mode"] == "library" and library["items"] == []
    assert library["collection_key"] == ""


async def test_without_mode_it_is_derived_from_the_scope(http: httpx.AsyncClient) -> None:
    assert (await _scope(http, active_items=[ITEM]))["mode"] == "items"
    assert (await _scope(http, collection_key="COLL0001"))["mode"] == "collection"
    assert (await _scope(http))["mode"] == "library"
    assert (await _scope(http, mode=None, active_items=None))["mode"] == "library"


async def test_a_bad_mode_is_a_422_that_names_the_values(http: httpx.AsyncClient) -> None:
    message = await _refused(http, mode="papers")
    assert "mode" in message and "'items', 'collection' or 'library'" in message, message


async def test_a_mode_without_its_scope_is_a_422_that_says_what_to_send(
    http: httpx.AsyncClient,
) -> None:
    assert "active_items" in await _refused(http, mode="items")
    assert "active_items" in await _refused(http, mode="items", active_items=[])
    assert "collection_key" in await _refused(http, mode="collection", active_items=[ITEM])
