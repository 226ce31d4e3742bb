"""The gateway's session REST contract through real HTTP, against a real sessions service."""

from __future__ import annotations

import json
import pathlib
import stat
import time
import uuid
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

from services.common.app_config import ZocratesConfig
from services.gateway.locks.redis_chat_lock import RedisChatLock
from services.gateway.server import GatewayServer
from services.sessions.store import SessionStore, sqlite_url_for
from tests.support import adk_events as ev
from tests.support.stack import running_gateway, running_sessions
from tests.support.tcp_relay import TcpRelay


class Api:
    def __init__(self, gateway: GatewayServer, token: str) -> None:
        self.gateway = gateway
        self.http = httpx.AsyncClient(
            base_url=gateway.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )

    @property
    def state(self):  # type: ignore[no-untyped-def]
        return self.gateway.app.state.gateway


@pytest.fixture
async def api(tmp_path: pathlib.Path) -> AsyncIterator[Api]:
    async with (
        running_sessions(tmp_path) as sessions,
        running_gateway(tmp_path, sessions.runtime.address) as gateway,
    ):
        token = (tmp_path / "zocrates-data" / "gateway.token").read_text().strip()
        client = Api(gateway, token)
        await client.state.startup_done.wait()
        yield client
        await client.http.aclose()


def _ok(response: httpx.Response, status: int = 200) -> dict:  # type: ignore[type-arg]
    assert response.status_code == status, response.text
    body = response.json()
    assert body["status"] == "success"
    return body


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["status"] == "error" and body["code"] == code, body
    assert len(body["message"]) > 10
    return str(body["message"])


async def test_every_route_but_healthz_requires_the_token(api: Api) -> None:
    anonymous = httpx.AsyncClient(base_url=api.gateway.url)
    wrong = httpx.AsyncClient(
        base_url=api.gateway.url, headers={"Authorization": "Bearer not-the-token"}
    )
    try:
        assert (await anonymous.get("/healthz")).json() == {"status": "ok"}
        schema = api.gateway.app.openapi()
        routes = [
            (method.upper(), path.replace("{session_id}", "abc"))
            for path, operations in schema["paths"].items()
            for method in operations
            if path != "/healthz"
        ] + [("GET", "/openapi.json"), ("GET", "/docs")]
        assert len(routes) >= 12  # sessions CRUD, stats, maintenance, register, config, docs...
        for client in (anonymous, wrong):
            for method, path in [*routes, ("GET", "/no-such-route")]:
                response = await client.request(method, path)
                message = _error(response, 401, "unauthorized")
                assert "gateway.token" in message
                assert response.headers["www-authenticate"] == "Bearer"
        token_file = pathlib.Path(api.state.data_dir) / "gateway.token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    finally:
        await anonymous.aclose()
        await wrong.aclose()


async def test_non_loopback_host_header_is_refused(api: Api) -> None:
    evil = await api.http.get("/sessions", headers={"Host": "attacker.example:8765"})
    _error(evil, 403, "host_not_allowed")
    _ok(await api.http.get("/sessions", headers={"Host": f"localhost:{api.gateway.port}"}))
    preflight = await api.http.options(
        "/sessions",
        headers={"Origin": "https://attacker.example", "Access-Control-Request-Method": "GET"},
    )
    assert "access-control-allow-origin" not in preflight.headers


