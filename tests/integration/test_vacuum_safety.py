"""VACUUM on SQLite is an atomic swap: a crash at any point leaves a valid database with
every session, and a busy database or a short disk makes it skip instead of fail."""

from __future__ import annotations

import asyncio
import os
import pathlib
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import pytest

from services.sessions.maintenance import RetentionPolicy, run_maintenance
from services.sessions.store import SessionStore, sqlite_url_for
from services.sessions.vacuum import VacuumOutcome, vacuum, vacuum_sqlite_file
from tests.support import adk_events as ev

APP, USER = "zocrates", "local"


async def _fragmented_db(
    data_dir: pathlib.Path, *, keep: int = 3, drop: int = 6, size: int = 3000, events: int = 10
) -> tuple[pathlib.Path, set[str]]:
    """A sessions.db whose free pages are well over 25%, and the ids that must survive."""
    store = SessionStore(sqlite_url_for(data_dir))
    await store.open()
    kept: set[str] = set()
    doomed: list[str] = []
    for i in range(keep + drop):
        session = await store.create_session(app_name=APP, user_id=USER, title=f"s{i}")
        for j in range(events):
            await store.append_event(session, ev.user_text("y" * size, invocation_id=f"{i}-{j}"))
        (kept.add(session.id) if i < keep else doomed.append(session.id))
    for session_id in doomed:  # deleted last, so their pages stay free
        await store.delete_session(app_name=APP, user_id=USER, session_id=session_id)
    await store.close()
    return data_dir / "sessions.db", kept


def _integrity(path: pathlib.Path) -> tuple[str, int]:
    conn = sqlite3.connect(path)
    try:
        verdict = conn.execute("PRAGMA integrity_check").fetchone()[0]
        freelist = conn.execute("PRAGMA freelist_count").fetchone()[0]
    finally:
        conn.close()
    return verdict, freelist


async def _surviving_ids(data_dir: pathlib.Path) -> set[str]:
    store = SessionStore(sqlite_url_for(data_dir))
    await store.open()
    try:
        return {r.id for r in await store.session_rows(app_name=APP)}
    finally:
        await store.close()


_CRASH_SCRIPT = textwrap.dedent(
    """
    import os, pathlib, signal, sys
    from services.sessions.vacuum import vacuum_sqlite_file

    def hook(step):
        if step == sys.argv[2]:
            os.kill(os.getpid(), signal.SIGKILL)

    vacuum_sqlite_file(pathlib.Path(sys.argv[1]), on_step=hook)
    """
)


@pytest.mark.parametrize("step", ["copied", "replaced"])
async def test_crash_at_each_step_of_the_swap_leaves_a_valid_database(
    tmp_path: pathlib.Path, step: str
) -> None:
    data_dir = tmp_path / "zocrates-data"
    db, kept = await _fragmented_db(data_dir)
    assert _integrity(db)[1] > 0
    proc = subprocess.run(
        [sys.executable, "-c", _CRASH_SCRIPT, str(db), step], cwd=pathlib.Path.cwd(), timeout=60
    )
    assert proc.returncode == -signal.SIGKILL
    verdict, freelist = _integrity(db)
    assert verdict == "ok"
    if step == "copied":
        assert (db.parent / "sessions.db.vacuum-tmp").exists()  # original untouched, copy stranded
        assert freelist > 0
    else:
        assert freelist == 0  # the compacted copy is in place
    assert await _surviving_ids(data_dir) == kept
    assert not (db.parent / "sessions.db.vacuum-tmp").exists()  # cleaned at the next open


def _copy_size(db: pathlib.Path) -> int:
    """The size of a complete ``VACUUM INTO`` copy of ``db`` (made beside it, then removed)."""
    scratch = db.with_name("copy-size.db")
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("VACUUM INTO ?", (str(scratch),))
    finally:
        conn.close()
    size = scratch.stat().st_size
    scratch.unlink()
    return size


def _wait_for_file(path: pathlib.Path, proc: subprocess.Popen[bytes]) -> bool:
    """Poll until ``path`` exists (True) or ``proc`` ends (False)."""
    while proc.poll() is None:
        if path.exists():
            return True
        time.sleep(0.0002)
    return False


async def test_kill_at_random_moments_during_vacuum_never_corrupts(tmp_path: pathlib.Path) -> None:
    """SIGKILL at moments counted from the start of the copy (``VACUUM INTO`` creates the
    temporary file, then fills it): early ones land while the copy is being written, later
    ones after the swap. At least one must leave a partial copy behind, or nothing here
    proved that a kill mid-VACUUM is harmless."""
    data_dir = tmp_path / "zocrates-data"
    db, kept = await _fragmented_db(data_dir, keep=4, drop=8, size=20000, events=40)
    tmp = db.with_name(db.name + ".vacuum-tmp")
    full = _copy_size(db)
    script = (
        "import pathlib, sys\n"
        "from services.sessions.vacuum import vacuum_sqlite_file\n"
        "vacuum_sqlite_file(pathlib.Path(sys.argv[1]))\n"
    )
    landed: list[str] = []
    # Copying 3.4 MB takes about 20 ms here: the first offsets fall inside it.
    for offset in (0.0, 0.0, 0.002, 0.005, 0.01, 0.05, 0.3):
        proc = subprocess.Popen([sys.executable, "-c", script, str(db)])
        assert _wait_for_file(tmp, proc), f"the VACUUM ended without a copy ({proc.returncode})"
        time.sleep(offset)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        if proc.returncode != -signal.SIGKILL:
            landed.append("after the process ended")
        elif tmp.exists() and tmp.stat().st_size < full:
            landed.append("while copying")
        elif tmp.exists():
            landed.append("after the copy, before the swap")
        else:
            landed.append("after the swap")
        assert _integrity(db)[0] == "ok", landed
        assert await _surviving_ids(data_dir) == kept, landed
        assert not tmp.exists()  # the stranded copy is removed when the store opens
    assert "while copying" in landed, landed


