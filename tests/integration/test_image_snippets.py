"""Image snippets end to end: a figure pinned from the reader rides one question through the
real services (gateway -> agent -> sessions), on a one-paper library.

- With the built-in offline model (it cannot see images): the turn reads the pinned page of
  the pinned paper first and answers from it; the message's ``context`` names the image by its
  metadata, its bytes are stored once (the prompt event's inline part) and come back from
  ``GET /sessions/{id}/images/{sha256}``, also after the turn was rewound.
- With every role on a local server speaking OpenAI's Chat Completions wire format (through
  LiteLLM): the coordinator's and the synthesizer's requests carry the image as an
  ``image_url`` part (a base64 data URI) of the user's message, and the instructions name it
  with an ``<image_snippet>`` element, keys only in the search subagent's prompt.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before anything imports litellm

import httpx
import pytest
import pytest_asyncio

from services.agent.research.agents import COORDINATOR, SEARCH_SUBAGENT
from services.agent.research.runtime import API_KEY_ENV
from services.common.adk.names import SYNTHESIZER
from services.sessions.remote_session_service import RemoteSessionService
from tests.support import zotero_fixture as zf
from tests.support.openai_server import CAPABLE_MODEL, OpenAIServer, message_text, serve_openai
from tests.support.research_model import Model, role_of
from tests.support.sse import post_stream
from tests.support.stack import (
    running_indexed_stack,
)

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings("ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the 'model_:DeprecationWarning"),
]

FILE = "lme4__lmer.pdf"
LME4 = zf.paper_item_key(FILE)
PAGE = 3
# A PNG as the gateway checks it (signature first); no model here decodes it.
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
SHA = hashlib.sha256(PNG).hexdigest()
CAPTION = "the optimizer's convergence"
QUESTION = "What does this figure show?"
MODELS = {COORDINATOR: "coordinator-vlm", SEARCH_SUBAGENT: "subagent-vlm", SYNTHESIZER: "vlm"}


def image_snippet(**fields: Any) -> dict[str, Any]:
    return {
        "kind": "image",
        "image": {"mime_type": "image/png", "data": base64.b64encode(PNG).decode()},
        "item_key": LME4,
        "page": PAGE,
        "title": "Fitting Linear Mixed-Effects Models Using lme4",
        "text": CAPTION,
        **fields,
    }


@dataclass
class Stack:
    http: httpx.AsyncClient
    server: OpenAIServer
    sessions: RemoteSessionService
    app_name: str
    user_id: str

    async def new_session(self) -> str:
        response = await self.http.post("/sessions", json={"title": "Figures"})
        assert response.status_code == 201, response.text
        return str(response.json()["session"]["id"])

    async def ask(self, session_id: str, snippets: list[dict[str, Any]]) -> dict[str, Any]:
        status, evs, error = await post_stream(
            self.http,
            "/chat",
            {"session_id": session_id, "prompt": QUESTION, "snippets": snippets},
        )
        assert status == 200, error
        assert evs and evs[-1][0] == "done" and evs[-1][1]["status"] == "completed", evs[-3:]
        return {"events": evs, "done": evs[-1][1]}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    zotero = tmp_path_factory.mktemp("image_snippets") / "zotero"
    zf.build_zotero_library(zotero, files=(FILE,))
    async with contextlib.AsyncExitStack() as exit_stack:
        monkeypatch = exit_stack.enter_context(pytest.MonkeyPatch.context())
        monkeypatch.setenv(API_KEY_ENV, "sk-image-test")
        server = exit_stack.enter_context(serve_openai(Model()))
        indexed = await exit_stack.enter_async_context(running_indexed_stack(zotero))
        sessions = indexed.sessions
        gateway, token = indexed.gateway, indexed.token
        assert gateway is not None
        http = await exit_stack.enter_async_context(
            httpx.AsyncClient(
                base_url=gateway.url, headers={"Authorization": f"Bearer {token}"}, timeout=120
            )
        )
        settings = gateway.app.state.gateway.settings
        yield Stack(
            http=http,
            server=server,
            sessions=RemoteSessionService(sessions.runtime.address),
            app_name=settings.app_name,
            user_id=settings.user_id,
        )


def _calls(evs: list[tuple[str, dict[str, Any]]], name: str) -> list[dict[str, Any]]:
    return [
        p["function_call"]["args"]
        for kind, data in evs
        if kind == "message" and not data["partial"]
        for p in data["parts"]
        if "function_call" in p and p["function_call"]["name"] == name
    ]


async def test_the_offline_model_reads_the_pinned_page_and_the_image_is_stored_once(
    stack: Stack,
) -> None:
    session_id = await stack.new_session()
    turn = await stack.ask(session_id, [image_snippet()])
    reads = _calls(turn["events"], "read_document")
    assert reads and reads[0] == {"item_key": LME4, "start_page": PAGE, "end_page": PAGE}, reads
    searches = [a["query"] for a in _calls(turn["events"], "search_corpus")]
    assert CAPTION in searches, searches  # the caption is searched too
    done = turn["done"]
    assert "Offline extractive answer" in done["answer"]
    assert any(c["item_key"] == LME4 and c["page"] == PAGE for c in done["citations"]), done

    # The message's context: the image's metadata, enough to fetch it, not its bytes.
    response = await stack.http.get(f"/sessions/{session_id}")
    user = next(m for m in response.json()["session"]["messages"] if m["role"] == "user")
    assert user["text"] == QUESTION
    assert user["context"]["snippets"] == [
        {
            "kind": "image",
            "text": CAPTION,
            "item_key": LME4,
            "page": PAGE,
            "title": "Fitting Linear Mixed-Effects Models Using lme4",
            "image": {"mime_type": "image/png", "size": len(PNG), "sha256": SHA, "part": 1},
        }
    ]

    # Stored once: the prompt event's inline part; no state value holds the bytes.
    session = await stack.sessions.get_session(
        app_name=stack.app_name, user_id=stack.user_id, session_id=session_id
    )
    assert session is not None
    inline = [
        (e.author, p.inline_data.data)
        for e in session.events
        for p in (e.content.parts if e.content and e.content.parts else [])
        if p.inline_data is not None
    ]
    assert inline == [("user", PNG)]
    assert SHA in str(session.state) and base64.b64encode(PNG).decode() not in str(session.state)

    # The image comes back by its name; a bad name and an unknown one are told apart.
    response = await stack.http.get(f"/sessions/{session_id}/images/{SHA}")
    assert response.status_code == 200, response.text
    assert response.json() == {
        "status": "success",
        "image": {"mime_type": "image/png", "data": base64.b64encode(PNG).decode()},
    }
    response = await stack.http.get(f"/sessions/{session_id}/images/not-a-digest")
    assert response.status_code == 400 and response.json()["code"] == "invalid_image_id"
    response = await stack.http.get(f"/sessions/{session_id}/images/{'0' * 64}")
    assert response.status_code == 404 and response.json()["code"] == "image_not_found"

    # Rewound: the conversation is empty again, the image can still be brought back.
    response = await stack.http.post(
        f"/sessions/{session_id}/rewind", json={"invocation_id": done["invocation_id"]}
    )
    assert response.status_code == 200 and response.json()["session"]["messages"] == []
    response = await stack.http.get(f"/sessions/{session_id}/images/{SHA}")
    assert response.status_code == 200 and response.json()["image"]["mime_type"] == "image/png"


async def test_a_refused_image_gets_its_code(stack: Stack) -> None:
    session_id = await stack.new_session()
    bad = image_snippet()
    bad["image"]["mime_type"] = "image/gif"
    response = await stack.http.post(
        "/chat", json={"session_id": session_id, "prompt": QUESTION, "snippets": [bad]}
    )
    assert response.status_code == 422 and response.json()["code"] == "unsupported_image_type"


async def test_a_model_that_can_see_gets_the_image_in_the_users_message(stack: Stack) -> None:
    changes = {
        "coordinator_model": f"openai/{MODELS[COORDINATOR]}",
        "subagent_model": f"openai/{MODELS[SEARCH_SUBAGENT]}",
        "synthesizer_model": f"openai/{MODELS[SYNTHESIZER]}",
        "model_api_base": stack.server.api_base,
        **CAPABLE_MODEL,
    }
    before = (await stack.http.get("/config")).json()["config"]
    assert (await stack.http.put("/config", json=changes)).status_code == 200
    try:
        session_id = await stack.new_session()
        stack.server.exchanges.clear()
        await stack.ask(session_id, [image_snippet()])
    finally:
        await stack.http.put("/config", json={k: before[k] for k in changes})
    assert not stack.server.errors, stack.server.errors[0]
    data_uri = "data:image/png;base64," + base64.b64encode(PNG).decode()
    by_role: dict[str, list[dict[str, Any]]] = {}
    for exchange in stack.server.exchanges:
        by_role.setdefault(role_of(exchange.body), []).append(exchange.body)

    def images_of_users(body: dict[str, Any]) -> list[str]:
        return [
            part["image_url"]["url"]
            for m in body["messages"]
            if m["role"] == "user" and isinstance(m.get("content"), list)
            for part in m["content"]
            if part.get("type") == "image_url"
        ]

    coordinator = by_role[COORDINATOR][0]
    assert images_of_users(coordinator) == [data_uri]
    question = next(m for m in coordinator["messages"] if m["role"] == "user")
    assert message_text(question) == QUESTION
    system = message_text(coordinator["messages"][0])
    element = (
        '<image_snippet image="1" title="Fitting Linear Mixed-Effects Models Using lme4" '
        f'page="{PAGE}">{CAPTION}</image_snippet>'
    )
    assert element in system and "key=" not in system
    # The writer of the answer sees it too; the search subagent gets its provenance.
    assert images_of_users(by_role[SYNTHESIZER][0]) == [data_uri]
    assert element in message_text(by_role[SYNTHESIZER][0]["messages"][-1])
    subagent = "".join(message_text(m) for m in by_role[SEARCH_SUBAGENT][0]["messages"])
    assert f'<image_snippet key="{LME4}" image="1"' in subagent