async def test_session_lifecycle(api: Api) -> None:
    first = _ok(await api.http.post("/sessions", json={"title": "Optimizers"}), 201)["session"]
    assert (
        first["title"] == "Optimizers" and first["messages"] == [] and first["pending_hitl"] is None
    )
    second = _ok(await api.http.post("/sessions"), 201)["session"]
    assert second["title"] == "New Chat"

    listed = _ok(await api.http.get("/sessions"))["sessions"]
    assert [s["id"] for s in listed] == [first["id"], second["id"]]
    assert set(listed[0]) >= {"id", "title", "created_at", "updated_at"}

    got = _ok(await api.http.get(f"/sessions/{first['id']}"))["session"]
    assert got["id"] == first["id"]

    renamed = _ok(await api.http.patch(f"/sessions/{first['id']}", json={"title": "lmer vs brms"}))[
        "session"
    ]
    assert renamed["title"] == "lmer vs brms"
    assert _ok(await api.http.get("/sessions"))["sessions"][0]["title"] == "lmer vs brms"

    assert _ok(await api.http.delete(f"/sessions/{first['id']}")) == {"status": "success"}
    _error(await api.http.get(f"/sessions/{first['id']}"), 404, "session_not_found")
    _error(await api.http.delete(f"/sessions/{first['id']}"), 404, "session_not_found")
    _error(
        await api.http.patch(f"/sessions/{first['id']}", json={"title": "x"}),
        404,
        "session_not_found",
    )
    assert [s["id"] for s in _ok(await api.http.get("/sessions"))["sessions"]] == [second["id"]]


async def test_bad_input_gets_a_clear_error_and_changes_nothing(api: Api) -> None:
    session = _ok(await api.http.post("/sessions", json={"title": "keep me"}), 201)["session"]
    sid = session["id"]
    bad = [
        api.http.patch(f"/sessions/{sid}", json={"title": ""}),
        api.http.patch(f"/sessions/{sid}", json={"title": "t" * 201}),
        api.http.patch(f"/sessions/{sid}", json={"name": "wrong field"}),
        api.http.patch(
            f"/sessions/{sid}", content=b"{not json", headers={"Content-Type": "application/json"}
        ),
        api.http.post("/sessions", json={"title": "ok", "extra": 1}),
        api.http.post("/sessions", json={"title": 5}),
        api.http.get("/sessions/bad id!"),
        api.http.get("/sessions/" + "a" * 200),
    ]
    for request in bad:
        _error(await request, 422, "invalid_request")
    sessions = _ok(await api.http.get("/sessions"))["sessions"]
    assert [(s["id"], s["title"]) for s in sessions] == [(sid, "keep me")]


async def test_storage_stats_and_maintenance_shapes(api: Api) -> None:
    _ok(await api.http.post("/sessions", json={"title": "a"}), 201)
    stats = _ok(await api.http.get("/sessions/storage_stats"))
    assert stats["backend"] == "sqlite"
    assert stats["location"].endswith("zocrates-data/sessions.db")
    assert stats["session_count"] == 1 and stats["size_bytes"] > 0 and stats["page_count"] > 0
    assert 0.0 <= stats["freelist_ratio"] <= 1.0
    report = _ok(await api.http.post("/sessions/maintenance"))
    assert report["deleted"] == 0 and report["vacuumed"] is False
    assert report["vacuum_skipped_reason"] == "below_threshold"
    assert {
        "deleted_empty",
        "deleted_expired",
        "deleted_over_cap",
        "size_before",
        "size_after",
        "duration_ms",
    } <= set(report)


async def test_in_flight_sessions_cannot_be_deleted_and_are_immune_to_maintenance(api: Api) -> None:
    busy = _ok(await api.http.post("/sessions", json={"title": "streaming"}), 201)["session"]["id"]
    idle = _ok(await api.http.post("/sessions", json={"title": "idle"}), 201)["session"]["id"]
    await _add_turns(api, idle, busy)  # non-empty, so only the cap can prune them
    await _ok_config(api, {"max_saved_sessions": 1})
    async with api.state.chat_lock.hold(busy):
        _error(await api.http.delete(f"/sessions/{busy}"), 409, "session_busy")
        report = _ok(await api.http.post("/sessions/maintenance"))
        assert report["deleted_ids"] == [idle]
        assert report["vacuum_skipped_reason"] == "chat_in_progress"
    assert [s["id"] for s in _ok(await api.http.get("/sessions"))["sessions"]] == [busy]
    _ok(await api.http.delete(f"/sessions/{busy}"))  # free again once the chat ended


