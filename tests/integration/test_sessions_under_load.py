"""Many concurrent writers through gRPC while maintenance prunes and VACUUMs: every failure is a
typed error, every surviving session holds exactly what its writer appended, and the database
stays valid."""

from __future__ import annotations

import asyncio
import pathlib
import sqlite3

from services.common.errors import NotFound
from services.sessions.client import SessionsClient
from services.sessions.remote_session_service import RemoteSessionService
from tests.support import adk_events as ev
from tests.support.stack import running_sessions

APP, USER = "zocrates", "local"


async def test_writers_racing_maintenance_lose_nothing_they_were_told_was_saved(
    tmp_path: pathlib.Path,
) -> None:
    async with running_sessions(tmp_path) as server:
        remote = RemoteSessionService(server.runtime.address)
        client = SessionsClient(server.runtime.address, app_name=APP, user_id=USER)
        written: dict[str, list[str]] = {}
        failures: list[Exception] = []
        writers_done = asyncio.Event()

        async def writer(i: int) -> None:
            try:
                session = await remote.create_session(app_name=APP, user_id=USER)
                written[session.id] = []
                for j in range(12):
                    text = f"w{i}-e{j}-" + "x" * 3000
                    await remote.append_event(session, ev.user_text(text, invocation_id=f"{i}-{j}"))
                    written[session.id].append(text)
            except NotFound as exc:  # pruned under its feet: a typed, expected outcome
                failures.append(exc)
            except Exception as exc:  # anything else is a bug
                failures.append(exc)

        async def maintenance() -> list[dict]:  # type: ignore[type-arg]
            reports = []
            while not writers_done.is_set():
                reports.append(
                    await client.run_maintenance(
                        active_session_ids=set(),
                        retention_days=180,
                        max_saved_sessions=4,
                        reason="load",
                    )
                )
                await asyncio.sleep(0.05)
            return reports

        async def writers() -> None:
            await asyncio.gather(*(writer(i) for i in range(30)))
            writers_done.set()

        _, reports = await asyncio.gather(writers(), maintenance())
        try:
            assert all(isinstance(f, NotFound) for f in failures), failures
            assert any(r["vacuumed"] for r in reports), reports  # a VACUUM ran during the load
            survivors = {m["id"] for m in await client.list_manifests()}
            assert survivors
            for session_id in survivors:
                stored = await remote.get_session(app_name=APP, user_id=USER, session_id=session_id)
                assert stored is not None
                assert [e.content.parts[0].text for e in stored.events] == written[session_id]
        finally:
            await remote.close()
            await client.close()
        db = tmp_path / "zocrates-data" / "sessions.db"
        conn = sqlite3.connect(db)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            conn.close()