async def test_a_cancelled_vacuum_ends_its_swap_before_the_store_is_used_again(
    tmp_path: pathlib.Path,
) -> None:
    """The caller going away (its RPC cancelled) mid-swap: the gate is let go only once the
    thread has replaced the file, never while it still copies or renames."""
    data_dir = tmp_path / "zocrates-data"
    db, kept = await _fragmented_db(data_dir)
    store = SessionStore(sqlite_url_for(data_dir))
    await store.open()
    try:
        steps: list[str] = []
        copied = threading.Event()

        def slow_after_copy(step: str) -> None:
            steps.append(step)
            if step == "copied":
                copied.set()
                time.sleep(0.5)  # the swap is still to come when the cancellation arrives

        task = asyncio.create_task(vacuum(store, on_step=slow_after_copy))
        assert await asyncio.to_thread(copied.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert steps == ["copied", "replaced"]
        assert _integrity(db) == ("ok", 0)
        assert {r.id for r in await store.session_rows(app_name=APP)} == kept
    finally:
        await store.close()


async def test_busy_database_is_skipped_not_fatal(tmp_path: pathlib.Path) -> None:
    data_dir = tmp_path / "zocrates-data"
    db, kept = await _fragmented_db(data_dir)
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process is writing
    try:
        started = time.monotonic()
        assert vacuum_sqlite_file(db) is VacuumOutcome.DATABASE_BUSY
        assert time.monotonic() - started < 10
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert _integrity(db)[0] == "ok"
    assert vacuum_sqlite_file(db) is VacuumOutcome.DONE
    assert await _surviving_ids(data_dir) == kept


async def test_large_fragmented_file_is_vacuumed_without_deletions_unless_busy(
    tmp_path: pathlib.Path,
) -> None:
    """Over 30 MB with >= 25% free pages: VACUUM runs even when this run deleted nothing;
    a concurrent writer makes maintenance report database_busy and carry on."""
    data_dir = tmp_path / "zocrates-data"
    db, kept = await _fragmented_db(data_dir, keep=4, drop=8, size=300_000, events=10)
    assert db.stat().st_size >= 30 * 1024 * 1024
    store = SessionStore(sqlite_url_for(data_dir))
    await store.open()
    try:
        writer = sqlite3.connect(db, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        try:
            report = await run_maintenance(
                store, app_name=APP, policy=RetentionPolicy(), active_session_ids=[]
            )
        finally:
            writer.execute("ROLLBACK")
            writer.close()
        assert report.deleted == 0
        assert (report.vacuumed, report.vacuum_skipped_reason) == (False, "database_busy")
        assert {r.id for r in await store.session_rows(app_name=APP)} == kept

        report = await run_maintenance(
            store, app_name=APP, policy=RetentionPolicy(), active_session_ids=[]
        )
        assert (report.vacuumed, report.vacuum_skipped_reason) == (True, "")
        assert report.size_after < report.size_before / 2
        assert {r.id for r in await store.session_rows(app_name=APP)} == kept
    finally:
        await store.close()


@pytest.fixture
def small_disk(tmp_path: pathlib.Path):  # type: ignore[no-untyped-def]
    """A real 1.5 MiB filesystem (tmpfs), so the free-space pre-check meets a real full disk."""
    mount = tmp_path / f"small-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    if os.geteuid() != 0 and not os.environ.get("CI"):
        pytest.skip("mounting a small tmpfs needs root; CI runs this as root")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1536k", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


async def test_short_disk_skips_vacuum_and_keeps_the_database(small_disk: pathlib.Path) -> None:
    data_dir = small_disk / "zocrates-data"
    db, kept = await _fragmented_db(data_dir, keep=3, drop=4, size=7000, events=10)
    size = db.stat().st_size
    free = os.statvfs(db.parent).f_bavail * os.statvfs(db.parent).f_frsize
    assert free < 1.5 * size, (free, size)  # the premise: not enough room for a copy
    assert vacuum_sqlite_file(db) is VacuumOutcome.INSUFFICIENT_DISK
    assert not (db.parent / "sessions.db.vacuum-tmp").exists()
    assert _integrity(db)[0] == "ok"
    assert await _surviving_ids(data_dir) == kept
