"""gRPC servicer: translates sessions.v1 protos to ``SessionsService`` calls and back."""

from __future__ import annotations

import json

import grpc
from zocrates.common.v1.session_ref_pb2 import SessionRef
from zocrates.sessions.v1 import sessions_pb2 as pb
from zocrates.sessions.v1 import sessions_pb2_grpc as pb_grpc

from services.common.adk.internals import storage_update_marker
from services.sessions.maintenance import MaintenanceReport
from services.sessions.service import SessionsService


def _formatted(value: dict[str, object]) -> pb.FormattedSessionReply:
    return pb.FormattedSessionReply(session_json=json.dumps(value, ensure_ascii=False))


def _report(r: MaintenanceReport) -> pb.MaintenanceReport:
    return pb.MaintenanceReport(
        deleted_empty=r.deleted_empty,
        deleted_expired=r.deleted_expired,
        deleted_over_cap=r.deleted_over_cap,
        deleted_ids=r.deleted_ids,
        vacuumed=r.vacuumed,
        vacuum_skipped_reason=r.vacuum_skipped_reason,
        size_before=r.size_before,
        size_after=r.size_after,
        duration_ms=r.duration_ms,
        skipped_active=r.skipped_active,
    )


class SessionServicer(pb_grpc.SessionServiceServicer):
    def __init__(self, service: SessionsService) -> None:
        self._svc = service

    # ---- ADK-level ----

    async def CreateSession(
        self, request: pb.CreateSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.SessionReply:
        session = await self._svc.create_session(
            app_name=request.app_name,
            user_id=request.user_id,
            session_id=request.session_id,
            state_json=request.state_json,
        )
        return pb.SessionReply(
            session_json=session.model_dump_json(),
            storage_update_marker=storage_update_marker(session) or "",
        )

    async def GetSession(
        self, request: pb.GetSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.SessionReply:
        session = await self._svc.get_session(
            app_name=request.ref.app_name,
            user_id=request.ref.user_id,
            session_id=request.ref.session_id,
            config_json=request.config_json,
        )
        return pb.SessionReply(
            session_json=session.model_dump_json(),
            storage_update_marker=storage_update_marker(session) or "",
        )

    async def ListSessions(
        self, request: pb.ListSessionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListSessionsReply:
        sessions = await self._svc.list_sessions(app_name=request.app_name, user_id=request.user_id)
        return pb.ListSessionsReply(session_json=[s.model_dump_json() for s in sessions])

    async def DeleteSession(
        self, request: pb.DeleteSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteSessionReply:
        await self._svc.delete_session(
            app_name=request.ref.app_name,
            user_id=request.ref.user_id,
            session_id=request.ref.session_id,
        )
        return pb.DeleteSessionReply()

    async def AppendEvent(
        self, request: pb.AppendEventRequest, context: grpc.aio.ServicerContext
    ) -> pb.AppendEventReply:
        session = await self._svc.append_event(
            app_name=request.ref.app_name,
            user_id=request.ref.user_id,
            session_id=request.ref.session_id,
            last_update_time=request.last_update_time,
            storage_update_marker=request.storage_update_marker,
            last_event_id=request.last_event_id,
            event_json=request.event_json,
        )
        return pb.AppendEventReply(
            event_json=session.events[-1].model_dump_json() if session.events else "",
            last_update_time=session.last_update_time,
            storage_update_marker=storage_update_marker(session) or "",
        )

    # ---- UI-level ----

    async def CreateChat(
        self, request: pb.CreateChatRequest, context: grpc.aio.ServicerContext
    ) -> pb.FormattedSessionReply:
        return _formatted(
            await self._svc.create_chat(
                app_name=request.app_name, user_id=request.user_id, title=request.title
            )
        )

    async def GetFormattedSession(
        self, request: SessionRef, context: grpc.aio.ServicerContext
    ) -> pb.FormattedSessionReply:
        return _formatted(
            await self._svc.formatted(
                app_name=request.app_name, user_id=request.user_id, session_id=request.session_id
            )
        )

    async def ListManifests(
        self, request: pb.ListManifestsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListManifestsReply:
        rows = await self._svc.manifests(app_name=request.app_name, user_id=request.user_id)
        return pb.ListManifestsReply(
            sessions=[
                pb.SessionManifest(
                    id=r.id,
                    title=r.title,
                    created_at=r.created_at,
                    updated_at=r.updated_at,
                    event_count=r.event_count,
                )
                for r in rows
            ]
        )

    async def RenameSession(
        self, request: pb.RenameSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.FormattedSessionReply:
        return _formatted(
            await self._svc.rename(
                app_name=request.ref.app_name,
                user_id=request.ref.user_id,
                session_id=request.ref.session_id,
                title=request.title,
            )
        )

    async def GetPromptImage(
        self, request: pb.GetPromptImageRequest, context: grpc.aio.ServicerContext
    ) -> pb.PromptImage:
        image = await self._svc.prompt_image(
            app_name=request.ref.app_name,
            user_id=request.ref.user_id,
            session_id=request.ref.session_id,
            sha256=request.sha256,
        )
        return pb.PromptImage(mime_type=image.mime_type, data=image.data)

    async def GetStorageStats(
        self, request: pb.GetStorageStatsRequest, context: grpc.aio.ServicerContext
    ) -> pb.StorageStats:
        s = await self._svc.storage_stats()
        return pb.StorageStats(
            backend=s.backend,
            location=s.location,
            size_bytes=s.size_bytes,
            page_count=s.page_count,
            page_size=s.page_size,
            freelist_count=s.freelist_count,
            session_count=s.session_count,
            event_count=s.event_count,
        )

    async def RunMaintenance(
        self, request: pb.RunMaintenanceRequest, context: grpc.aio.ServicerContext
    ) -> pb.MaintenanceReport:
        r = await self._svc.maintenance(
            app_name=request.app_name,
            active_session_ids=list(request.active_session_ids),
            retention_days=request.retention_days,
            max_saved_sessions=request.max_saved_sessions,
            reason=request.reason,
        )
        return _report(r)

    async def GetOwedVacuum(
        self, request: pb.GetOwedVacuumRequest, context: grpc.aio.ServicerContext
    ) -> pb.OwedVacuum:
        owed = self._svc.owed_vacuum
        if owed is None:
            return pb.OwedVacuum(owed=False)
        return pb.OwedVacuum(owed=True, deleted=owed.deleted, since=owed.since)

    async def RunDeferredVacuum(
        self, request: pb.RunDeferredVacuumRequest, context: grpc.aio.ServicerContext
    ) -> pb.MaintenanceReport:
        r = await self._svc.deferred_vacuum(active_session_ids=list(request.active_session_ids))
        return _report(r)

    async def UseDataDir(
        self, request: pb.UseDataDirRequest, context: grpc.aio.ServicerContext
    ) -> pb.UseDataDirReply:
        location, changed = await self._svc.use_data_dir(request.zotero_data_dir)
        return pb.UseDataDirReply(location=location, changed=changed)
