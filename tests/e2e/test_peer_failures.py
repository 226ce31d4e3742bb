"""Killing or freezing the sessions process: the gateway answers 503/504 with a code, and a
restarted sessions service restores everything."""

from __future__ import annotations

import os
import pathlib
import signal

import httpx

from services.common import ports
from tests.support.ports import free_base_port
from tests.support.processes import service_process, spawn, stop, wait_checks, wait_http


def test_gateway_survives_the_sessions_service_dying_and_coming_back(
    tmp_path: pathlib.Path,
) -> None:
    base = free_base_port()
    env = {
        "ZOCRATES_ZOTERO_DIR": str(tmp_path),
        "ZOCRATES_PORT": str(base),
        "ZOCRATES_SESSIONS_ADDR": f"127.0.0.1:{ports.service_port(base, 'sessions')}",
        "ZOCRATES_RPC_TIMEOUT_SECONDS": "1.5",
        "ZOCRATES_AGENT_ADDR": "127.0.0.1:9",  # no agent: the session API does not need it
        "ZOCRATES_LIBRARY_ADDR": "127.0.0.1:9",
    }
    sessions_ready = f"http://127.0.0.1:{ports.admin_port(base, 'sessions')}/readyz"
    gateway_ready = f"http://127.0.0.1:{ports.admin_port(base, 'gateway')}/readyz"
    log = tmp_path / "services.log"
    sessions = spawn("services.sessions", env, log=log)
    try:
        wait_http(sessions_ready, proc=sessions)
        with service_process("services.gateway", env, log=log):
            wait_checks(gateway_ready, sessions=True, startup_maintenance=True)
            token = (tmp_path / "zocrates-data" / "gateway.token").read_text().strip()
            api = httpx.Client(
                base_url=f"http://127.0.0.1:{base}",
                headers={"Authorization": f"Bearer {token}"},
                timeout=10,
            )
            created = api.post("/sessions", json={"title": "survives"}).json()["session"]

            # Frozen peer: the call hits its deadline -> 504.
            sessions.send_signal(signal.SIGSTOP)
            try:
                frozen = api.get("/sessions")
                assert frozen.status_code == 504, frozen.text
                assert frozen.json()["code"] == "sessions_timeout"
            finally:
                sessions.send_signal(signal.SIGCONT)
            assert api.get("/sessions").status_code == 200

            # Dead peer: 503 with a code naming it, and the gateway reports not ready.
            os.kill(sessions.pid, signal.SIGKILL)
            sessions.wait(timeout=10)
            down = api.get("/sessions")
            assert down.status_code == 503, down.text
            assert down.json()["code"] == "sessions_unavailable"
            assert "sessions service" in down.json()["message"]
            assert wait_checks(gateway_ready, timeout=5, sessions=False)
            assert api.get("/healthz").status_code == 200  # the gateway itself is alive

            # Restart: service and data come back without restarting the gateway.
            sessions = spawn("services.sessions", env, log=log)
            wait_http(sessions_ready, proc=sessions)
            wait_checks(gateway_ready, timeout=30, sessions=True)
            listed = api.get("/sessions")
            assert listed.status_code == 200
            assert [s["id"] for s in listed.json()["sessions"]] == [created["id"]]
            api.close()
    finally:
        stop(sessions)
