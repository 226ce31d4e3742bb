"""The ``zocrates`` command.

zocrates run     start the six services on this machine, in dependency order, each health-gated
                 (embedded defaults: SQLite in <Zotero dir>/zocrates-data, in-process chat lock,
                 no key, no network); a service that dies is started again
zocrates index   index the Zotero library through the running gateway (library_commands.py)
zocrates search  search the indexed library through the running gateway

Every flag, and the ``ZOCRATES_*`` variables the services read, are in docs/configuration.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import pathlib
import signal
import sys
from typing import Any

from services.common import ports
from services.common.settings import DATA_FOLDER_NAME
from services.stack.library_commands import add_commands as add_library_commands
from services.stack.supervisor import ServiceSpec, Supervisor


def stack_specs(*, base_port: int, host: str) -> list[ServiceSpec]:
    """The services `zocrates run` starts, in start order, with their peers' addresses."""

    def admin(service: str) -> str:
        return f"http://{host}:{ports.admin_port(base_port, service)}/readyz"

    def addr(service: str) -> str:
        return f"{host}:{ports.service_port(base_port, service)}"

    return [
        ServiceSpec("reranker", "services.reranker", admin("reranker"), {}),
        ServiceSpec("sessions", "services.sessions", admin("sessions"), {}),
        ServiceSpec(
            "library",
            "services.library",
            admin("library"),
            {"ZOCRATES_RERANKER_ADDR": addr("reranker")},
        ),
        ServiceSpec(
            "agent",
            "services.agent",
            admin("agent"),
            {
                "ZOCRATES_RERANKER_ADDR": addr("reranker"),
                "ZOCRATES_SESSIONS_ADDR": addr("sessions"),
                "ZOCRATES_LIBRARY_ADDR": addr("library"),
            },
        ),
        ServiceSpec(
            "compactor",
            "services.compactor",
            admin("compactor"),
            {
                "ZOCRATES_RERANKER_ADDR": addr("reranker"),
                "ZOCRATES_SESSIONS_ADDR": addr("sessions"),
            },
        ),
        ServiceSpec(
            "gateway",
            "services.gateway",
            admin("gateway"),
            {
                "ZOCRATES_SESSIONS_ADDR": addr("sessions"),
                "ZOCRATES_AGENT_ADDR": addr("agent"),
                "ZOCRATES_LIBRARY_ADDR": addr("library"),
                "ZOCRATES_COMPACTOR_ADDR": addr("compactor"),
            },
        ),
    ]


async def _run(args: argparse.Namespace) -> int:
    env = os.environ
    env["ZOCRATES_PORT"] = str(args.port)
    env["ZOCRATES_BIND_HOST"] = args.host
    if args.zotero_dir:
        env["ZOCRATES_ZOTERO_DIR"] = str(args.zotero_dir)
    zotero_dir = pathlib.Path(env.get("ZOCRATES_ZOTERO_DIR", "~/Zotero")).expanduser()
    supervisor = Supervisor(stack_specs(base_port=args.port, host=args.host))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    code = 0
    try:
        starting = asyncio.create_task(supervisor.start())
        stopping = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if stopping in done:
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await starting
            return 130
        starting.result()
        token_file = zotero_dir / DATA_FOLDER_NAME / "gateway.token"
        supervisor.say(
            "zocrates",
            f"Zocrates is running at http://{args.host}:{args.port} "
            f"(token: {token_file}). Press Ctrl-C to stop.",
        )
        exited = asyncio.create_task(supervisor.supervise())
        waiting: set[asyncio.Task[Any]] = {exited, stopping}
        done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if exited in done:
            exited.result()  # a service that kept dying: said so; the stack stops
            code = 1
        else:
            exited.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await exited
    except RuntimeError as exc:
        supervisor.say("zocrates", f"start-up failed: {exc}")
        code = 1
    finally:
        await supervisor.stop()
    supervisor.say("zocrates", "stopped")
    return code


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="zocrates", description="Zocrates: a research assistant for your Zotero library."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run",
        help="start every service (Ctrl-C stops them)",
        description=(
            "Start the Zocrates services on this machine, health-gated, with prefixed logs. "
            "Everything runs on embedded defaults: SQLite under <Zotero dir>/zocrates-data, an "
            "in-process chat lock, no API key and no network. Other settings come from "
            "ZOCRATES_* environment variables (see docs/configuration.md)."
        ),
    )
    run.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("ZOCRATES_PORT", ports.DEFAULT_BASE_PORT)),
        help="base port; the gateway listens on it (default 8765, or ZOCRATES_PORT)",
    )
    run.add_argument(
        "--host",
        default=os.environ.get("ZOCRATES_BIND_HOST", "127.0.0.1"),
        help="bind address (default ZOCRATES_BIND_HOST or 127.0.0.1)",
    )
    run.add_argument(
        "--zotero-dir",
        type=pathlib.Path,
        default=None,
        help="Zotero data directory (default ZOCRATES_ZOTERO_DIR or ~/Zotero)",
    )
    add_library_commands(sub)
    args = parser.parse_args(argv)
    if args.command == "run":
        sys.exit(asyncio.run(_run(args)))
    sys.exit(args.handler(args))


if __name__ == "__main__":
    main()
