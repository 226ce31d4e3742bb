"""``POST /chat``'s body: ``mode`` (docs/research.md, "Path of a turn") is accepted, checked against
the scope it needs, and carried into the turn's scope; a bad one is the gateway's usual 422.

The body goes through the gateway's own model and error handlers on a bare app (the route's
agent call is not the subject here; tests/integration/test_chat_mode.py runs the real turn)."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from services.common.turn_scope import MAX_IMAGE_BYTES, MAX_IMAGE_SNIPPETS, TurnScope
from services.gateway.errors import install_error_handlers
from services.gateway.schemas.chat import ChatBody

SESSION = "0f0e6c1d-2f7b-4d4a-9a53-1c0b7e6f2a10"
ITEM = {"item_key": "ABCD1234", "title": "lme4"}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    install_error_handlers(app)

    @app.post("/chat")
    async def chat(body: ChatBody) -> dict[str, Any]:
        scope = dataclasses.asdict(body.turn_scope())
        for s in scope["snippets"]:  # bytes as text, for the JSON answer
            if "image" in s:
                s["image"]["data"] = base64.b64encode(s["image"]["data"]).decode()
        return scope

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


# -- image snippets -------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64  # a PNG signature is what the gateway checks
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 64


def _image(data: bytes = PNG, mime_type: str = "image/png", **fields: Any) -> dict[str, Any]:
    body = {"mime_type": mime_type, "data": base64.b64encode(data).decode()}
    return {"kind": "image", "image": body, "item_key": "ABCD1234", "page": 4, **fields}


async def _image_refused(http: httpx.AsyncClient, snippets: list[Any]) -> tuple[str, str]:
    response = await http.post(
        "/chat", json={"session_id": SESSION, "prompt": "Q?", "snippets": snippets}
    )
    assert response.status_code == 422, response.text
    body = response.json()
    return str(body["code"]), str(body["message"])


async def test_a_text_snippet_is_carried_as_it_always_was(http: httpx.AsyncClient) -> None:
    text = {"text": "REML", "item_key": "ABCD1234", "page": 3, "title": "lme4"}
    assert (await _scope(http, snippets=[text]))["snippets"] == [text]
    assert (await _scope(http, snippets=[{**text, "kind": "text"}]))["snippets"] == [text]


async def test_an_image_snippet_is_decoded_with_its_caption(http: httpx.AsyncClient) -> None:
    captured: list[TurnScope] = []
    app = FastAPI()
    install_error_handlers(app)

    @app.post("/chat")
    async def chat(body: ChatBody) -> dict[str, Any]:
        captured.append(body.turn_scope())
        return {}

    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as client:
        snippets = [_image(title="lme4", text="Figure 2"), _image(JPEG, "image/jpeg")]
        response = await client.post(
            "/chat", json={"session_id": SESSION, "prompt": "Q?", "snippets": snippets}
        )
    assert response.status_code == 200, response.text
    first, second = captured[0].snippets
    assert first == {
        "kind": "image",
        "text": "Figure 2",
        "item_key": "ABCD1234",
        "page": 4,
        "title": "lme4",
        "image": {"mime_type": "image/png", "data": PNG},
    }
    assert second["image"] == {"mime_type": "image/jpeg", "data": JPEG} and second["text"] == ""


async def test_a_type_outside_the_allow_list_is_refused(http: httpx.AsyncClient) -> None:
    code, message = await _image_refused(http, [_image(mime_type="image/gif")])
    assert code == "unsupported_image_type"
    assert "image/png, image/jpeg, image/webp" in message and "image/gif" in message


async def test_an_oversized_image_is_refused_before_and_after_decoding(
    http: httpx.AsyncClient,
) -> None:
    over = PNG + b"\x00" * MAX_IMAGE_BYTES
    code, message = await _image_refused(http, [_image(over)])
    assert code == "image_too_large" and "at most 2 MB" in message, message
    just = PNG + b"\x00" * (MAX_IMAGE_BYTES - len(PNG) + 1)  # one byte over, decoded
    assert (await _image_refused(http, [_image(just)]))[0] == "image_too_large"


async def test_bad_base64_and_bytes_that_are_no_such_image_are_refused(
    http: httpx.AsyncClient,
) -> None:
    bad = _image()
    bad["image"]["data"] = "not*base64!"
    code, message = await _image_refused(http, [bad])
    assert code == "invalid_image" and "base64" in message
    url = _image()
    url["image"]["data"] = "data:image/png;base64," + url["image"]["data"]
    code, message = await _image_refused(http, [url])
    assert code == "invalid_image" and "data: URL" in message
    code, message = await _image_refused(http, [_image(JPEG, "image/png")])
    assert code == "invalid_image" and "not a PNG image" in message


async def test_an_image_snippet_needs_its_image_and_at_most_three_ride_along(
    http: httpx.AsyncClient,
) -> None:
    code, message = await _image_refused(http, [{"kind": "image", "text": "Figure 2"}])
    assert code == "invalid_request" and "needs its image" in message
    code, _ = await _image_refused(http, [{"text": "", "item_key": "ABCD1234"}])
    assert code == "invalid_request"
    code, message = await _image_refused(http, [_image()] * (MAX_IMAGE_SNIPPETS + 1))
    assert code == "too_many_images" and "at most 3" in message
