"""The sessions service over real gRPC: ADK's BaseSessionService implemented remotely,
error statuses, health and the admin port."""

from __future__ import annotations

import pathlib
from collections.abc import AsyncIterator

import grpc
import httpx
import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types
from grpc_health.v1 import health_pb2, health_pb2_grpc
from zocrates.common.v1.session_ref_pb2 import SessionRef
from zocrates.sessions.v1 import sessions_pb2 as pb
from zocrates.sessions.v1 import sessions_pb2_grpc as pb_grpc

from services.sessions.client import SessionsClient
from services.sessions.remote_session_service import RemoteSessionService
from services.sessions.server import SessionsServer
from tests.support import adk_events as ev
from tests.support.scripted_llm import ScriptedLlm
from tests.support.stack import running_sessions

APP, USER = "zocrates", "local"


@pytest.fixture
async def server(tmp_path: pathlib.Path, db_url: str) -> AsyncIterator[SessionsServer]:
    """The sessions service on a real SQLite file and on a real PostgreSQL database (the
    ``db_url`` fixture runs every test on both)."""
    overrides = {} if db_url.startswith("sqlite") else {"database_url": db_url}
    async with running_sessions(tmp_path, **overrides) as server:
        yield server


@pytest.fixture
async def remote(server: SessionsServer) -> AsyncIterator[RemoteSessionService]:
    service = RemoteSessionService(server.runtime.address)
    yield service
    await service.close()


async def test_remote_session_service_round_trip(remote: RemoteSessionService) -> None:
    session = await remote.create_session(app_name=APP, user_id=USER, state={"topic": "lme4"})
    with pytest.raises(AlreadyExistsError):
        await remote.create_session(app_name=APP, user_id=USER, session_id=session.id)
    await remote.append_event(
        session, ev.user_text("first", invocation_id="i1", state_delta={"temp:x": 1, "n": 1})
    )
    await remote.append_event(session, ev.model_text("answer", invocation_id="i1"))
    assert session.state["temp:x"] == 1  # temp state lives in memory for the invocation...
    stored = await remote.get_session(app_name=APP, user_id=USER, session_id=session.id)
    assert stored is not None
    assert "temp:x" not in stored.state and stored.state["n"] == 1  # ...and is never persisted
    assert [e.content.parts[0].text for e in stored.events] == ["first", "answer"]
    recent = await remote.get_session(
        app_name=APP,
        user_id=USER,
        session_id=session.id,
        config=GetSessionConfig(num_recent_events=1),
    )
    assert recent is not None and [e.content.parts[0].text for e in recent.events] == ["answer"]
    listed = await remote.list_sessions(app_name=APP, user_id=USER)
    assert [s.id for s in listed.sessions] == [session.id]
    await remote.delete_session(app_name=APP, user_id=USER, session_id=session.id)
    assert await remote.get_session(app_name=APP, user_id=USER, session_id=session.id) is None


async def test_stale_session_surfaces_as_adk_stale_session_error(
    remote: RemoteSessionService,
) -> None:
    session = await remote.create_session(app_name=APP, user_id=USER)
    a = await remote.get_session(app_name=APP, user_id=USER, session_id=session.id)
    b = await remote.get_session(app_name=APP, user_id=USER, session_id=session.id)
    assert a is not None and b is not None
    await remote.append_event(a, ev.user_text("a wins", invocation_id="a"))
    await remote.append_event(
        a, ev.model_text("a again", invocation_id="a")
    )  # a's copy stays fresh
    with pytest.raises(StaleSessionError):
        await remote.append_event(b, ev.user_text("b loses", invocation_id="b"))
    stored = await remote.get_session(app_name=APP, user_id=USER, session_id=session.id)
    assert stored is not None and [e.content.parts[0].text for e in stored.events] == [
        "a wins",
        "a again",
    ]


