"""deploy/compose.yaml really starts: images built with Podman from Debian packages and PyPI
(scripts/podman_images.sh, no registry), `podman-compose up -d` on a real Zotero-shaped library,
every container's own healthcheck passes, the library is indexed and one research turn gets a
cited answer through the gateway's loopback port with the bearer token, its spans reach
Phoenix, and `podman-compose down -v` leaves nothing behind.

Needs root, podman, podman-compose, runc and debootstrap (apt-get install podman podman-compose
runc debootstrap). Cold (nothing built) the image builds take most of the time; with the images
in Podman's storage the builds are cache hits.
"""

from __future__ import annotations

import json
import pathlib
import secrets
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support import zotero_fixture as zf
from tests.support.processes import ROOT
from tests.support.sse import post_stream_sync

FILES = ("lme4__lmer.pdf", "brms__brms_multilevel.pdf", "sandwich__sandwich-CL.pdf")
QUESTION = "How does lmer choose its optimizer, and how does brms fit the same kind of model?"
IMAGES_SCRIPT = ROOT / "scripts" / "podman_images.sh"
HEALTH_DEADLINE_S = 300  # the reranker's start period is 120 s; the rest start in seconds
NEEDED = "apt-get install podman podman-compose runc debootstrap"


def _tools() -> tuple[str, str]:
    podman, compose = shutil.which("podman"), shutil.which("podman-compose")
    assert podman and compose, f"podman and podman-compose are needed for this test: {NEEDED}"
    return podman, compose


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(args: list[str], *, timeout: float, cwd: pathlib.Path = ROOT) -> str:
    result = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, (
        f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout[-3000:]}\n"
        f"{result.stderr[-3000:]}"
    )
    return result.stdout


@pytest.fixture(scope="module")
def image_env() -> dict[str, str]:
    """Builds (or finds in the cache) every image; returns the *_IMAGE variables."""
    _tools()
    started = time.monotonic()
    out = _run(["bash", str(IMAGES_SCRIPT)], timeout=1800)
    print(f"images built or found in {time.monotonic() - started:.0f} s")
    env = {}
    for line in out.splitlines():
        if line.startswith("export ") and "=" in line:
            name, _, value = line.removeprefix("export ").partition("=")
            env[name] = value
    assert {"ZOCRATES_IMAGE", "REDIS_IMAGE", "POSTGRES_IMAGE", "PHOENIX_IMAGE"} <= set(env), out
    return env


