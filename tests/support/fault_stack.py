"""The product's five service processes, as `zocrates run` starts them, and a private Redis,
each started and SIGKILLed on its own: the stack of the fault tests (``tests/e2e/test_faults*``).

Redis is a ``redis-server`` of the stack's own (no persistence), so killing it harms nobody
else; the chat lock's keys carry a prefix of the stack's own.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence

import httpx

from services.common import ports
from services.gateway.locks.redis_chat_lock import RedisChatLock
from services.stack.cli import stack_specs
from tests.support import zotero_fixture as zf
from tests.support.load import model_config
from tests.support.ports import free_base_port
from tests.support.processes import spawn, stop, wait_checks, wait_http
from tests.support.sse import post_stream_sync

START_ORDER = ("redis", "reranker", "sessions", "library", "agent", "compactor", "gateway")
# An embedder that is quick on two shared cores (the fault tests need the embedding phase to
# finish, not good vectors) and a cross-encoder that reads less of each passage.
FAST_MODELS = {
    "ZOCRATES_EMBEDDING_MODEL": "minilm",
    "ZOCRATES_EMBEDDING_MAX_SEQ_LENGTH": "32",
    "ZOCRATES_RERANK_MAX_SEQ_LENGTH": "128",
}


class FaultStack:
    """``files`` (papers of ``tests/support/zotero_fixture``) make the Zotero library, those in
    ``trashed`` start in its trash; ``env`` goes to every service, ``service_env[name]`` to one
    (after the peer addresses `zocrates run` gives it, so it can point a peer elsewhere)."""

    def __init__(
        self,
        root: pathlib.Path,
        *,
        files: Sequence[str] = (),
        trashed: Sequence[str] = (),
        lock_ttl_seconds: float = 6.0,
        env: Mapping[str, str] | None = None,
        service_env: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.root = root
        self.files, self.trashed = tuple(files), tuple(trashed)
        self.zotero = root / "zotero"
        zf.build_zotero_library(self.zotero, files=files, trashed=trashed)
        self.base = free_base_port()
        self.redis_port = free_port()
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.prefix = f"faults-{uuid.uuid4().hex[:8]}"
        self.log = root / "services.log"
        self.env = {
            "ZOCRATES_ZOTERO_DIR": str(self.zotero),
            "ZOCRATES_PORT": str(self.base),
            "ZOCRATES_REDIS_URL": self.redis_url,
            "ZOCRATES_REDIS_KEY_PREFIX": self.prefix,
            "ZOCRATES_CHAT_LOCK_TTL_SECONDS": str(lock_ttl_seconds),
            "ZOCRATES_RPC_TIMEOUT_SECONDS": "5",
            "ZOCRATES_MODEL_API_KEY": "sk-faults-test",
            "ZOCRATES_LOG_LEVEL": "INFO",
            **(env or {}),
        }
        self.service_env = {k: dict(v) for k, v in (service_env or {}).items()}
        self.specs = {s.name: s for s in stack_specs(base_port=self.base, host="127.0.0.1")}
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.gateway_ready = self.specs["gateway"].ready_url

    @property
    def sessions_db(self) -> pathlib.Path:
        return self.zotero / "zocrates-data" / "sessions.db"

    def address(self, name: str) -> str:
        """host:port of a service's gRPC server."""
        return f"127.0.0.1:{ports.service_port(self.base, name)}"

    def start(self, name: str) -> None:
        if name == "redis":
            with self.log.open("ab") as sink:
                self.procs[name] = subprocess.Popen(
                    ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1",
                     "--save", "", "--appendonly", "no"],
                    stdout=sink, stderr=subprocess.STDOUT,
                )  # fmt: skip
            deadline = time.monotonic() + 10
            while not redis_up(self.redis_url):
                assert time.monotonic() < deadline, "the private Redis did not start"
                time.sleep(0.1)
            return
        spec = self.specs[name]
        env = {**self.env, **spec.env, **self.service_env.get(name, {})}
        self.procs[name] = spawn(spec.module, env, log=self.log)
        wait_http(spec.ready_url, proc=self.procs[name], timeout=120)

    def start_all(self) -> None:
        for name in START_ORDER:
            self.start(name)
        wait_checks(self.gateway_ready, timeout=60, startup_maintenance=True, compactor=True)

    def start_indexed(self, model_api_base: str) -> httpx.Client:
        """Every service started, the remote model at ``model_api_base`` configured and the
        library synced to its end (embeddings included); the gateway's client, to close."""
        self.start_all()
        api = self.api()
        assert api.put("/config", json=model_config(model_api_base)).status_code == 200
        status, events, refusal = post_stream_sync(api, "/library/sync", {"follow_embedding": True})
        assert status == 200 and events[-1][0] == "done", (refusal, events[-1:])
        in_library = [f for f in self.files if f not in self.trashed]
        assert events[-1][1]["added"] == len(in_library), (events[-1], in_library)
        return api

    def kill(self, name: str) -> None:
        """SIGKILL: no clean-up of any kind."""
        proc = self.procs.pop(name)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def stop_all(self) -> None:
        for name in reversed(list(self.procs)):
            stop(self.procs.pop(name))

    def api(self) -> httpx.Client:
        token = (self.zotero / "zocrates-data" / "gateway.token").read_text().strip()
        return httpx.Client(
            base_url=f"http://127.0.0.1:{self.base}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )

    def locked(self) -> set[str]:
        """The sessions whose chat lock is held in Redis now."""

        async def read() -> set[str]:
            lock = RedisChatLock(self.redis_url, key_prefix=self.prefix)
            try:
                return await lock.locked_session_ids()
            finally:
                await lock.close()

        return asyncio.run(read())

    def wait_unlocked(self, session_id: str, *, within: float) -> float:
        """Seconds until the session's chat lock is gone; fails after ``within``."""
        started = time.monotonic()
        while session_id in self.locked():
            assert time.monotonic() - started < within, "the chat lock outlived its TTL"
            time.sleep(0.1)
        return time.monotonic() - started

    def log_tail(self, chars: int = 6000) -> str:
        return self.log.read_text(errors="replace")[-chars:]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_up(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_timeout=0.5).ping())
    except redis.RedisError:
        return False
