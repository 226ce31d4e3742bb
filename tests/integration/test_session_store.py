"""The session store on a real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

import asyncio
import pathlib
import sqlite3
import uuid

import pytest
from google.adk.events.event_actions import EventActions
from google.adk.sessions.base_session_service import GetSessionConfig

from services.common.errors import AlreadyExists, InvalidArgument, NotFound, StaleSession
from services.sessions.service import SessionsService
from services.sessions.store import DEFAULT_TITLE, SessionStore, sqlite_url_for
from tests.support import adk_events as ev

APP, USER = "zocrates", "local"


async def test_create_get_list_delete(store: SessionStore) -> None:
    first = await store.create_session(app_name=APP, user_id=USER, title="Mixed models")
    second = await store.create_session(app_name=APP, user_id=USER, state={"k": 1})
    got = await store.get_session(app_name=APP, user_id=USER, session_id=second.id)
    assert got.state["k"] == 1

    rows = await store.session_rows(app_name=APP, user_id=USER)
    assert [r.id for r in rows] == [first.id, second.id]  # creation order
    assert [r.title for r in rows] == ["Mixed models", DEFAULT_TITLE]
    assert all(r.event_count == 0 for r in rows)

    await store.delete_session(app_name=APP, user_id=USER, session_id=first.id)
    with pytest.raises(NotFound) as err:
        await store.get_session(app_name=APP, user_id=USER, session_id=first.id)
    assert err.value.code == "session_not_found"
    with pytest.raises(NotFound):
        await store.delete_session(app_name=APP, user_id=USER, session_id=first.id)
    assert [r.id for r in await store.session_rows(app_name=APP)] == [second.id]


async def test_client_chosen_id_must_be_unique(store: SessionStore) -> None:
    await store.create_session(app_name=APP, user_id=USER, session_id="chosen-1")
    with pytest.raises(AlreadyExists):
        await store.create_session(app_name=APP, user_id=USER, session_id="chosen-1")


async def test_events_are_counted_and_limited_by_get_config(store: SessionStore) -> None:
    session = await store.create_session(app_name=APP, user_id=USER)
    for i in range(3):
        await store.append_event(session, ev.user_text(f"question {i}", invocation_id=f"inv-{i}"))
    rows = await store.session_rows(app_name=APP)
    assert rows[0].event_count == 3
    recent = await store.get_session(
        app_name=APP,
        user_id=USER,
        session_id=session.id,
        config=GetSessionConfig(num_recent_events=2),
    )
    assert [e.content.parts[0].text for e in recent.events] == ["question 1", "question 2"]


async def test_stale_copy_cannot_append(store: SessionStore) -> None:
    session = await store.create_session(app_name=APP, user_id=USER)
    copy_a = await store.get_session(app_name=APP, user_id=USER, session_id=session.id)
    copy_b = await store.get_session(app_name=APP, user_id=USER, session_id=session.id)
    await store.append_event(copy_a, ev.user_text("from a", invocation_id="a"))
    with pytest.raises(StaleSession) as err:
        await store.append_event(copy_b, ev.user_text("from b", invocation_id="b"))
    assert err.value.code == "stale_session"
    stored = await store.get_session(app_name=APP, user_id=USER, session_id=session.id)
    assert [e.content.parts[0].text for e in stored.events] == ["from a"]


async def test_title_survives_a_rewind_and_rename_keeps_a_running_chat_fresh(
    store: SessionStore,
) -> None:
    session = await store.create_session(app_name=APP, user_id=USER, title="Optimizers")
    running = await store.get_session(app_name=APP, user_id=USER, session_id=session.id)
    await store.append_event(
        running, ev.user_text("q1", invocation_id="inv-1", state_delta={"active_mode": "library"})
    )
    # A rename in the middle of a chat must not make the chat's copy stale.
    await store.rename(
        app_name=APP, user_id=USER, session_id=session.id, title="  lmer   optimizers "
    )
    await store.append_event(running, ev.model_text("a1", invocation_id="inv-1"))
    # ADK's rewind writes a state delta that erases keys set outside events.
    await store.append_event(
        running,
        ev.rewind("inv-1").model_copy(
            update={
                "actions": EventActions(
                    rewind_before_invocation_id="inv-1", state_delta={"title": None}
                )
            }
        ),
    )
    row = await store.session_row(app_name=APP, user_id=USER, session_id=session.id)
    assert row.title == "lmer optimizers"


async def test_rename_validates(store: SessionStore) -> None:
    session = await store.create_session(app_name=APP, user_id=USER)
    with pytest.raises(InvalidArgument) as err:
        await store.rename(app_name=APP, user_id=USER, session_id=session.id, title="x" * 201)
    assert err.value.code == "title_too_long"
    with pytest.raises(NotFound):
        await store.rename(app_name=APP, user_id=USER, session_id="nope", title="t")
    await store.rename(app_name=APP, user_id=USER, session_id=session.id, title="   ")
    assert (
        await store.session_row(app_name=APP, user_id=USER, session_id=session.id)
    ).title == DEFAULT_TITLE


async def test_deleting_a_session_removes_its_events_and_title(store: SessionStore) -> None:
    session = await store.create_session(app_name=APP, user_id=USER, title="doomed")
    await store.append_event(session, ev.user_text("hello", invocation_id="i"))
    await store.delete_session(app_name=APP, user_id=USER, session_id=session.id)
    sessions, events = await store.count()
    assert (sessions, events) == (0, 0)
    # Re-creating the same id starts clean: no title left behind.
    again = await store.create_session(app_name=APP, user_id=USER, session_id=session.id)
    assert (
        await store.session_row(app_name=APP, user_id=USER, session_id=again.id)
    ).title == DEFAULT_TITLE


async def test_service_formats_sessions_for_the_ui(db_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    service = SessionsService(database_url=db_url, data_dir=tmp_path)
    await service.open()
    try:
        chat = await service.create_chat(app_name=APP, user_id=USER, title="brms")
        session = await service.store.get_session(app_name=APP, user_id=USER, session_id=chat["id"])
        await service.store.append_event(
            session, ev.user_text("How does brms fit it?", invocation_id="inv-1")
        )
        await service.store.append_event(
            session, ev.model_text("It uses Stan.", invocation_id="inv-1", thought="Think.")
        )
        formatted = await service.formatted(app_name=APP, user_id=USER, session_id=chat["id"])
        assert formatted["title"] == "brms"
        assert [(m["role"], m["text"], m["thought"]) for m in formatted["messages"]] == [
            ("user", "How does brms fit it?", False),
            ("assistant", "Think.", True),
            ("assistant", "It uses Stan.", False),
        ]
        assert formatted["created_at"] <= formatted["updated_at"]
        assert formatted["pending_hitl"] is None
    finally:
        await service.close()


async def test_use_data_dir_moves_sqlite_but_not_a_fixed_url(tmp_path) -> None:  # type: ignore[no-untyped-def]
    service = SessionsService(database_url=None, data_dir=tmp_path / "a" / "zocrates-data")
    await service.open()
    try:
        await service.create_chat(app_name=APP, user_id=USER, title="in a")
        location, changed = await service.use_data_dir(str(tmp_path / "b"))
        assert changed and location == str(tmp_path / "b" / "zocrates-data" / "sessions.db")
        assert await service.manifests(app_name=APP, user_id=USER) == []
        _, changed = await service.use_data_dir(str(tmp_path / "b"))
        assert not changed
        await service.use_data_dir(str(tmp_path / "a"))
        assert [r.title for r in await service.manifests(app_name=APP, user_id=USER)] == ["in a"]
    finally:
        await service.close()
    fixed = SessionsService(
        database_url=f"sqlite+aiosqlite:///{tmp_path / uuid.uuid4().hex}.db", data_dir=tmp_path
    )
    await fixed.open()
    try:
        with pytest.raises(Exception) as err:
            await fixed.use_data_dir(str(tmp_path / "c"))
        assert getattr(err.value, "code", None) == "data_dir_fixed"
    finally:
        await fixed.close()


async def test_sqlite_write_waits_for_another_process_holding_the_write_lock(
    tmp_path: pathlib.Path,
) -> None:
    """Another connection (as another process would) holds SQLite's write lock for a while:
    ours waits its turn within the busy timeout and lands, rather than failing at once."""
    store = SessionStore(sqlite_url_for(tmp_path))
    await store.open()
    try:
        session = await store.create_session(app_name=APP, user_id=USER)
        other = sqlite3.connect(
            tmp_path / "sessions.db", timeout=10, isolation_level=None, check_same_thread=False
        )
        other.execute("BEGIN IMMEDIATE")
        other.execute("UPDATE sessions SET state = state WHERE id = ?", (session.id,))
        ours = asyncio.create_task(
            store.append_event(session, ev.user_text("waited", invocation_id="w"))
        )
        await asyncio.sleep(0.5)  # ours is now waiting on the lock the other holds
        assert not ours.done()
        await asyncio.to_thread(other.execute, "COMMIT")
        other.close()
        await asyncio.wait_for(ours, 10)
        stored = await store.get_session(app_name=APP, user_id=USER, session_id=session.id)
        assert [e.content.parts[0].text for e in stored.events] == ["waited"]
    finally:
        await store.close()


async def test_many_concurrent_sqlite_writers_never_starve(tmp_path: pathlib.Path) -> None:
    """SQLite's busy handler is not fair: with many writers polling for the one write lock, an
    unlucky one can wait past any timeout and fail with "database is locked" (seen in CI under
    load). Our own writers take turns, so even a tiny busy timeout never runs out."""
    store = SessionStore(sqlite_url_for(tmp_path), busy_timeout=0.001)
    await store.open()
    try:

        async def writer(i: int) -> list[str]:
            session = await store.create_session(app_name=APP, user_id=USER, title=f"w{i}")
            texts = []
            for j in range(8):
                text = f"w{i}-e{j}-" + "x" * 20_000
                await store.append_event(session, ev.user_text(text, invocation_id=f"{i}-{j}"))
                texts.append(text)
            return texts

        written = await asyncio.gather(*(writer(i) for i in range(20)))
        rows = await store.session_rows(app_name=APP)
        assert sorted(r.event_count for r in rows) == [8] * 20
        by_title = {r.title: r.id for r in rows}
        for i, texts in enumerate(written):
            stored = await store.get_session(
                app_name=APP, user_id=USER, session_id=by_title[f"w{i}"]
            )
            assert [e.content.parts[0].text for e in stored.events] == texts
    finally:
        await store.close()