class Stack:
    """One compose project in a folder of its own: compose.yaml, .env and the env files."""

    def __init__(self, folder: pathlib.Path, image_env: dict[str, str]) -> None:
        self.podman, self.compose = _tools()
        self.folder = folder
        self.project = f"zocrates-e2e-{uuid.uuid4().hex[:8]}"
        self.runtime = image_env.get("PODMAN_RUNTIME", "")
        self.gateway_port, self.phoenix_port = _free_port(), _free_port()
        self.token = secrets.token_hex(16)
        self.zotero_dir = zf.build_zotero_library(folder / "Zotero", files=FILES)
        (self.zotero_dir / "zocrates-data").mkdir()  # the read-only bind's inner mount point
        shutil.copy(ROOT / "deploy" / "compose.yaml", folder / "compose.yaml")
        images = {k: v for k, v in image_env.items() if k.endswith("_IMAGE")}
        dotenv = {
            "ZOTERO_DIR": str(self.zotero_dir),
            "POSTGRES_PASSWORD": secrets.token_hex(12),
            "GATEWAY_PORT": str(self.gateway_port),
            "PHOENIX_PORT": str(self.phoenix_port),
            **images,
        }
        (folder / ".env").write_text("".join(f"{k}={v}\n" for k, v in dotenv.items()))
        (folder / "gateway.env").write_text(f"ZOCRATES_GATEWAY_TOKEN={self.token}\n")
        # No key in models.env: the built-in offline model answers.
        shutil.copy(ROOT / "deploy" / "models.env.example", folder / "models.env")

    def compose_cmd(self, *args: str) -> list[str]:
        runtime = [f"--podman-args=--runtime {self.runtime}"] if self.runtime else []
        return [self.compose, *runtime, "-p", self.project, "-f", "compose.yaml", *args]

    def containers(self) -> dict[str, dict[str, Any]]:
        """compose service -> `podman ps` entry, for this project's containers."""
        out = _run(
            [
                self.podman,
                "ps",
                "-a",
                "--filter",
                f"label=com.docker.compose.project={self.project}",
                "--format",
                "json",
            ],
            timeout=60,
        )
        return {c["Labels"]["com.docker.compose.service"]: c for c in json.loads(out or "[]")}

    def logs(self) -> str:
        parts = []
        for service, container in self.containers().items():
            name = container["Names"][0]
            tail = subprocess.run(
                [self.podman, "logs", "--tail", "25", name],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            parts.append(f"--- {service} ({container['State']})\n{tail.stdout}{tail.stderr}")
        return "\n".join(parts)

    def wait_healthy(self) -> set[str]:
        """Runs each container's own compose healthcheck until it passes (podman without
        systemd runs none by itself, and podman-compose 1.0 does not wait for them)."""
        pending = {s for s, c in self.containers().items() if s != "phoenix"}
        deadline = time.monotonic() + HEALTH_DEADLINE_S
        healthy: set[str] = set()
        while pending - healthy:
            assert time.monotonic() < deadline, (
                f"not healthy within {HEALTH_DEADLINE_S} s: {sorted(pending - healthy)}\n"
                + self.logs()
            )
            for service, container in self.containers().items():
                if service in healthy or service == "phoenix":
                    continue
                assert container["State"] == "running", (
                    f"{service} is {container['State']}\n" + self.logs()
                )
                check = subprocess.run(
                    [self.podman, "healthcheck", "run", container["Names"][0]],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=False,
                )
                if check.returncode == 0:
                    healthy.add(service)
            time.sleep(2)
        return healthy

    def down(self) -> None:
        subprocess.run(
            self.compose_cmd("down", "-v"),
            cwd=self.folder,
            capture_output=True,
            timeout=300,
            check=False,
        )
        # podman-compose 1.0 leaves the project's network behind.
        subprocess.run(
            [self.podman, "network", "rm", "-f", f"{self.project}_default"],
            capture_output=True,
            timeout=60,
            check=False,
        )


@pytest.fixture
def stack(tmp_path: pathlib.Path, image_env: dict[str, str]) -> Iterator[Stack]:
    stack = Stack(tmp_path, image_env)
    try:
        started = time.monotonic()
        _run(stack.compose_cmd("up", "-d"), cwd=tmp_path, timeout=600)
        print(f"`podman-compose up -d` returned in {time.monotonic() - started:.0f} s")
        yield stack
    finally:
        stack.down()


def _phoenix_span_names(port: int) -> set[str]:
    response = httpx.get(f"http://127.0.0.1:{port}/v1/projects/default/spans?limit=200", timeout=10)
    if response.status_code != 200:
        return set()
    return {span["name"] for span in response.json()["data"]}


@pytest.mark.timeout(2400)
def test_compose_stack_indexes_and_answers_with_citations(stack: Stack) -> None:
    started = time.monotonic()
    healthy = stack.wait_healthy()
    assert healthy == {
        "redis",
        "postgres",
        "reranker",
        "sessions",
        "library",
        "agent",
        "compactor",
        "gateway",
    }
    print(f"stack healthy {time.monotonic() - started:.0f} s after `up -d` returned")

    # Published: the gateway and Phoenix's UI, both on loopback only.
    containers = stack.containers()
    published = {
        service: {(p["host_ip"], p["host_port"], p["container_port"]) for p in c["Ports"] or []}
        for service, c in containers.items()
        if c["Ports"]
    }
    assert published == {
        "gateway": {("127.0.0.1", stack.gateway_port, 8765)},
        "phoenix": {("127.0.0.1", stack.phoenix_port, 6006)},
    }

    url = f"http://127.0.0.1:{stack.gateway_port}"
    anonymous = httpx.get(f"{url}/sessions", timeout=30)
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "unauthorized"
    headers = {"Authorization": f"Bearer {stack.token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=900) as api:
        status, events, refusal = post_stream_sync(api, "/library/sync", {"follow_embedding": True})
        assert status == 200, refusal
        kind, done = events[-1]
        assert kind == "done", events[-3:]
        assert done["added"] == len(FILES) and done["failed"] == 0, done
        assert done["embedding"]["chunks_pending"] == 0, done

        session_id = api.post("/sessions", json={"title": "compose"}).json()["session"]["id"]
        status, events, refusal = post_stream_sync(
            api, "/chat", {"session_id": session_id, "prompt": QUESTION}
        )
        assert status == 200, refusal
        kinds = [k for k, _ in events]
        assert kinds[-1] == "done" and "error" not in kinds, kinds
        done = events[-1][1]
        assert done["status"] == "completed", done
        assert "# Cited Sources" in done["answer"]
        cited = {c["item_key"] for c in done["citations"]}
        assert zf.paper_item_key("lme4__lmer.pdf") in cited, cited
        assert zf.paper_item_key("brms__brms_multilevel.pdf") in cited, cited
        # The turn is stored in PostgreSQL through the sessions service.
        stored = api.get(f"/sessions/{session_id}").json()["session"]
        assert stored["id"] == session_id

    # The services' OTLP/gRPC exporters reach Phoenix over the compose network; the spans
    # are read back through Phoenix's published port (the batch exporter sends every 5 s).
    deadline = time.monotonic() + 60
    names = _phoenix_span_names(stack.phoenix_port)
    while "agent/Chat" not in names and time.monotonic() < deadline:
        time.sleep(2)
        names = _phoenix_span_names(stack.phoenix_port)
    assert "agent/Chat" in names, sorted(names)
    print(f"indexed and answered {time.monotonic() - started:.0f} s after `up -d` returned")


def test_podman_images_script_has_help() -> None:
    result = subprocess.run(
        ["bash", str(IMAGES_SCRIPT), "--help"], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0
    for word in ("debootstrap", "zocrates", "redis", "postgres", "phoenix", "PODMAN_RUNTIME"):
        assert word in result.stdout
    bad = subprocess.run(
        ["bash", str(IMAGES_SCRIPT), "nginx"], capture_output=True, text=True, timeout=30
    )
    assert bad.returncode == 2 and "unknown argument" in bad.stderr