async def _add_turns(api: Api, *session_ids: str) -> None:
    """Write a user turn into each session, as the agent will (same sessions.db)."""
    store = SessionStore(sqlite_url_for(pathlib.Path(api.state.data_dir)))
    await store.open()
    try:
        for sid in session_ids:
            session = await store.get_session(app_name="zocrates", user_id="local", session_id=sid)
            await store.append_event(
                session, ev.user_text("a question", invocation_id=f"inv-{sid}")
            )
    finally:
        await store.close()


async def _ok_config(api: Api, changes: dict) -> dict:  # type: ignore[type-arg]
    return _ok(await api.http.put("/config", json=changes))["config"]


async def test_config_is_validated_before_it_is_written(api: Api) -> None:
    body = _ok(await api.http.get("/config"))
    assert body["config"] == ZocratesConfig().model_dump()
    assert body["config"]["session_retention_days"] == 180
    assert body["config"]["max_saved_sessions"] == 100
    assert {r["key"] for r in body["reference"]} == set(body["config"])
    path = pathlib.Path(body["path"])
    assert json.loads(path.read_text()) == body["config"]  # back-filled on first start
    before = path.read_bytes()
    _error(await api.http.put("/config", json={"max_saved_sessions": -3}), 400, "invalid_config")
    _error(
        await api.http.put("/config", json={"max_saved_sessions": "many"}), 400, "invalid_config"
    )
    message = _error(await api.http.put("/config", json={"retention": 3}), 400, "unknown_setting")
    assert "session_retention_days" in message
    assert path.read_bytes() == before
    assert await _ok_config(api, {"session_retention_days": 0, "max_saved_sessions": None}) == {
        **ZocratesConfig().model_dump(),
        "session_retention_days": 0,
        "max_saved_sessions": None,
    }
    assert json.loads(path.read_text())["session_retention_days"] == 0


async def test_register_moves_the_stack_to_another_zotero_directory(
    api: Api, tmp_path: pathlib.Path
) -> None:
    _ok(await api.http.post("/sessions", json={"title": "in the first library"}), 201)
    _error(
        await api.http.post("/register", json={"zotero_data_dir": str(tmp_path / "missing")}),
        400,
        "invalid_data_dir",
    )
    _error(
        await api.http.post("/register", json={"zotero_data_dir": "relative/dir"}),
        400,
        "invalid_data_dir",
    )
    _error(await api.http.post("/register", json={}), 422, "invalid_request")

    other = tmp_path / "Zotero2"
    other.mkdir()
    (other / "zotero.sqlite").write_bytes(b"")
    body = _ok(await api.http.post("/register", json={"zotero_data_dir": str(other)}))
    assert body["changed"] is True and body["zotero_sqlite_found"] is True
    assert body["sessions_db"] == str(other / "zocrates-data" / "sessions.db")
    assert body["maintenance"]["deleted"] == 0
    token_file = other / "zocrates-data" / "gateway.token"
    assert token_file.read_text().strip() == api.http.headers["Authorization"].split()[1]
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert (other / "zocrates-data" / "zocrates_config.json").exists()
    assert _ok(await api.http.get("/sessions"))["sessions"] == []

    again = _ok(await api.http.post("/register", json={"zotero_data_dir": str(other)}))
    assert again["changed"] is False
    # Back to the first directory: a Zotero data directory too (only the one the gateway runs
    # on may lack zotero.sqlite).
    (tmp_path / "zotero.sqlite").write_bytes(b"")
    back = _ok(await api.http.post("/register", json={"zotero_data_dir": str(tmp_path)}))
    assert back["changed"] is True
    assert [s["title"] for s in _ok(await api.http.get("/sessions"))["sessions"]] == [
        "in the first library"
    ]


async def test_register_runs_startup_maintenance_with_the_policy(api: Api) -> None:
    old = _ok(await api.http.post("/sessions", json={"title": "old and empty"}), 201)["session"][
        "id"
    ]
    # Age the session in storage as if it had been created two days ago.
    store = SessionStore(sqlite_url_for(pathlib.Path(api.state.data_dir)))
    await store.open()
    try:
        await ev.set_update_time(store, old, time.time() - 2 * 86400)
    finally:
        await store.close()
    zotero_dir = pathlib.Path(api.state.data_dir).parent
    body = _ok(await api.http.post("/register", json={"zotero_data_dir": str(zotero_dir)}))
    assert body["maintenance"]["deleted_empty"] == 1 and body["maintenance"]["deleted_ids"] == [old]