async def test_status_codes_and_stable_error_codes(server: SessionsServer) -> None:
    async with grpc.aio.insecure_channel(server.runtime.address) as channel:
        stub = pb_grpc.SessionServiceStub(channel)
        cases = [
            (
                stub.GetSession(
                    pb.GetSessionRequest(
                        ref=SessionRef(app_name=APP, user_id=USER, session_id="missing")
                    )
                ),
                grpc.StatusCode.NOT_FOUND,
                "session_not_found",
            ),
            (
                stub.CreateSession(
                    pb.CreateSessionRequest(app_name=APP, user_id=USER, state_json="[1,2")
                ),
                grpc.StatusCode.INVALID_ARGUMENT,
                "invalid_json",
            ),
            (
                stub.CreateSession(pb.CreateSessionRequest(app_name="", user_id=USER)),
                grpc.StatusCode.INVALID_ARGUMENT,
                "missing_field",
            ),
            (
                stub.GetSession(
                    pb.GetSessionRequest(
                        ref=SessionRef(app_name=APP, user_id=USER, session_id="x"),
                        config_json='{"num_recent_events": -1}',
                    )
                ),
                grpc.StatusCode.INVALID_ARGUMENT,
                "invalid_config",
            ),
            (
                stub.AppendEvent(
                    pb.AppendEventRequest(
                        ref=SessionRef(app_name=APP, user_id=USER, session_id="x"),
                        event_json="{}}",
                    )
                ),
                grpc.StatusCode.INVALID_ARGUMENT,
                "invalid_event",
            ),
        ]
        for call, status, code in cases:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call
            assert err.value.code() is status
            assert dict(err.value.trailing_metadata())["zocrates-error-code"] == code
            assert err.value.details()  # a message a person can act on


async def test_health_and_admin_port(server: SessionsServer) -> None:
    async with grpc.aio.insecure_channel(server.runtime.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for name in ("", "zocrates.sessions.v1.SessionService"):
            reply = await health.Check(health_pb2.HealthCheckRequest(service=name))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        stub = pb_grpc.SessionServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError):
            await stub.GetSession(
                pb.GetSessionRequest(ref=SessionRef(app_name=APP, user_id=USER, session_id="nope"))
            )
    base = f"http://127.0.0.1:{server.runtime.admin.port}"
    async with httpx.AsyncClient() as http:
        assert (await http.get(f"{base}/healthz")).json()["status"] == "ok"
        ready = await http.get(f"{base}/readyz")
        assert ready.status_code == 200 and ready.json()["checks"] == {"database": True}
        metrics = (await http.get(f"{base}/metrics")).text
    assert (
        'zocrates_grpc_server_requests_total{code="NOT_FOUND",method="GetSession",service="sessions"}'
        in metrics
    )
    assert "zocrates_grpc_server_request_duration_seconds_bucket" in metrics


async def test_ui_client_lifecycle(server: SessionsServer, db_url: str) -> None:
    client = SessionsClient(server.runtime.address, app_name=APP, user_id=USER)
    try:
        created = await client.create_chat(title="Optimizers")
        assert created["title"] == "Optimizers" and created["messages"] == []
        renamed = await client.rename(created["id"], title="lmer optimizers")
        assert renamed["title"] == "lmer optimizers"
        assert [m["title"] for m in await client.list_manifests()] == ["lmer optimizers"]
        stats = await client.storage_stats()
        assert stats["session_count"] == 1 and stats["size_bytes"] > 0
        assert stats["backend"] == ("sqlite" if db_url.startswith("sqlite") else "postgresql")
        await client.delete(created["id"])
        assert await client.list_manifests() == []
    finally:
        await client.close()


async def test_an_adk_runner_persists_a_turn_through_the_remote_service(
    server: SessionsServer,
) -> None:
    """What the agent service will do: ADK's Runner over RemoteSessionService."""
    remote = RemoteSessionService(server.runtime.address)
    client = SessionsClient(server.runtime.address, app_name=APP, user_id=USER)
    try:
        chat = await client.create_chat(title="runner")
        agent = LlmAgent(
            name="coordinator",
            model=ScriptedLlm(replies=["lmer uses nloptwrap (BOBYQA) by default."]),
        )
        runner = Runner(app_name=APP, agent=agent, session_service=remote)
        events = [
            e
            async for e in runner.run_async(
                user_id=USER,
                session_id=chat["id"],
                new_message=types.Content(
                    role="user", parts=[types.Part(text="Which optimizer does lmer use?")]
                ),
            )
        ]
        assert any(
            e.content and e.content.parts and "nloptwrap" in (e.content.parts[0].text or "")
            for e in events
        )
        formatted = await client.get_formatted(chat["id"])
        assert [(m["role"], m["text"]) for m in formatted["messages"]] == [
            ("user", "Which optimizer does lmer use?"),
            ("assistant", "lmer uses nloptwrap (BOBYQA) by default."),
        ]
    finally:
        await remote.close()
        await client.close()
