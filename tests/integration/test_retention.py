"""Every retention invariant, on a real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

import time

from services.sessions.maintenance import (
    OwedVacuum,
    RetentionPolicy,
    run_deferred_vacuum,
    run_maintenance,
)
from services.sessions.stats import storage_stats
from services.sessions.store import SessionStore
from tests.support import adk_events as ev

APP, USER = "zocrates", "local"
DAY = 86400.0


async def _session(
    store: SessionStore, *, events: int = 0, age_days: float = 0.0, text_size: int = 20
) -> str:
    session = await store.create_session(app_name=APP, user_id=USER)
    for i in range(events):
        await store.append_event(session, ev.user_text("x" * text_size, invocation_id=f"inv-{i}"))
    if age_days:
        await ev.set_update_time(store, session.id, time.time() - age_days * DAY)
    return session.id


async def _ids(store: SessionStore) -> set[str]:
    return {r.id for r in await store.session_rows(app_name=APP)}


async def test_empty_sessions_are_pruned_only_after_24_hours(store: SessionStore) -> None:
    fresh_empty = await _session(store)
    almost = await _session(store, age_days=0.95)
    old_empty = await _session(store, age_days=1.01)
    old_with_events = await _session(store, events=1, age_days=2)
    report = await run_maintenance(
        store, app_name=APP, policy=RetentionPolicy(), active_session_ids=[]
    )
    assert report.deleted_empty == 1 and report.deleted_ids == [old_empty]
    assert await _ids(store) == {fresh_empty, almost, old_with_events}


async def test_retention_days_and_zero_or_none_disable_it(store: SessionStore) -> None:
    old = await _session(store, events=1, age_days=181)
    recent = await _session(store, events=1, age_days=179)
    for disabled in (
        RetentionPolicy(retention_days=0, max_saved_sessions=None),
        RetentionPolicy(retention_days=None, max_saved_sessions=0),
    ):
        report = await run_maintenance(store, app_name=APP, policy=disabled, active_session_ids=[])
        assert report.deleted == 0
    report = await run_maintenance(
        store, app_name=APP, policy=RetentionPolicy(retention_days=180), active_session_ids=[]
    )
    assert report.deleted_expired == 1 and report.deleted_ids == [old]
    assert await _ids(store) == {recent}


async def test_max_saved_sessions_prunes_the_least_recently_updated(store: SessionStore) -> None:
    ids = [await _session(store, events=1, age_days=10 - i) for i in range(5)]  # ids[0] oldest
    report = await run_maintenance(
        store,
        app_name=APP,
        policy=RetentionPolicy(retention_days=None, max_saved_sessions=3),
        active_session_ids=[],
    )
    assert report.deleted_over_cap == 2
    assert set(report.deleted_ids) == {ids[0], ids[1]}
    assert await _ids(store) == set(ids[2:])


async def test_in_flight_sessions_are_immune_and_defer_vacuum(store: SessionStore) -> None:
    busy_empty = await _session(store, age_days=3)
    busy_old = await _session(store, events=1, age_days=400)
    others = [await _session(store, events=1, age_days=50 - i) for i in range(3)]
    report = await run_maintenance(
        store,
        app_name=APP,
        policy=RetentionPolicy(retention_days=180, max_saved_sessions=2),
        active_session_ids=[busy_empty, busy_old],
    )
    remaining = await _ids(store)
    assert {busy_empty, busy_old} <= remaining
    # Cap of 2 counts the in-flight ones; the oldest idle ones go.
    assert remaining == {busy_empty, busy_old}
    assert set(report.deleted_ids) == set(others)
    assert report.skipped_active >= 2
    assert report.vacuumed is False
    assert report.vacuum_skipped_reason == "chat_in_progress"


async def test_vacuum_runs_after_deletions_and_reclaims_space(store: SessionStore) -> None:
    doomed = [await _session(store, events=20, age_days=400, text_size=4000) for _ in range(6)]
    kept = await _session(store, events=2)
    before = await storage_stats(store)
    report = await run_maintenance(
        store, app_name=APP, policy=RetentionPolicy(), active_session_ids=[]
    )
    assert set(report.deleted_ids) == set(doomed)
    assert report.vacuumed, report.vacuum_skipped_reason
    after = await storage_stats(store)
    assert after.session_count == 1 and after.event_count == 2
    if store.backend == "sqlite":
        assert after.freelist_count == 0
        assert after.size_bytes < before.size_bytes / 4
        assert report.size_after == after.size_bytes < report.size_before
    # The store keeps working on the swapped file.
    session = await store.get_session(app_name=APP, user_id=USER, session_id=kept)
    await store.append_event(session, ev.user_text("after vacuum", invocation_id="later"))
    assert (await store.session_rows(app_name=APP))[0].event_count == 3


async def test_vacuum_skipped_below_the_freelist_threshold(store: SessionStore) -> None:
    await _session(store, events=3)
    await _session(store, age_days=2)  # an empty session: deleted, but frees almost nothing
    await _session(store, events=40, text_size=2000)
    report = await run_maintenance(
        store, app_name=APP, policy=RetentionPolicy(), active_session_ids=[]
    )
    assert report.deleted_empty == 1
    if store.backend == "sqlite":
        assert report.vacuumed is False
        assert report.vacuum_skipped_reason == "below_threshold"


async def test_nothing_deleted_and_small_file_means_no_vacuum(store: SessionStore) -> None:
    await _session(store, events=1)
    report = await run_maintenance(
        store, app_name=APP, policy=RetentionPolicy(), active_session_ids=[]
    )
    assert report.deleted == 0 and not report.vacuumed
    assert report.vacuum_skipped_reason == "below_threshold"


async def test_a_vacuum_deferred_for_chats_is_run_once_they_have_ended(store: SessionStore) -> None:
    busy = await _session(store, events=2)
    doomed = [await _session(store, events=20, age_days=400, text_size=4000) for _ in range(6)]
    report = await run_maintenance(
        store, app_name=APP, policy=RetentionPolicy(), active_session_ids=[busy]
    )
    assert set(report.deleted_ids) == set(doomed)
    assert (report.vacuumed, report.vacuum_skipped_reason) == (False, "chat_in_progress")
    assert report.owed is not None and report.owed.deleted == 6
    fragmented = await storage_stats(store)

    # Another chat still runs: deferred again, still owed, nothing touched.
    again = await run_deferred_vacuum(store, owed=report.owed, active_session_ids=["other"])
    assert (again.vacuumed, again.vacuum_skipped_reason) == (False, "chat_in_progress")
    assert again.owed == report.owed
    assert (await storage_stats(store)).freelist_count == fragmented.freelist_count

    paid = await run_deferred_vacuum(store, owed=report.owed, active_session_ids=[])
    assert (paid.vacuumed, paid.vacuum_skipped_reason, paid.owed) == (True, "", None)
    assert paid.deleted == 0  # it only reclaims; the deletions were the deferring run's
    after = await storage_stats(store)
    if store.backend == "sqlite":
        assert fragmented.freelist_ratio >= 0.25
        assert after.freelist_count == 0
        assert after.size_bytes < fragmented.size_bytes / 4
        assert paid.size_after == after.size_bytes < paid.size_before
    assert {r.id for r in await store.session_rows(app_name=APP)} == {busy}
    assert (await store.session_rows(app_name=APP))[0].event_count == 2


async def test_a_deferred_vacuum_still_obeys_the_rules(store: SessionStore) -> None:
    await _session(store, events=40, text_size=2000)
    doomed = await _session(store, age_days=2)  # empty: deleted, but frees almost nothing
    report = await run_maintenance(
        store, app_name=APP, policy=RetentionPolicy(), active_session_ids=["chat"]
    )
    assert report.deleted_ids == [doomed] and report.owed is not None
    before = await storage_stats(store)
    paid = await run_deferred_vacuum(store, owed=report.owed, active_session_ids=[])
    if store.backend == "sqlite":  # free pages under 25%: not worth it, and no longer owed
        assert (paid.vacuumed, paid.vacuum_skipped_reason, paid.owed) == (
            False,
            "below_threshold",
            None,
        )
        assert (await storage_stats(store)).size_bytes == before.size_bytes
    # Nothing deleted and a small file: not worth it either (both backends).
    owed = OwedVacuum(deleted=0, since=time.time())
    nothing = await run_deferred_vacuum(store, owed=owed, active_session_ids=[])
    assert (nothing.vacuumed, nothing.vacuum_skipped_reason, nothing.owed) == (
        False,
        "below_threshold",
        None,
    )
    none_owed = await run_deferred_vacuum(store, owed=None, active_session_ids=[])
    assert (none_owed.vacuumed, none_owed.vacuum_skipped_reason) == (False, "not_owed")


async def test_a_later_run_settles_what_an_earlier_one_deferred(store: SessionStore) -> None:
    doomed = [await _session(store, events=20, age_days=400, text_size=4000) for _ in range(6)]
    first = await run_maintenance(
        store, app_name=APP, policy=RetentionPolicy(), active_session_ids=["chat"]
    )
    assert set(first.deleted_ids) == set(doomed) and first.owed is not None
    # The next run deletes nothing itself, but the deferred deletions count for the rule.
    second = await run_maintenance(
        store, app_name=APP, policy=RetentionPolicy(), active_session_ids=[], owed=first.owed
    )
    assert second.deleted == 0
    assert (second.vacuumed, second.vacuum_skipped_reason, second.owed) == (True, "", None)
    # Deferred twice: the deletions add up and the first deferral's time is kept.
    third = await run_maintenance(
        store, app_name=APP, policy=RetentionPolicy(), active_session_ids=["chat"], owed=first.owed
    )
    assert third.owed == OwedVacuum(deleted=6, since=first.owed.since)