async def test_admin_port_reports_readiness_and_http_metrics(api: Api) -> None:
    await api.http.get("/sessions")
    await api.http.get("/sessions/nope")
    admin = f"http://127.0.0.1:{api.gateway.admin.port}"
    async with httpx.AsyncClient() as http:
        ready = await http.get(f"{admin}/readyz")
        # No agent and no library run in these tests: the gateway says so and is not ready.
        assert ready.status_code == 503
        assert ready.json()["checks"] == {
            "sessions": True,
            "agent": False,
            "library": False,
            "chat_lock": True,
            "startup_maintenance": True,
        }
        metrics = (await http.get(f"{admin}/metrics")).text
    assert (
        'zocrates_http_requests_total{method="GET",route="/sessions/{session_id}",status="404"}'
        in metrics
    )
    assert 'zocrates_http_requests_total{method="GET",route="/sessions",status="200"}' in metrics


async def test_redis_lock_is_shared_between_gateway_replicas(
    tmp_path: pathlib.Path, redis_url: str
) -> None:
    prefix = f"zocrates-test-{uuid.uuid4().hex}"
    async with (
        running_sessions(tmp_path) as sessions,
        running_gateway(
            tmp_path, sessions.runtime.address, redis_url=redis_url, redis_key_prefix=prefix
        ) as gateway,
    ):
        token = (tmp_path / "zocrates-data" / "gateway.token").read_text().strip()
        api = Api(gateway, token)
        other_replica = RedisChatLock(redis_url, key_prefix=prefix)
        try:
            sid = _ok(await api.http.post("/sessions", json={"title": "busy elsewhere"}), 201)[
                "session"
            ]["id"]
            async with other_replica.hold(sid):
                _error(await api.http.delete(f"/sessions/{sid}"), 409, "session_busy")
                report = _ok(await api.http.post("/sessions/maintenance"))
                assert report["vacuum_skipped_reason"] == "chat_in_progress"
            _ok(await api.http.delete(f"/sessions/{sid}"))
        finally:
            await other_replica.close()
            await api.http.aclose()


async def test_readiness_follows_the_redis_lock_store(
    tmp_path: pathlib.Path, redis_url: str
) -> None:
    """The chat lock's ping is what /readyz reports: true while Redis answers, false once the
    gateway can no longer reach it (other checks unchanged), true again when it is back."""
    target = urlsplit(redis_url)
    relay = TcpRelay(target.hostname or "127.0.0.1", target.port or 6379)
    port = await relay.start()
    credentials = target.netloc.rpartition("@")[0]
    fast = "socket_connect_timeout=0.5&socket_timeout=0.5"
    netloc = f"{credentials}@127.0.0.1:{port}" if credentials else f"127.0.0.1:{port}"
    query = f"{target.query}&{fast}" if target.query else fast
    via_relay = urlunsplit(target._replace(netloc=netloc, query=query))
    prefix = f"zocrates-test-{uuid.uuid4().hex}"
    async with (
        running_sessions(tmp_path) as sessions,
        running_gateway(
            tmp_path, sessions.runtime.address, redis_url=via_relay, redis_key_prefix=prefix
        ) as gateway,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{gateway.admin.port}") as admin,
    ):
        await gateway.app.state.gateway.startup_done.wait()

        async def checks() -> dict[str, bool]:
            ready = await admin.get("/readyz")
            assert ready.status_code == 503  # no agent runs in these tests
            return dict(ready.json()["checks"])

        up = await checks()
        assert up["chat_lock"] is True and up["sessions"] is True
        await relay.cut()
        assert await checks() == {**up, "chat_lock": False}
        await relay.start()
        assert await checks() == up
