"""The gateway's OpenAPI schema documents every route's body, and the response models that
produce it leave the bodies exactly as the clients build them.

Through real HTTP against a real sessions service; the agent is not running, so the library
and chat routes are checked in the schema only (their bodies: tests/unit/gateway).
"""

from __future__ import annotations

import pathlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from google.adk.events.event import Event
from google.genai import types

from services.common.app_config import config_reference
from services.common.turn_usage import USAGE_KEY
from services.gateway.server import GatewayServer
from services.sessions.store import SessionStore, sqlite_url_for
from tests.support import adk_events as ev
from tests.support.stack import running_gateway, running_sessions

# The streaming routes, and the events each documents.
STREAMS = {
    ("POST", "/chat"): {"message", "request_input", "done", "error"},
    ("POST", "/chat/resume"): {"message", "request_input", "done", "error"},
    ("POST", "/library/sync"): {"progress", "done", "error"},
}
SESSION = {"status", "session"}
MAINTENANCE = {
    "deleted_empty",
    "deleted_expired",
    "deleted_over_cap",
    "deleted",
    "deleted_ids",
    "skipped_active",
    "vacuumed",
    "vacuum_skipped_reason",
    "size_before",
    "size_after",
    "duration_ms",
}
# Every other route: the fields of its success body.
BODIES = {
    ("GET", "/healthz"): {"status"},
    ("POST", "/register"): {
        "status",
        "zotero_data_dir",
        "data_dir",
        "sessions_db",
        "changed",
        "zotero_sqlite_found",
        "maintenance",
    },
    ("GET", "/config"): {"status", "config", "path", "reference"},
    ("PUT", "/config"): {"status", "config"},
    ("GET", "/models/local"): {"status", "api_base", "server", "models"},
    ("POST", "/models/test"): {
        "status",
        "model",
        "reply",
        "seconds",
        "prompt_tokens",
        "completion_tokens",
        "tokens_per_second",
        "context_window",
        "tool_calling",
    },
    ("GET", "/sessions"): {"status", "sessions"},
    ("POST", "/sessions"): SESSION,
    ("GET", "/sessions/storage_stats"): {
        "status",
        "backend",
        "location",
        "size_bytes",
        "page_count",
        "page_size",
        "freelist_count",
        "freelist_ratio",
        "session_count",
        "event_count",
    },
    ("POST", "/sessions/maintenance"): {"status", *MAINTENANCE},
    ("GET", "/sessions/{session_id}"): SESSION,
    ("PATCH", "/sessions/{session_id}"): SESSION,
    ("DELETE", "/sessions/{session_id}"): {"status"},
    ("POST", "/sessions/{session_id}/rewind"): SESSION,
    ("GET", "/sessions/{session_id}/images/{sha256}"): {"status", "image"},
    ("GET", "/library/status"): {
        "status",
        "zotero_data_dir",
        "items",
        "attachments",
        "pages",
        "chunks",
        "passages",
        "last_sync_at",
        "syncing",
        "embedding_model",
        "embedding_dim",
        "index_bytes",
        "keyword_phase",
        "embedding_phase",
        "ocr_phase",
        "attachment_states",
        "problems",
    },
    ("POST", "/library/prioritize"): {"status", "item_keys", "chunks_pending"},
    ("GET", "/library/search"): {"status", "query", "took_ms", "results"},
}


@pytest.fixture
async def gateway(tmp_path: pathlib.Path) -> AsyncIterator[tuple[GatewayServer, httpx.AsyncClient]]:
    async with (
        running_sessions(tmp_path) as sessions,
        running_gateway(tmp_path, sessions.runtime.address) as server,
    ):
        token = (tmp_path / "zocrates-data" / "gateway.token").read_text().strip()
        await server.app.state.gateway.startup_done.wait()
        async with httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as http:
            yield server, http


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


async def test_openapi_documents_every_body_and_every_stream(
    gateway: tuple[GatewayServer, httpx.AsyncClient],
) -> None:
    _, http = gateway
    response = await http.get("/openapi.json")
    assert response.status_code == 200
    spec = response.json()
    schemas = spec["components"]["schemas"]
    assert "HTTPValidationError" not in schemas  # 422 is an ErrorBody like every error
    assert set(_resolve(spec, schemas["ErrorBody"])["properties"]) == {"status", "code", "message"}

    operations = {
        (method.upper(), path): operation
        for path, methods in spec["paths"].items()
        for method, operation in methods.items()
    }
    assert set(operations) == set(BODIES) | set(STREAMS)
    for route, operation in operations.items():
        responses = operation["responses"]
        errors = {status: r for status, r in responses.items() if int(status) >= 400}
        assert {"403", "500"} <= set(errors), route
        for status, error in errors.items():
            ref = error["content"]["application/json"]["schema"]["$ref"]
            assert ref == "#/components/schemas/ErrorBody", (route, status)
        if route in STREAMS:
            stream = responses["200"]["content"]["text/event-stream"]
            assert set(stream["itemSchema"]["properties"]["event"]["enum"]) == STREAMS[route]
            for event in STREAMS[route]:
                assert f"`{event}`" in responses["200"]["description"], (route, event)
            continue
        (success,) = [responses[s] for s in ("200", "201") if s in responses]
        body = _resolve(spec, success["content"]["application/json"]["schema"])
        assert set(body["properties"]) == BODIES[route], route
        assert set(body["required"]) == BODIES[route], route  # no key of a body is optional

    session = _resolve(spec, schemas["FormattedSession"])
    assert set(session["required"]) == {
        "id",
        "title",
        "created_at",
        "updated_at",
        "messages",
        "pending_hitl",
    }
    message = _resolve(spec, schemas["SessionMessage"])
    optional = set(message["properties"]) - set(message["required"])
    assert optional == {"context", "tool_calls", "tool_results", "usage"}
    assert set(_resolve(spec, schemas["MaintenanceReport"])["properties"]) == MAINTENANCE
    assert "ZocratesConfig" in schemas

    docs = await http.get("/docs")
    assert docs.status_code == 200 and "/openapi.json" in docs.text


