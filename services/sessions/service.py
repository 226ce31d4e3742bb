"""The sessions domain facade: which store is open, and the operations the servicer exposes.

No grpc here: the servicer translates protos to these calls and back.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pathlib
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.session import Session
from pydantic import ValidationError

from services.common.adk.internals import set_storage_update_marker
from services.common.errors import Conflict, InvalidArgument, NotFound
from services.common.settings import DATA_FOLDER_NAME
from services.sessions import metrics
from services.sessions.formatting import format_session_for_ui
from services.sessions.images import PromptImage, check_digest, find_prompt_image
from services.sessions.maintenance import (
    MaintenanceReport,
    OwedVacuum,
    RetentionPolicy,
    run_deferred_vacuum,
    run_maintenance,
)
from services.sessions.stats import StorageStats, storage_stats
from services.sessions.store import SessionRow, SessionStore, sqlite_url_for

logger = logging.getLogger(__name__)


def parse_json_object(text: str, *, what: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidArgument(f"{what} is not valid JSON: {exc}", code="invalid_json") from None
    if not isinstance(value, dict):
        raise InvalidArgument(f"{what} must be a JSON object.", code="invalid_json")
    return value


def require(value: str, *, what: str) -> str:
    if not value:
        raise InvalidArgument(f"{what} is required.", code="missing_field")
    return value


class SessionsService:
    """Owns the open ``SessionStore`` and can move it to another data directory.

    It also remembers the VACUUM that maintenance deferred while chats were in flight (one per
    open database; it is forgotten when the store moves, and by a restart, after which the
    next maintenance run decides afresh). Maintenance runs one at a time.
    """

    def __init__(self, *, database_url: str | None, data_dir: pathlib.Path) -> None:
        self._fixed_url = database_url
        self._url = database_url or sqlite_url_for(data_dir)
        self._store: SessionStore | None = None
        self._switch_lock = asyncio.Lock()
        self._maintenance_lock = asyncio.Lock()
        self._owed_vacuum: OwedVacuum | None = None

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            raise RuntimeError("SessionsService.open() was not called")
        return self._store

    async def open(self) -> None:
        store = SessionStore(self._url)
        await store.open()
        self._store = store

    async def close(self) -> None:
        if self._store is not None:
            await self._store.close()
            self._store = None

    async def use_data_dir(self, zotero_data_dir: str) -> tuple[str, bool]:
        """Point the store at ``<zotero_data_dir>/zocrates-data/sessions.db``."""
        if self._fixed_url is not None:
            raise Conflict(
                "This deployment fixes the session database (ZOCRATES_DATABASE_URL); "
                "it cannot move to another data directory.",
                code="data_dir_fixed",
            )
        data_dir = pathlib.Path(zotero_data_dir).expanduser() / DATA_FOLDER_NAME
        url = sqlite_url_for(data_dir)
        async with self._switch_lock:
            if url == self._url and self._store is not None:
                return self.store.location, False
            new_store = SessionStore(url)
            await new_store.open()
            old, self._store, self._url = self._store, new_store, url
            self._owed_vacuum = None  # it was owed by the database left behind
            if old is not None:
                async with old.gate.exclusive():
                    await old.close()
            logger.info("session store moved to %s", new_store.location)
            return new_store.location, True

    # ---- ADK-level ----

    async def create_session(
        self, *, app_name: str, user_id: str, session_id: str, state_json: str
    ) -> Session:
        return await self.store.create_session(
            app_name=require(app_name, what="app_name"),
            user_id=require(user_id, what="user_id"),
            state=parse_json_object(state_json, what="state_json"),
            session_id=session_id or None,
        )

    async def get_session(
        self, *, app_name: str, user_id: str, session_id: str, config_json: str
    ) -> Session:
        config = None
        if config_json:
            try:
                config = GetSessionConfig.model_validate_json(config_json)
            except ValidationError as exc:
                raise InvalidArgument(
                    f"config_json is not a valid GetSessionConfig: {exc.errors()[0]['msg']}",
                    code="invalid_config",
                ) from None
        return await self.store.get_session(
            app_name=require(app_name, what="app_name"),
            user_id=require(user_id, what="user_id"),
            session_id=require(session_id, what="session_id"),
            config=config,
        )

    async def list_sessions(self, *, app_name: str, user_id: str) -> list[Session]:
        return await self.store.list_sessions(
            app_name=require(app_name, what="app_name"), user_id=user_id or None
        )

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        await self.store.delete_session(
            app_name=require(app_name, what="app_name"),
            user_id=require(user_id, what="user_id"),
            session_id=require(session_id, what="session_id"),
        )

    async def append_event(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        last_update_time: float,
        storage_update_marker: str,
        last_event_id: str,
        event_json: str,
    ) -> Session:
        """Append an event against the caller's view of the session; returns that view
        advanced (its ``events`` holds just the appended event)."""
        try:
            event = Event.model_validate_json(require(event_json, what="event_json"))
        except ValidationError as exc:
            raise InvalidArgument(
                f"event_json is not a valid ADK Event: {exc.errors()[0]['msg']}",
                code="invalid_event",
            ) from None
        session = Session(
            id=require(session_id, what="session_id"),
            app_name=require(app_name, what="app_name"),
            user_id=require(user_id, what="user_id"),
            last_update_time=last_update_time,
            events=[Event(id=last_event_id, author="")] if last_event_id else [],
        )
        set_storage_update_marker(session, storage_update_marker or None)
        await self.store.append_event(session, event)
        session.events = session.events[-1:]
        return session

    # ---- UI-level ----

    async def formatted(self, *, app_name: str, user_id: str, session_id: str) -> dict[str, Any]:
        session = await self.store.get_session(
            app_name=app_name, user_id=user_id, session_id=require(session_id, what="session_id")
        )
        row = await self.store.session_row(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        return format_session_for_ui(session, title=row.title, created_at=row.created_at)

    async def prompt_image(
        self, *, app_name: str, user_id: str, session_id: str, sha256: str
    ) -> PromptImage:
        check_digest(sha256)
        session = await self.store.get_session(
            app_name=app_name, user_id=user_id, session_id=require(session_id, what="session_id")
        )
        image = find_prompt_image(session.events, sha256)
        if image is None:
            raise NotFound(
                f"Session {session_id!r} has no image {sha256[:12]}...; it was not sent in this "
                "chat, or the chat was cleaned up. Pin the image again from the reader.",
                code="image_not_found",
            )
        return image

    async def create_chat(self, *, app_name: str, user_id: str, title: str) -> dict[str, Any]:
        session = await self.store.create_session(
            app_name=require(app_name, what="app_name"),
            user_id=require(user_id, what="user_id"),
            title=title,
        )
        return await self.formatted(app_name=app_name, user_id=user_id, session_id=session.id)

    async def rename(
        self, *, app_name: str, user_id: str, session_id: str, title: str
    ) -> dict[str, Any]:
        await self.store.rename(
            app_name=app_name,
            user_id=user_id,
            session_id=require(session_id, what="session_id"),
            title=title,
        )
        return await self.formatted(app_name=app_name, user_id=user_id, session_id=session_id)

    async def manifests(self, *, app_name: str, user_id: str) -> list[SessionRow]:
        return await self.store.session_rows(
            app_name=require(app_name, what="app_name"), user_id=user_id or None
        )

    async def storage_stats(self) -> StorageStats:
        return await storage_stats(self.store)

    async def maintenance(
        self,
        *,
        app_name: str,
        active_session_ids: list[str],
        retention_days: int,
        max_saved_sessions: int,
        reason: str,
    ) -> MaintenanceReport:
        if retention_days < 0 or max_saved_sessions < 0:
            raise InvalidArgument(
                "retention_days and max_saved_sessions must be >= 0 (0 disables a pass).",
                code="invalid_policy",
            )
        async with self._maintenance_lock:
            store = self.store
            report = await run_maintenance(
                store,
                app_name=require(app_name, what="app_name"),
                policy=RetentionPolicy(
                    retention_days=retention_days or None,
                    max_saved_sessions=max_saved_sessions or None,
                ),
                active_session_ids=active_session_ids,
                reason=reason or "on_demand",
                owed=self._owed_vacuum,
            )
            if store is self._store:
                self._owed_vacuum = report.owed
            metrics.record_maintenance("retention", report)
            return report

    @property
    def owed_vacuum(self) -> OwedVacuum | None:
        """The VACUUM maintenance deferred while chats were in flight, if still owed."""
        return self._owed_vacuum

    async def deferred_vacuum(self, *, active_session_ids: list[str]) -> MaintenanceReport:
        """Pay the deferred VACUUM (if any) now that no chat runs; see ``run_deferred_vacuum``."""
        async with self._maintenance_lock:
            store = self.store
            report = await run_deferred_vacuum(
                store, owed=self._owed_vacuum, active_session_ids=active_session_ids
            )
            if store is self._store:
                self._owed_vacuum = report.owed
            metrics.record_maintenance("deferred_vacuum", report)
            return report
