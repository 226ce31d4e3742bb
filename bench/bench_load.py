"""Load: many sessions chatting at once through the product as it runs (`zocrates run`: every
service its own process, the Redis chat lock), on SQLite and on PostgreSQL.

Every research role is on a local server speaking OpenAI's wire format that answers each message
at once (``tests/support/load.py``), so the figures are the stack's own: gateway, lock, agent
runner, LiteLLM, sessions service, post-turn gate. After the load the events table is read
directly: every prompt once, in order, with its answer. Then four chats sent together to one
session: one proceeds, three get 409.

    python bench/bench_load.py [--sessions 50] [--turns 10] [--backend both] [--check]

``--check`` exits 1 when a request failed, an event is lost or duplicated, or the one-session
check does not hold (the goals of docs/benchmarks.md, "Load").
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator

import httpx

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import fresh_postgres_database
from tests.support import zotero_fixture as zf
from tests.support.load import (
    count_events,
    lost_or_duplicated,
    model_config,
    one_session_at_once,
    responder,
    run_load,
)
from tests.support.openai_server import serve_openai
from tests.support.ports import free_base_port


@contextlib.asynccontextmanager
async def product(
    root: pathlib.Path, *, database_url: str | None, redis_url: str
) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """`zocrates run` on free ports, every role on the local model; (client, database URL)."""
    zotero = root / "zotero"
    zf.build_zotero_library(zotero, files=())
    base = free_base_port()
    env = {
        **os.environ,
        "ZOCRATES_REDIS_URL": redis_url,
        "ZOCRATES_REDIS_KEY_PREFIX": f"bench-load-{uuid.uuid4().hex[:8]}",
        "ZOCRATES_MODEL_API_KEY": "sk-load-test",
        "ZOCRATES_LOG_LEVEL": "WARNING",
    }
    if database_url:
        env["ZOCRATES_DATABASE_URL"] = database_url
    log = root / "zocrates-run.log"
    proc = await asyncio.to_thread(_spawn, base, zotero, env, log)
    try:
        token_file = zotero / "zocrates-data" / "gateway.token"
        url = f"http://127.0.0.1:{base}"
        deadline = time.monotonic() + 180
        async with httpx.AsyncClient(timeout=5) as probe:
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"zocrates run exited with {proc.returncode}; see {log}")
                with contextlib.suppress(httpx.HTTPError):
                    if (
                        token_file.exists()
                        and (await probe.get(f"{url}/healthz")).status_code == 200
                    ):
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"zocrates run did not become healthy; see {log}")
                await asyncio.sleep(0.5)
        token = token_file.read_text().strip()
        with serve_openai(responder, keep_alive=True) as model:
            async with httpx.AsyncClient(
                base_url=url,
                headers={"Authorization": f"Bearer {token}"},
                timeout=120,
                limits=httpx.Limits(max_connections=200, max_keepalive_connections=200),
            ) as http:
                response = await http.put("/config", json=model_config(model.api_base))
                response.raise_for_status()
                db = database_url or (
                    f"sqlite+aiosqlite:///{zotero / 'zocrates-data' / 'sessions.db'}"
                )
                yield http, db
    finally:
        await asyncio.to_thread(_stop, proc)


def _spawn(
    base: int, zotero: pathlib.Path, env: dict[str, str], log: pathlib.Path
) -> subprocess.Popen[bytes]:
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "services.stack.cli", "run", "--port", str(base),
             "--zotero-dir", str(zotero)],
            env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Ctrl-C to the whole process group, as a user stops `zocrates run`."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


async def one_backend(name: str, args: argparse.Namespace, root: pathlib.Path) -> list[str]:
    """Runs the load on one backend, prints its figures, returns the goals it missed."""
    missed: list[str] = []
    async with contextlib.AsyncExitStack() as stack:
        database_url = None
        if name == "postgresql":
            database_url = await stack.enter_async_context(
                fresh_postgres_database(args.postgres_url)
            )
        http, db = await stack.enter_async_context(
            product(root / name, database_url=database_url, redis_url=args.redis_url)
        )
        # A few turns first so the processes have loaded what they load on first use.
        await run_load(http, sessions=2, turns=1)
        result = await run_load(http, sessions=args.sessions, turns=args.turns)
        counted = await count_events(db, list(result.sessions))
        problems = lost_or_duplicated(result, counted)
        statuses = await one_session_at_once(http, requests=4)
    turns = args.sessions * args.turns
    print(
        f"\n{name}: {args.sessions} sessions x {args.turns} turns = {turns} turns in "
        f"{result.seconds:.1f} s ({turns / result.seconds:.1f} turns/s), "
        f"{len(result.failures)} failed requests, "
        f"{sum(c.events for c in counted.values())} events in the database, "
        f"{len(problems)} sessions with a lost or duplicated event"
    )
    print(f"   {'route':<20} {'requests':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for route, (n, p50, p99) in result.percentiles().items():
        print(f"   {route:<20} {n:8d} {p50:8.1f} {p99:8.1f}")
    print(f"   four chats at once on one session: {statuses}")
    for failure in result.failures[:5]:
        print("   failure:", failure)
    for problem in problems[:5]:
        print("   problem:", problem)
    if result.failures:
        missed.append(f"{name}: {len(result.failures)} requests failed")
    if problems:
        missed.append(f"{name}: {len(problems)} sessions lost or duplicated an event")
    if statuses[0] != 200 or sorted(statuses[1:]) != [409, 409, 409]:
        missed.append(f"{name}: one session, four chats at once gave {statuses}")
    return missed


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=50, help="users at once (default 50)")
    parser.add_argument("--turns", type=int, default=10, help="turns per session (default 10)")
    parser.add_argument(
        "--backend", choices=("sqlite", "postgresql", "both"), default="both",
        help="the sessions database (default both)",
    )  # fmt: skip
    parser.add_argument(
        "--redis-url", default=os.environ.get("ZOCRATES_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
    )
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get(
            "ZOCRATES_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
        ),
        help="a database to create the benchmark's own database from",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    args = parser.parse_args()
    backends = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    missed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in backends:
            missed += await one_backend(name, args, pathlib.Path(tmp))
    for goal in missed:
        print("MISSED:", goal)
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