def _scoped_answer(invocation_id: str) -> list[Event]:
    """A research turn as the agent stores it: a tool call, a scoped step, the synthesizer's
    answer with a thought and a priced usage record, and the research tool's result."""
    call = ev.tool_call("search_library", {"request": "optimizers"}, invocation_id=invocation_id)
    step = ev.model_text(
        "notes", invocation_id=invocation_id, author="search_subagent", isolation_scope="p-1"
    )
    answer = ev.model_text(
        "lmer uses bobyqa [1].",
        invocation_id=invocation_id,
        author="synthesizer",
        thought="compare the two",
        isolation_scope="p-1",
    )
    answer.custom_metadata = {
        USAGE_KEY: {
            "model": "openai/gpt-4o-mini",
            "input_tokens": 1234,
            "output_tokens": 210,
            "cost_usd": 0.0000312,  # json.dumps writes 3.12e-05; the body must keep that
        }
    }
    citation = {"n": 1, "item_key": "ABCD1234", "page": 3, "quote": "bobyqa", "verified": True}
    result = Event(
        author="coordinator",
        invocation_id=invocation_id,
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="call-1",
                        name="search_library",
                        response={"answer": "lmer uses bobyqa [1].", "citations": [citation]},
                    )
                )
            ],
        ),
    )
    return [call, step, answer, result]


async def test_bodies_are_byte_for_byte_what_the_clients_return(
    gateway: tuple[GatewayServer, httpx.AsyncClient],
) -> None:
    server, http = gateway
    state = server.app.state.gateway

    def body_before_models(content: dict[str, Any]) -> bytes:
        # What the routes answered before they declared response models.
        return bytes(JSONResponse(jsonable_encoder(content)).body)

    created = await http.post("/sessions", json={"title": "Optimizers ✓"})
    assert created.status_code == 201
    sid = created.json()["session"]["id"]
    store = SessionStore(sqlite_url_for(pathlib.Path(state.data_dir)))
    await store.open()
    try:
        session = await store.get_session(app_name="zocrates", user_id="local", session_id=sid)
        scope = {"snippets": [{"text": "a quote", "item_key": "ABCD1234", "page": 3}]}
        events = [
            ev.user_text("How does lmer choose?", invocation_id="inv-1", state_delta=scope),
            *_scoped_answer("inv-1"),
            ev.user_text("And brms?", invocation_id="inv-2"),
            ev.request_input(
                "interrupt_ext_1",
                invocation_id="inv-2",
                payload={"covered": ["lme4"], "gaps": ["brms"]},
                message="Extend the search?",
            ),
        ]
        for event in events:
            await store.append_event(session, event)
    finally:
        await store.close()

    got = await http.get(f"/sessions/{sid}")
    formatted = await state.sessions.get_formatted(sid)
    assert got.content == body_before_models({"status": "success", "session": formatted})
    kinds = {key for message in formatted["messages"] for key in message}
    assert {"context", "tool_calls", "tool_results", "usage"} <= kinds
    assert formatted["pending_hitl"] is not None
    assert b"3.12e-05" in got.content

    checks = [
        (
            "GET",
            "/sessions",
            {"status": "success", "sessions": await state.sessions.list_manifests()},
        ),
        (
            "GET",
            "/sessions/storage_stats",
            {"status": "success", **await state.sessions.storage_stats()},
        ),
        ("GET", "/healthz", {"status": "ok"}),
    ]
    for method, path, before in checks:
        response = await http.request(method, path)
        assert response.content == body_before_models(before), path

    config = (await state.load_config()).model_dump()
    reference = [
        {"key": k, "type": t, "default": d, "description": desc}
        for k, t, d, desc in config_reference()
    ]
    assert (await http.get("/config")).content == body_before_models(
        {
            "status": "success",
            "config": config,
            "path": str(state.config_store.path),
            "reference": reference,
        }
    )

    # Every key a body holds is documented, and none is documented that it lacks.
    for method, path, route in [
        ("POST", "/sessions/maintenance", "/sessions/maintenance"),
        ("GET", "/config", "/config"),
        ("PUT", "/config", "/config"),
        ("PATCH", f"/sessions/{sid}", "/sessions/{session_id}"),
        ("DELETE", f"/sessions/{sid}", "/sessions/{session_id}"),
    ]:
        payload = {"title": "renamed"} if method == "PATCH" else {} if method == "PUT" else None
        response = await http.request(method, path, json=payload)
        assert response.status_code == 200, response.text
        assert set(response.json()) == BODIES[(method, route)], path
    registered = await http.post("/register", json={"zotero_data_dir": str(state.data_dir.parent)})
    assert registered.status_code == 200, registered.text
    assert set(registered.json()) == BODIES[("POST", "/register")]
    assert set(registered.json()["maintenance"]) == MAINTENANCE
