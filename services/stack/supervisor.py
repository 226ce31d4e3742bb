"""Start the services as child processes in dependency order, health-gated, with prefixed
logs; restart one that dies (the others keep running: a crashed agent does not stop a sync in
the library service), and stop them all (reverse order) on Ctrl-C or when one keeps dying."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import dataclasses
import os
import signal
import sys
import time

import httpx

_COLORS = ["\033[36m", "\033[35m", "\033[33m", "\033[32m", "\033[34m"]
_RESET = "\033[0m"


@dataclasses.dataclass
class ServiceSpec:
    name: str
    module: str
    ready_url: str
    env: dict[str, str]


def _die_with_parent() -> None:
    """Linux: deliver SIGTERM to the child if the supervisor dies (even by SIGKILL)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Supervisor:
    """``restarts`` within ``restart_window`` seconds: how often one service may die and be
    started again before the stack gives up on it (a crash loop is not papered over)."""

    def __init__(
        self,
        specs: list[ServiceSpec],
        *,
        ready_timeout: float = 120.0,
        restarts: int = 3,
        restart_window: float = 300.0,
    ) -> None:
        self.specs = specs
        self.ready_timeout = ready_timeout
        self.restarts = restarts
        self.restart_window = restart_window
        self._deaths: dict[str, list[float]] = {}
        self.procs: dict[str, asyncio.subprocess.Process] = {}
        self._pumps: list[asyncio.Task[None]] = []
        self._width = max(len("zocrates"), *(len(s.name) for s in specs))
        self._color = sys.stdout.isatty()

    def say(self, name: str, line: str) -> None:
        index = (
            [s.name for s in self.specs].index(name)
            if name in self.procs or any(s.name == name for s in self.specs)
            else 0
        )
        prefix = f"{name:<{self._width}} |"
        if self._color and name != "zocrates":
            prefix = f"{_COLORS[index % len(_COLORS)]}{prefix}{_RESET}"
        print(f"{prefix} {line}", flush=True)

    async def _pump(self, name: str, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self.say(name, line.decode(errors="replace").rstrip())

    async def _start_one(self, spec: ServiceSpec) -> None:
        env = {**os.environ, **spec.env, "PYTHONUNBUFFERED": "1"}
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            spec.module,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches us; we stop children in order
            preexec_fn=_die_with_parent,
        )
        self.procs[spec.name] = proc
        assert proc.stdout is not None
        self._pumps.append(asyncio.create_task(self._pump(spec.name, proc.stdout)))
        await self._wait_ready(spec, proc)

    async def _wait_ready(self, spec: ServiceSpec, proc: asyncio.subprocess.Process) -> None:
        deadline = time.monotonic() + self.ready_timeout
        async with httpx.AsyncClient(timeout=1.0) as client:
            while True:
                if proc.returncode is not None:
                    raise RuntimeError(
                        f"{spec.name} exited with code {proc.returncode} during start-up"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(spec.ready_url)).status_code == 200:
                        return
                if time.monotonic() > deadline:
                    waited = f"{self.ready_timeout:.0f} s"
                    raise RuntimeError(f"{spec.name} not ready after {waited} ({spec.ready_url})")
                await asyncio.sleep(0.2)

    async def start(self) -> None:
        for spec in self.specs:
            self.say("zocrates", f"starting {spec.name} ...")
            await self._start_one(spec)
            self.say("zocrates", f"{spec.name} is ready")

    async def supervise(self) -> str:
        """Restart each service that exits, until one exits more than ``restarts`` times within
        ``restart_window`` seconds (or cannot start again): its name, the stack to be stopped."""
        while True:
            name = await self.wait_any_exit()
            code = self.procs[name].returncode
            now = time.monotonic()
            deaths = [t for t in self._deaths.get(name, []) if now - t < self.restart_window]
            deaths.append(now)
            self._deaths[name] = deaths
            if len(deaths) > self.restarts:
                self.say(
                    "zocrates",
                    f"{name} exited (code {code}) {len(deaths)} times in "
                    f"{self.restart_window:.0f} s; stopping",
                )
                return name
            self.say("zocrates", f"{name} exited unexpectedly (code {code}); restarting it")
            spec = next(s for s in self.specs if s.name == name)
            try:
                await self._start_one(spec)
            except RuntimeError as exc:
                self.say("zocrates", f"{name} could not be restarted: {exc}; stopping")
                return name
            self.say("zocrates", f"{name} is ready again")

    async def wait_any_exit(self) -> str:
        waits = {asyncio.create_task(p.wait()): n for n, p in self.procs.items()}
        done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        return waits[next(iter(done))]

    async def stop(self, timeout: float = 10.0) -> None:
        for spec in reversed(self.specs):
            proc = self.procs.get(spec.name)
            if proc is None or proc.returncode is not None:
                continue
            self.say("zocrates", f"stopping {spec.name}")
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                self.say("zocrates", f"{spec.name} did not stop in {timeout:.0f} s; killing it")
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        for pump in self._pumps:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(pump, 2)
