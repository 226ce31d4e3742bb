"""Typed client of the sessions service's UI-level RPCs (used by the gateway).

Failed RPCs surface as the domain errors of ``services.common.errors``; an unreachable service
becomes ``Unavailable`` with code ``sessions_unavailable``.
"""

from __future__ import annotations

import json
from typing import Any

from zocrates.common.v1.session_ref_pb2 import SessionRef
from zocrates.sessions.v1 import sessions_pb2 as pb
from zocrates.sessions.v1 import sessions_pb2_grpc as pb_grpc

from services.common.grpc_client import ServiceClient


class SessionsClient(ServiceClient):
    peer = "sessions"

    def __init__(self, address: str, *, app_name: str, user_id: str, timeout: float = 10.0) -> None:
        super().__init__(address, timeout=timeout)
        self.app_name = app_name
        self.user_id = user_id
        self.stub = pb_grpc.SessionServiceStub(self.channel)

    def _ref(self, session_id: str) -> SessionRef:
        return SessionRef(app_name=self.app_name, user_id=self.user_id, session_id=session_id)

    async def create_chat(self, *, title: str) -> dict[str, Any]:
        reply = await self.call(
            self.stub.CreateChat,
            pb.CreateChatRequest(app_name=self.app_name, user_id=self.user_id, title=title),
        )
        return dict(json.loads(reply.session_json))

    async def get_formatted(self, session_id: str) -> dict[str, Any]:
        reply = await self.call(self.stub.GetFormattedSession, self._ref(session_id))
        return dict(json.loads(reply.session_json))

    async def list_manifests(self) -> list[dict[str, Any]]:
        reply = await self.call(
            self.stub.ListManifests,
            pb.ListManifestsRequest(app_name=self.app_name, user_id=self.user_id),
        )
        return [
            {
                "id": m.id,
                "title": m.title,
                "created_at": m.created_at,
                "updated_at": m.updated_at,
                "event_count": m.event_count,
            }
            for m in reply.sessions
        ]

    async def rename(self, session_id: str, *, title: str) -> dict[str, Any]:
        reply = await self.call(
            self.stub.RenameSession, pb.RenameSessionRequest(ref=self._ref(session_id), title=title)
        )
        return dict(json.loads(reply.session_json))

    async def prompt_image(self, session_id: str, *, sha256: str) -> tuple[str, bytes]:
        """An image a prompt of the session carried: ``(mime_type, bytes)``."""
        reply = await self.call(
            self.stub.GetPromptImage,
            pb.GetPromptImageRequest(ref=self._ref(session_id), sha256=sha256),
        )
        return reply.mime_type, bytes(reply.data)

    async def delete(self, session_id: str) -> None:
        await self.call(self.stub.DeleteSession, pb.DeleteSessionRequest(ref=self._ref(session_id)))

    async def storage_stats(self) -> dict[str, Any]:
        s = await self.call(self.stub.GetStorageStats, pb.GetStorageStatsRequest())
        return {
            "backend": s.backend,
            "location": s.location,
            "size_bytes": s.size_bytes,
            "page_count": s.page_count,
            "page_size": s.page_size,
            "freelist_count": s.freelist_count,
            "freelist_ratio": (s.freelist_count / s.page_count) if s.page_count else 0.0,
            "session_count": s.session_count,
            "event_count": s.event_count,
        }

    async def run_maintenance(
        self,
        *,
        active_session_ids: set[str],
        retention_days: int | None,
        max_saved_sessions: int | None,
        reason: str,
        timeout: float = 600.0,
    ) -> dict[str, Any]:
        r = await self.call(
            self.stub.RunMaintenance,
            pb.RunMaintenanceRequest(
                app_name=self.app_name,
                active_session_ids=sorted(active_session_ids),
                retention_days=retention_days or 0,
                max_saved_sessions=max_saved_sessions or 0,
                reason=reason,
            ),
            timeout=timeout,
        )
        return _report(r)

    async def vacuum_owed(self) -> bool:
        """Whether maintenance deferred a VACUUM (chats were in flight) that is still owed."""
        reply = await self.call(self.stub.GetOwedVacuum, pb.GetOwedVacuumRequest())
        return bool(reply.owed)

    async def run_deferred_vacuum(
        self, *, active_session_ids: set[str], timeout: float = 600.0
    ) -> dict[str, Any]:
        """Run the deferred VACUUM under maintenance's rules (the report of RunMaintenance,
        without deletions); deferred again if ``active_session_ids`` is not empty."""
        r = await self.call(
            self.stub.RunDeferredVacuum,
            pb.RunDeferredVacuumRequest(active_session_ids=sorted(active_session_ids)),
            timeout=timeout,
        )
        return _report(r)

    async def use_data_dir(self, zotero_data_dir: str) -> tuple[str, bool]:
        reply = await self.call(
            self.stub.UseDataDir, pb.UseDataDirRequest(zotero_data_dir=zotero_data_dir)
        )
        return reply.location, reply.changed


def _report(r: pb.MaintenanceReport) -> dict[str, Any]:
    return {
        "deleted_empty": r.deleted_empty,
        "deleted_expired": r.deleted_expired,
        "deleted_over_cap": r.deleted_over_cap,
        "deleted": r.deleted_empty + r.deleted_expired + r.deleted_over_cap,
        "deleted_ids": list(r.deleted_ids),
        "skipped_active": r.skipped_active,
        "vacuumed": r.vacuumed,
        "vacuum_skipped_reason": r.vacuum_skipped_reason or None,
        "size_before": r.size_before,
        "size_after": r.size_after,
        "duration_ms": round(r.duration_ms, 2),
    }
