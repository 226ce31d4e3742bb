"""Real service processes for end-to-end tests."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from typing import Any

import httpx

ROOT = pathlib.Path(__file__).resolve().parents[2]


def wait_http(
    url: str, *, timeout: float = 60.0, proc: subprocess.Popen[bytes] | None = None
) -> httpx.Response:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} while waiting for {url}")
        try:
            response = httpx.get(url, timeout=1.0)
            if response.status_code == 200:
                return response
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.1)
    raise TimeoutError(f"{url} not ready after {timeout} s ({last})")


def wait_checks(url: str, *, timeout: float = 60.0, **expected: bool) -> dict[str, bool]:
    """Poll an admin /readyz until its ``checks`` include ``expected`` (whatever the others)."""
    deadline = time.monotonic() + timeout
    checks: dict[str, bool] = {}
    while time.monotonic() < deadline:
        try:
            checks = httpx.get(url, timeout=1.0).json().get("checks", {})
            if all(checks.get(k) is v for k, v in expected.items()):
                return checks
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{url}: checks {checks} never matched {expected}")


def spawn(module: str, env: dict[str, str], *, log: pathlib.Path) -> subprocess.Popen[bytes]:
    """Start ``python -m <module>`` with ``env`` on top of ours, output appended to ``log``."""
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", module],
            env={**os.environ, **env, "PYTHONUNBUFFERED": "1"},
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )


@contextlib.contextmanager
def service_process(
    module: str, env: dict[str, str], *, log: pathlib.Path
) -> Iterator[subprocess.Popen[bytes]]:
    """:func:`spawn`, stopped (SIGTERM, then SIGKILL) when the block ends."""
    proc = spawn(module, env, log=log)
    try:
        yield proc
    finally:
        stop(proc)


ZOCRATES = pathlib.Path(sys.executable).parent / "zocrates"


@contextlib.contextmanager
def zocrates_run(
    env: dict[str, str], *, log: pathlib.Path, timeout: float = 180.0
) -> Iterator[subprocess.Popen[bytes]]:
    """`zocrates run` as a user starts it (``env`` on top of ours), once it says it is
    running; stopped with Ctrl-C to its process group (every service flushes its spans and
    closes its database on the way out) when the block ends."""
    with log.open("wb") as sink:
        stack = subprocess.Popen(
            [str(ZOCRATES), "run"], cwd=ROOT, env={**os.environ, **env}, stdout=sink,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + timeout
        while "Zocrates is running" not in log.read_text(errors="replace"):
            assert stack.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, f"zocrates run did not start; see {log}"
            time.sleep(0.2)
        yield stack
    finally:
        os.killpg(stack.pid, signal.SIGINT)
        try:
            stack.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(stack.pid, signal.SIGKILL)
            stack.wait()


def stop(proc: subprocess.Popen[bytes], *, timeout: float = 15.0) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


NETWORK_AUDIT = """
import json, os, sys
seen = []
sys.addaudithook(
    lambda event, args: seen.append([event, repr(args[1] if event == "socket.connect"
    else args[0])]) if event in ("socket.connect", "socket.getaddrinfo") else None
)
"""


def fresh_python_report(body: str, *, timeout: float = 45.0) -> dict[str, Any]:
    """Run ``body`` in a new interpreter at the repository root, with no ``LITELLM_*``
    variable set and every socket connection and host-name look-up recorded in ``seen``
    (``NETWORK_AUDIT``); ``body`` prints one JSON object last, which is returned."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM_")}
    done = subprocess.run(
        [sys.executable, "-c", NETWORK_AUDIT + textwrap.dedent(body)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=ROOT,
        check=True,
    )
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


_MAINTENANCE_HOLDER = """
import asyncio, sys
from services.gateway.locks.redis_chat_lock import RedisChatLock

async def main() -> None:
    lock = RedisChatLock(sys.argv[1], key_prefix=sys.argv[2], ttl_seconds=float(sys.argv[3]))
    async with lock.hold_maintenance() as mark:
        assert mark is not None
        print("held", flush=True)
        await asyncio.sleep(3600)

asyncio.run(main())
"""


@contextlib.contextmanager
def maintenance_mark_holder(
    redis_url: str, *, key_prefix: str, ttl_seconds: float
) -> Iterator[subprocess.Popen[str]]:
    """Another process (a gateway replica, as far as Redis can tell) holding the maintenance
    mark and renewing it, until the test kills it (``proc.kill()``: SIGKILL, no clean-up)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _MAINTENANCE_HOLDER, redis_url, key_prefix, str(ttl_seconds)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "held", f"the holder did not take the mark: {line!r}"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
